"""The protobuf body decoder, on bodies encoded here by hand from the field numbers of
``k8s.io/api`` (kube-api-surface.md, Appendix B), independently of the decoder's tables."""

from __future__ import annotations

import base64
import struct

import pytest

from pyocm.kube.protobuf import UnsupportedKind, decode_body
from pyocm.kube.protobuf.wire import WireError
from tests.protowire import body, entry, ld, m, s, tag, time, v

T2026 = 1767225600  # 2026-01-01T00:00:00Z
EMPTY_META = m(1, s(1, ""), m(8))  # gogo writes zero fields: an empty name and time


def meta(name: str, *more: bytes) -> bytes:
    return m(1, s(1, name), s(3, ""), v(7, 0), m(8), *more)


def test_object_meta_and_zero_values() -> None:
    got = decode_body(
        body(
            "v1",
            "ConfigMap",
            meta(
                "cm",
                entry(11, "app", s(2, "x")),
                entry(12, "note", s(2, "")),
                m(13, s(1, "Owner"), s(3, "o"), s(4, "uid-1"), s(5, "v1"), v(6, 1), v(7, 0)),
                s(14, "example.com/f"),
                time(8, T2026),
                time(9, T2026 + 60),
                v(10, 0),
            ),
            entry(2, "a", s(2, "1")),
            entry(3, "bin", ld(2, b"\x00\x01")),
            v(4, 0),
        )
    )
    assert got == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "cm",
            "labels": {"app": "x"},
            "annotations": {"note": ""},
            "ownerReferences": [
                {
                    "kind": "Owner",
                    "name": "o",
                    "uid": "uid-1",
                    "apiVersion": "v1",
                    "controller": True,
                    "blockOwnerDeletion": False,
                }
            ],
            "finalizers": ["example.com/f"],
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "deletionTimestamp": "2026-01-01T00:01:00Z",
            "deletionGracePeriodSeconds": 0,
        },
        "data": {"a": "1"},
        "binaryData": {"bin": "AAE="},
        "immutable": False,
    }


def test_csr_create_approval_and_status() -> None:
    request = b"-----BEGIN CERTIFICATE REQUEST-----"
    got = decode_body(
        body(
            "certificates.k8s.io/v1",
            "CertificateSigningRequest",
            meta("c1-abc", entry(11, "open-cluster-management.io/cluster-name", s(2, "c1"))),
            m(
                2,
                ld(1, request),
                s(2, ""),
                s(3, ""),
                s(5, "client auth"),
                s(5, "digital signature"),
                entry(6, "k", m(2, s(1, "a"), s(1, "b"))),
                s(7, "kubernetes.io/kube-apiserver-client"),
                v(8, 3600),
            ),
            m(
                3,
                m(
                    1,
                    s(1, "Approved"),
                    s(2, "AutoApproved"),
                    s(3, "ok"),
                    time(4, 0),
                    time(5, T2026),
                    s(6, "True"),
                ),
                ld(2, b""),
            ),
        )
    )
    spec = got["spec"]
    assert base64.b64decode(spec["request"]) == request
    assert spec["usages"] == ["client auth", "digital signature"]
    assert spec["extra"] == {"k": ["a", "b"]}
    assert spec["signerName"] == "kubernetes.io/kube-apiserver-client"
    assert spec["expirationSeconds"] == 3600
    assert "username" not in spec, "empty strings are omitted"
    assert got["status"] == {
        "conditions": [
            {
                "type": "Approved",
                "reason": "AutoApproved",
                "message": "ok",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
                "status": "True",
            }
        ]
    }
    assert got["metadata"]["labels"] == {"open-cluster-management.io/cluster-name": "c1"}


def test_access_reviews() -> None:
    attributes = m(
        1,
        s(1, "ns"),
        s(2, "create"),
        s(3, "cluster.open-cluster-management.io"),
        s(4, ""),
        s(5, "managedclustersets"),
        s(6, "join"),
        s(7, "dev"),
        m(9, s(1, "a=b")),
    )
    sar = decode_body(
        body(
            "authorization.k8s.io/v1",
            "SubjectAccessReview",
            EMPTY_META,
            m(
                2,
                attributes,
                s(3, "alice"),
                s(4, "g1"),
                s(4, "g2"),
                entry(5, "scopes", m(2, s(1, "x"))),
                s(6, "u-1"),
            ),
            m(3, v(1, 0), s(2, ""), s(3, ""), v(4, 0)),
        )
    )
    assert sar["spec"] == {
        "resourceAttributes": {
            "namespace": "ns",
            "verb": "create",
            "group": "cluster.open-cluster-management.io",
            "resource": "managedclustersets",
            "subresource": "join",
            "name": "dev",
            "labelSelector": {"rawSelector": "a=b"},
        },
        "user": "alice",
        "groups": ["g1", "g2"],
        "extra": {"scopes": ["x"]},
        "uid": "u-1",
    }
    assert "metadata" not in sar and "status" not in sar, "empty messages are omitted"
    ssar = decode_body(
        body(
            "authorization.k8s.io/v1",
            "SelfSubjectAccessReview",
            EMPTY_META,
            m(2, m(2, s(1, "/healthz"), s(2, "get"))),
        )
    )
    assert ssar["spec"] == {"nonResourceAttributes": {"path": "/healthz", "verb": "get"}}
    rules = decode_body(
        body("authorization.k8s.io/v1", "SelfSubjectRulesReview", EMPTY_META, m(2, s(1, "default")))
    )
    assert rules["spec"] == {"namespace": "default"}


def test_token_request_review_and_self_review() -> None:
    token = decode_body(
        body(
            "authentication.k8s.io/v1",
            "TokenRequest",
            EMPTY_META,
            m(
                2,
                s(1, "https://hub"),
                m(3, s(1, "Secret"), s(2, "v1"), s(3, "s"), s(4, "uid-9")),
                v(4, 3600),
            ),
        )
    )
    assert token["spec"] == {
        "audiences": ["https://hub"],
        "boundObjectRef": {"kind": "Secret", "apiVersion": "v1", "name": "s", "uid": "uid-9"},
        "expirationSeconds": 3600,
    }
    review = decode_body(
        body(
            "authentication.k8s.io/v1",
            "TokenReview",
            EMPTY_META,
            m(2, s(1, "abc.def"), s(2, "aud")),
        )
    )
    assert review["spec"] == {"token": "abc.def", "audiences": ["aud"]}
    assert decode_body(body("authentication.k8s.io/v1", "SelfSubjectReview", EMPTY_META)) == {
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "SelfSubjectReview",
    }


def test_lease_keeps_set_pointer_fields() -> None:
    got = decode_body(
        body(
            "coordination.k8s.io/v1",
            "Lease",
            meta("managed-cluster-lease", s(3, "c1")),
            m(2, s(1, ""), v(2, 60), m(4, v(1, T2026), v(2, 123_456_000)), v(5, 0)),
        )
    )
    assert got["metadata"] == {"name": "managed-cluster-lease", "namespace": "c1"}
    assert got["spec"] == {
        "holderIdentity": "",
        "leaseDurationSeconds": 60,
        "renewTime": "2026-01-01T00:00:00.123456Z",
        "leaseTransitions": 0,
    }


def test_rbac_kinds() -> None:
    rule = m(2, s(1, "get"), s(2, ""), s(3, "configmaps"), s(4, "cm"))
    role = decode_body(
        body(
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            meta("r"),
            rule,
            m(3, m(1, entry(1, "rbac.example.com/aggregate", s(2, "true")))),
        )
    )
    assert role["rules"] == [
        {"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["cm"]}
    ]
    assert role["aggregationRule"] == {
        "clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/aggregate": "true"}}]
    }
    binding = decode_body(
        body(
            "rbac.authorization.k8s.io/v1",
            "RoleBinding",
            meta("b", s(3, "ns")),
            m(2, s(1, "ServiceAccount"), s(2, ""), s(3, "sa"), s(4, "ns")),
            m(3, s(1, "rbac.authorization.k8s.io"), s(2, "Role"), s(3, "r")),
        )
    )
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "r",
    }
    plain_role = decode_body(body("rbac.authorization.k8s.io/v1", "Role", meta("r2"), rule))
    assert plain_role["rules"][0]["resources"] == ["configmaps"]
    crb = decode_body(
        body(
            "rbac.authorization.k8s.io/v1",
            "ClusterRoleBinding",
            meta("crb"),
            m(2, s(1, "Group"), s(2, "rbac.authorization.k8s.io"), s(3, "system:masters")),
            m(3, s(1, "rbac.authorization.k8s.io"), s(2, "ClusterRole"), s(3, "cluster-admin")),
        )
    )
    assert crb["subjects"][0]["name"] == "system:masters"


def test_core_kinds() -> None:
    secret = decode_body(
        body(
            "v1",
            "Secret",
            meta("s"),
            entry(2, "tls.key", ld(2, b"\xff")),
            entry(4, "plain", s(2, "p")),
            s(3, "Opaque"),
            v(5, 1),
        )
    )
    assert secret["data"] == {"tls.key": "/w=="}
    assert secret["stringData"] == {"plain": "p"}
    assert (secret["type"], secret["immutable"]) == ("Opaque", True)
    namespace = decode_body(
        body("v1", "Namespace", meta("c1"), m(2, s(1, "kubernetes")), m(3, s(1, "Active")))
    )
    assert namespace["spec"] == {"finalizers": ["kubernetes"]}
    assert namespace["status"] == {"phase": "Active"}
    account = decode_body(
        body(
            "v1",
            "ServiceAccount",
            meta("sa", s(3, "ns")),
            m(2, s(3, "token-x")),
            m(3, s(1, "pull")),
            v(4, 0),
        )
    )
    assert account["secrets"] == [{"name": "token-x"}]
    assert account["imagePullSecrets"] == [{"name": "pull"}]
    assert account["automountServiceAccountToken"] is False


def test_both_event_groups() -> None:
    involved = m(
        2,
        s(1, "ManagedCluster"),
        s(3, "c1"),
        s(4, "uid-1"),
        s(5, "cluster.open-cluster-management.io/v1"),
    )
    core = decode_body(
        body(
            "v1",
            "Event",
            meta("c1.123", s(3, "default")),
            involved,
            s(3, "Available"),
            s(4, "cluster is available"),
            m(5, s(1, "registration-controller")),
            time(6, T2026),
            time(7, T2026),
            v(8, 2),
            s(9, "Normal"),
            m(10),
            s(14, "registration-controller"),
        )
    )
    assert core["involvedObject"]["name"] == "c1"
    assert core["source"] == {"component": "registration-controller"}
    assert (core["count"], core["lastTimestamp"]) == (2, "2026-01-01T00:00:00Z")
    assert "eventTime" not in core, "a zero MicroTime is absent"
    modern = decode_body(
        body(
            "events.k8s.io/v1",
            "Event",
            meta("c1.456", s(3, "default")),
            m(2, v(1, T2026), v(2, 5000)),
            m(3, v(1, 3), m(2, v(1, T2026))),
            s(4, "ctrl"),
            s(5, "ctrl-1"),
            s(6, "Reconcile"),
            s(7, "Accepted"),
            m(8, s(1, "ManagedCluster"), s(3, "c1")),
            s(10, "accepted"),
            s(11, "Normal"),
            m(12),
            time(13, 0),
            v(15, 0),
        )
    )
    assert modern["eventTime"] == "2026-01-01T00:00:00.000005Z"
    assert modern["series"] == {"count": 3, "lastObservedTime": "2026-01-01T00:00:00.000000Z"}
    assert modern["regarding"] == {"kind": "ManagedCluster", "name": "c1"}
    assert (modern["note"], modern["reportingController"]) == ("accepted", "ctrl")
    assert "deprecatedSource" not in modern and "deprecatedCount" not in modern


def test_delete_options_with_any_group() -> None:
    got = decode_body(
        body(
            "cluster.open-cluster-management.io/v1",
            "DeleteOptions",
            v(1, 0),
            m(2, s(1, "uid-1"), s(2, "42")),
            s(4, "Foreground"),
            s(5, "All"),
        )
    )
    assert got == {
        "apiVersion": "cluster.open-cluster-management.io/v1",
        "kind": "DeleteOptions",
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": "uid-1", "resourceVersion": "42"},
        "propagationPolicy": "Foreground",
        "dryRun": ["All"],
    }


def test_managed_fields_carry_raw_json_and_negative_numbers_decode() -> None:
    fields_v1 = m(7, ld(1, b'{"f:metadata":{}}'))
    got = decode_body(
        body(
            "v1",
            "ConfigMap",
            meta("cm", m(17, s(1, "kubectl"), s(2, "Apply"), fields_v1), v(7, -1)),
        )
    )
    assert got["metadata"]["managedFields"] == [
        {"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:metadata": {}}}
    ]
    assert got["metadata"]["generation"] == -1


def test_unknown_fields_are_skipped() -> None:
    got = decode_body(body("v1", "ConfigMap", meta("cm"), s(99, "from the future"), v(98, 7)))
    assert got["metadata"] == {"name": "cm"}


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (b'{"kind": "ConfigMap"}', "does not start with the Kubernetes protobuf prefix"),
        (b"k8s\x00" + b"\x0a\x05\x0a", "runs past the end"),
        (b"k8s\x00" + b"\x08\xff", "truncated varint"),
        (b"k8s\x00" + b"\x0b", "unsupported wire type 3"),
        (body("v1", ""), "names no kind"),
        (
            body("v1", "ConfigMap", m(1, v(1, 5))),
            "ObjectMeta.name: wire type 0 does not fit a string",
        ),
        (body("v1", "ConfigMap", m(1, ld(1, b"\xff\xfe"))), "not valid UTF-8"),
        (
            body("v1", "ConfigMap", meta("x", m(17, m(7, ld(1, b"{nope"))))),
            "embedded JSON is not valid",
        ),
        (
            b"k8s\x00" + m(1, s(1, "v1"), s(2, "ConfigMap")) + s(3, "gzip"),
            "content encoding 'gzip'",
        ),
    ],
)
def test_corrupt_bodies_are_refused_with_a_reason(raw: bytes, words: str) -> None:
    with pytest.raises(WireError) as caught:
        decode_body(raw)
    assert words in str(caught.value)


def test_kinds_without_a_table_are_named() -> None:
    with pytest.raises(UnsupportedKind) as caught:
        decode_body(body("apps/v1", "Deployment", meta("d")))
    assert str(caught.value) == "protobuf bodies of apps/v1 Deployment are not supported; send JSON"


def test_node() -> None:
    got = decode_body(
        body(
            "v1",
            "Node",
            meta("n1", entry(11, "node-role.kubernetes.io/control-plane", s(2, ""))),
            m(
                2,
                s(1, "10.0.0.0/24"),
                s(3, "kind://n1"),
                v(4, 1),
                m(5, s(1, "k"), s(2, ""), s(3, "NoSchedule")),
                s(7, "10.0.0.0/24"),
            ),
            m(
                3,
                entry(1, "cpu", m(2, s(1, "8"))),
                entry(2, "memory", m(2, s(1, "31Gi"))),
                m(
                    4,
                    s(1, "Ready"),
                    s(2, "True"),
                    time(3, T2026),
                    time(4, T2026),
                    s(5, "KubeletReady"),
                    s(6, "ok"),
                ),
                m(5, s(1, "InternalIP"), s(2, "10.0.0.5")),
                m(6, m(1, v(1, 10250))),
                m(7, s(7, "v1.30.0"), s(9, "linux"), s(10, "amd64")),
                m(8, s(1, "registry/app:1"), v(2, 1024)),
                s(9, "vol-a"),
                m(10, s(1, "vol-a"), s(2, "/dev/sdb")),
                m(12, s(1, "runc"), m(2, v(1, 1), v(2, 0))),
                m(13, v(1, 1)),
                s(99, "a field newer than the table"),
            ),
        )
    )
    assert got["spec"] == {
        "podCIDR": "10.0.0.0/24",
        "providerID": "kind://n1",
        "unschedulable": True,
        "taints": [{"key": "k", "effect": "NoSchedule"}],
        "podCIDRs": ["10.0.0.0/24"],
    }
    status = got["status"]
    assert status["capacity"] == {"cpu": "8"} and status["allocatable"] == {"memory": "31Gi"}
    assert status["conditions"][0]["lastHeartbeatTime"] == "2026-01-01T00:00:00Z"
    assert status["addresses"] == [{"type": "InternalIP", "address": "10.0.0.5"}]
    assert status["daemonEndpoints"] == {"kubeletEndpoint": {"Port": 10250}}
    assert status["nodeInfo"] == {
        "kubeletVersion": "v1.30.0",
        "operatingSystem": "linux",
        "architecture": "amd64",
    }
    assert status["images"] == [{"names": ["registry/app:1"], "sizeBytes": 1024}]
    assert status["volumesInUse"] == ["vol-a"]
    assert status["volumesAttached"] == [{"name": "vol-a", "devicePath": "/dev/sdb"}]
    assert status["runtimeHandlers"] == [
        {"name": "runc", "features": {"recursiveReadOnlyMounts": True, "userNamespaces": False}}
    ], "set pointer booleans keep false"
    assert status["features"] == {"supplementalGroupsPolicy": True}


def test_custom_resource_definition() -> None:
    def props(*parts: bytes) -> bytes:
        return b"".join(parts)

    size = props(s(5, "integer"), tag(9, 1) + struct.pack("<d", 10.0), v(13, 3))
    name_schema = props(
        s(5, "string"), s(15, "^[a-z]+$"), m(20, ld(1, b'"a"')), m(20, ld(1, b'"b"'))
    )
    items = m(24, m(1, props(s(5, "object"), entry(29, "name", m(2, name_schema)))))
    spec_schema = props(
        s(5, "object"),
        entry(29, "size", m(2, size)),
        entry(29, "tags", m(2, props(s(5, "array"), items, s(42, "map"), s(41, "name")))),
        m(30, v(1, 0)),
        m(8, ld(1, b'{"size":1}')),
        v(38, 1),
        m(44, s(1, "self.size < 100"), s(2, "too big"), s(5, ".size")),
    )
    root = props(s(5, "object"), entry(29, "spec", m(2, spec_schema)))
    version = m(
        7,
        s(1, "v1"),
        v(2, 1),
        v(3, 1),
        v(7, 0),
        m(4, m(1, root)),
        m(5, m(1), m(2, s(1, ".spec.replicas"), s(2, ".status.replicas"))),
        m(6, s(1, "Size"), s(2, "integer"), s(3, ""), s(4, ""), v(5, 1), s(6, ".spec.size")),
    )
    got = decode_body(
        body(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            meta("widgets.example.com"),
            m(
                2,
                s(1, "example.com"),
                m(
                    3,
                    s(1, "widgets"),
                    s(2, "widget"),
                    s(3, "wd"),
                    s(4, "Widget"),
                    s(5, "WidgetList"),
                ),
                s(4, "Namespaced"),
                version,
                m(9, s(1, "None")),
                v(10, 0),
            ),
            m(3, m(2, s(1, ""))),
        )
    )
    spec = got["spec"]
    assert spec["names"] == {
        "plural": "widgets",
        "singular": "widget",
        "shortNames": ["wd"],
        "kind": "Widget",
        "listKind": "WidgetList",
    }
    assert spec["conversion"] == {"strategy": "None"}
    (served,) = spec["versions"]
    assert (served["name"], served["served"], served["storage"]) == ("v1", True, True)
    assert served["subresources"] == {
        "status": {},
        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
    }, "an empty status subresource is kept: it turns the subresource on"
    assert served["additionalPrinterColumns"] == [
        {"name": "Size", "type": "integer", "priority": 1, "jsonPath": ".spec.size"}
    ]
    widget = served["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert widget["properties"]["size"] == {"type": "integer", "maximum": 10.0, "maxLength": 3}
    tags = widget["properties"]["tags"]
    assert tags["x-kubernetes-list-type"] == "map" and tags["x-kubernetes-list-map-keys"] == [
        "name"
    ]
    assert tags["items"]["properties"]["name"] == {
        "type": "string",
        "pattern": "^[a-z]+$",
        "enum": ["a", "b"],
    }
    assert widget["additionalProperties"] is False
    assert widget["default"] == {"size": 1}
    assert widget["x-kubernetes-preserve-unknown-fields"] is True
    assert widget["x-kubernetes-validations"] == [
        {"rule": "self.size < 100", "message": "too big", "fieldPath": ".size"}
    ]
