"""The admission rules as plain functions: what they ask the seams, what they answer,
and the AdmissionReview answers built from them (v1 and v1beta1, patches, denials)."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import jsonpatch as reference
import orjson
import pytest

from pyocm.hooks import admission, cluster, webhooks
from pyocm.hooks.request import Config, Denial, Operation, Request, Seams, UserInfo
from pyocm.kube import status

Obj = dict[str, Any]
SET_LABEL = cluster.CLUSTER_SET_LABEL
ALICE = UserInfo(name="alice", uid="u-1", groups=("team",), extra={"scope": ("a", "b")})


@dataclass
class FakeAuthorizer:
    """Grants what ``grants`` lists, as (resource/subresource, name); records each ask."""

    grants: set[tuple[str, str]] = field(default_factory=set)
    asked: list[Obj] = field(default_factory=list)

    async def allowed(self, user: UserInfo, **attributes: str) -> bool:
        self.asked.append({"user": user, **attributes})
        path = f"{attributes['resource']}/{attributes.get('subresource', '')}".rstrip("/")
        return (path, attributes.get("name", "")) in self.grants


@dataclass
class FakeLookup:
    namespaces: dict[str, Obj] = field(default_factory=dict)
    clusters: dict[str, Obj] = field(default_factory=dict)

    async def namespace(self, name: str) -> Obj | None:
        return self.namespaces.get(name)

    async def managed_cluster(self, name: str) -> Obj | None:
        return self.clusters.get(name)


def seams(authorizer: FakeAuthorizer | None = None, lookup: FakeLookup | None = None) -> Seams:
    return Seams(authorizer=authorizer or FakeAuthorizer(), lookup=lookup or FakeLookup())


def cluster_request(obj: Obj, old: Obj | None = None, **extra: Any) -> Request:
    operation = Operation.CREATE if old is None else Operation.UPDATE
    return Request(
        operation=operation, group=cluster.GROUP, version="v1", resource="managedclusters",
        user=ALICE, name=obj["metadata"]["name"], obj=obj, old=old, **extra,
    )  # fmt: skip


def managed_cluster(name: str = "c1", **spec: Any) -> Obj:
    return {"metadata": {"name": name}, "spec": spec}


async def denial(call: Any) -> Denial:
    with pytest.raises(Denial) as caught:
        await call
    return caught.value


# --- the rules ------------------------------------------------------------------------


def test_the_mutator_stamps_taints_and_adds_the_default_set_without_changing_its_input() -> None:
    sent = managed_cluster(taints=[{"key": "k", "effect": "NoSelect", "timeAdded": "old"}])
    req = cluster_request(sent)
    out = cluster.mutated_managed_cluster(req, config=Config(), now="2024-01-01T00:00:00Z")
    assert out["spec"]["taints"][0]["timeAdded"] == "2024-01-01T00:00:00Z"
    assert out["spec"]["hubAcceptsClient"] is False
    assert out["metadata"]["labels"] == {SET_LABEL: "default"}
    assert sent["spec"]["taints"][0]["timeAdded"] == "old" and "labels" not in sent["metadata"]
    plain = cluster.mutated_managed_cluster(req, config=Config(default_cluster_set=False))
    assert "labels" not in plain["metadata"]


async def test_a_new_taint_may_not_bring_its_own_time() -> None:
    old = managed_cluster(taints=[])
    new = managed_cluster(taints=[{"key": "a/b", "effect": "NoSelect", "timeAdded": "t"}])
    err = await denial(cluster.mutate_managed_cluster(cluster_request(new, old), Config(), seams()))
    assert err.webhook == cluster.MUTATOR
    assert (err.error.code, err.error.message) == (
        400,
        'It is not allowed to set TimeAdded of Taint "a/b".',
    )


async def test_accepting_asks_a_subject_access_review_for_the_requester() -> None:
    authorizer = FakeAuthorizer()
    req = cluster_request(managed_cluster(hubAcceptsClient=True))
    err = await denial(cluster.validate_managed_cluster(req, Config(), seams(authorizer)))
    assert err.status() == {
        "metadata": {},
        "status": "Failure",
        "message": 'managedclusters/accept.register.open-cluster-management.io "c1" is forbidden: '
        'user "alice" cannot update the HubAcceptsClient field',
        "reason": "Forbidden",
        "code": 403,
        "details": {
            "name": "c1",
            "group": "register.open-cluster-management.io",
            "kind": "managedclusters/accept",
        },
    }
    assert authorizer.asked == [
        {
            "user": ALICE,
            "verb": "update",
            "group": "register.open-cluster-management.io",
            "resource": "managedclusters",
            "subresource": "accept",
            "name": "c1",
        }
    ]
    authorizer.grants |= {("managedclusters/accept", "c1"), ("managedclustersets/join", "default")}
    accepted = cluster_request(
        {
            **managed_cluster(hubAcceptsClient=True),
            "metadata": {"name": "c1", "labels": {SET_LABEL: "default"}},
        }
    )
    await cluster.validate_managed_cluster(accepted, Config(), seams(authorizer))


async def test_a_terminating_namespace_refuses_the_accept_before_any_review() -> None:
    authorizer = FakeAuthorizer()
    lookup = FakeLookup(namespaces={"c1": {"status": {"phase": "Terminating"}}})
    req = cluster_request(managed_cluster(hubAcceptsClient=True))
    err = await denial(cluster.validate_managed_cluster(req, Config(), seams(authorizer, lookup)))
    assert err.error.message.endswith('is forbidden: cluster namespace "c1" is terminating')
    assert authorizer.asked == []


async def test_joining_a_set_names_the_set() -> None:
    obj = {"metadata": {"name": "c1", "labels": {SET_LABEL: "dev"}}, "spec": {}}
    err = await denial(cluster.validate_managed_cluster(cluster_request(obj), Config(), seams()))
    assert err.error.details == {
        "name": "dev",
        "group": cluster.GROUP,
        "kind": "managedclustersets/join",
    }
    assert err.error.message.startswith(
        'managedclustersets/join.cluster.open-cluster-management.io "dev" is forbidden: '
        'user "alice" cannot add/remove a ManagedCluster to/from ManagedClusterSet "dev"'
    )


async def test_a_binding_into_a_cluster_namespace_is_refused() -> None:
    obj = {"metadata": {"name": "s", "namespace": "c1"}, "spec": {"clusterSet": "s"}}
    req = Request(
        operation=Operation.CREATE, group=cluster.GROUP, version="v1beta2",
        resource="managedclustersetbindings", user=ALICE, namespace="c1", name="s", obj=obj,
    )  # fmt: skip
    lookup = FakeLookup(clusters={"c1": {}})
    err = await denial(cluster.validate_cluster_set_binding(req, Config(), seams(lookup=lookup)))
    assert err.webhook == cluster.BINDING_VALIDATOR and err.error.code == 403
    authorizer = FakeAuthorizer(grants={("managedclustersets/bind", "s")})
    await cluster.validate_cluster_set_binding(req, Config(), seams(authorizer))


def test_kube_relays_a_denial_with_the_webhooks_name_and_its_status() -> None:
    denied = Denial("w.example.com", status.forbidden_error(message="no", resource="r", name="n"))
    relayed = denied.relayed()
    assert relayed.message == 'admission webhook "w.example.com" denied the request: no'
    assert (relayed.code, relayed.reason, relayed.details) == (
        403,
        "Forbidden",
        {"name": "n", "kind": "r"},
    )
    quiet = Denial("w", status.ApiError(code=200, reason="", message=""))
    assert quiet.relayed().message == 'admission webhook "w" denied the request without explanation'
    assert quiet.relayed().code == 400


# --- AdmissionReviews -----------------------------------------------------------------


def review(version: str, request: Obj) -> Obj:
    return {
        "apiVersion": f"admission.k8s.io/{version}",
        "kind": "AdmissionReview",
        "request": request,
    }


def cluster_review(version: str, obj: Obj, *, operation: str = "CREATE", **extra: Any) -> Obj:
    return review(version, {
        "uid": "req-1", "operation": operation, "name": obj["metadata"]["name"],
        "resource": {"group": cluster.GROUP, "version": "v1", "resource": "managedclusters"},
        "userInfo": {"username": "alice", "uid": "u-1", "groups": ["team"], "extra": {"scope": ["a", "b"]}},
        "object": obj, **extra,
    })  # fmt: skip


async def test_a_mutating_answer_carries_the_patch_in_the_version_asked() -> None:
    sent = {"metadata": {"name": "c1", "labels": {"env": "x"}}, "spec": {"hubAcceptsClient": True}}
    for version in ("v1", "v1beta1"):
        answer = await admission.answer(
            cluster_review(version, sent), webhooks.MANAGED_CLUSTER_MUTATOR, Config(), seams()
        )
        assert answer["apiVersion"] == f"admission.k8s.io/{version}"
        response = answer["response"]
        assert (response["uid"], response["allowed"], response["patchType"]) == (
            "req-1",
            True,
            "JSONPatch",
        )
        ops = orjson.loads(base64.b64decode(response["patch"]))
        assert ops == [
            {
                "op": "add",
                "path": "/metadata/labels/cluster.open-cluster-management.io~1clusterset",
                "value": "default",
            }
        ]
        assert reference.apply_patch(sent, ops)["metadata"]["labels"][SET_LABEL] == "default"


async def test_a_validating_answer_passes_the_requester_to_the_review_and_denies_with_a_status() -> (
    None
):
    authorizer = FakeAuthorizer()
    document = cluster_review("v1", managed_cluster(hubAcceptsClient=True))
    answer = await admission.answer(
        document, webhooks.MANAGED_CLUSTER_VALIDATOR, Config(), seams(authorizer)
    )
    response = answer["response"]
    assert response["allowed"] is False and response["status"]["code"] == 403
    assert authorizer.asked[0]["user"] == ALICE


async def test_deletes_and_unregistered_resources_are_allowed() -> None:
    document = cluster_review("v1", managed_cluster(), operation="DELETE")
    answer = await admission.answer(document, webhooks.MANAGED_CLUSTER_VALIDATOR, Config(), seams())
    assert answer["response"] == {
        "uid": "req-1",
        "allowed": True,
        "status": {"metadata": {}, "code": 200},
    }


def test_a_body_that_is_no_review_is_refused() -> None:
    documents: list[Any] = [
        {},
        [],
        {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v2"},
        {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1"},
        review("v1", {"operation": "CREATE", "resource": {}}),  # no object to admit
    ]
    for document in documents:
        with pytest.raises(admission.NotAReview):
            admission.parse(document)


def test_the_replica_set_webhook_follows_its_gate() -> None:
    assert webhooks.MANIFEST_WORK_REPLICA_SET_VALIDATOR not in webhooks.enabled(Config())
    assert webhooks.MANIFEST_WORK_REPLICA_SET_VALIDATOR in webhooks.enabled(
        Config(replica_sets=True)
    )
