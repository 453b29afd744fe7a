"""Built-in kinds are stored with the types of their Go structs (issue 17, items 6 and 7).

kube-apiserver decodes every write into the kind's Go struct: a JSON value of the wrong
type is 400 ``<Kind> in version "<v>" cannot be handled as a <Kind>: json: cannot
unmarshal ...`` on create and update, and 422 ``patch: Invalid value`` once a JSON, merge
or strategic patch has been applied. Nothing of the wrong type may reach storage, where
it would break kubectl, typed clients and the hub's own controllers.
"""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.testing import Client

CM = "/api/v1/namespaces/default/configmaps"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


def _cannot_handle(kind: str, version: str, detail: str) -> str:
    return f'{kind} in version "{version}" cannot be handled as a {kind}: json: {detail}'


async def test_configmap_data_of_numbers_is_refused(admin: Client, unique: str) -> None:
    code, body = await admin.post(CM, {"metadata": {"name": unique}, "data": {"k": 1}})
    assert code == 400, body
    assert body["reason"] == "BadRequest"
    assert body["message"] == _cannot_handle(
        "ConfigMap",
        "v1",
        "cannot unmarshal number into Go struct field ConfigMap.data of type string",
    )
    code, _ = await admin.get(f"{CM}/{unique}")
    assert code == 404


async def test_configmap_data_as_a_list_is_400_not_500(admin: Client, unique: str) -> None:
    code, body = await admin.post(CM, {"metadata": {"name": unique}, "data": [1, 2]})
    assert code == 400, body
    assert body["message"] == _cannot_handle(
        "ConfigMap",
        "v1",
        "cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string",
    )


@pytest.mark.parametrize(
    ("patch_type", "patch"),
    [
        ("merge", {"data": {"v": 5}}),
        ("strategic", {"data": {"v": 5}}),
        ("json", [{"op": "add", "path": "/data", "value": {"v": {"nested": "x"}}}]),
    ],
)
async def test_patches_that_break_types_are_refused(
    admin: Client, unique: str, patch_type: str, patch: Any
) -> None:
    code, _ = await admin.post(CM, {"metadata": {"name": unique}, "data": {"k": "1"}})
    assert code == 201
    code, body = await admin.patch(f"{CM}/{unique}", patch, patch_type=patch_type)
    assert code == 422, body
    assert body["reason"] == "Invalid"
    [cause] = body["details"]["causes"]
    assert cause["field"] == "patch"
    assert "json: cannot unmarshal" in cause["message"]
    assert "Go struct field ConfigMap.data of type string" in cause["message"]
    code, stored = await admin.get(f"{CM}/{unique}")
    assert code == 200 and stored["data"] == {"k": "1"}


async def test_apply_of_a_wrong_type_is_refused(admin: Client, unique: str) -> None:
    config = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": unique}}
    code, body = await admin.request(
        "PATCH",
        f"{CM}/{unique}",
        body={**config, "data": {"k": 1}},
        content_type="application/apply-patch+yaml",
        params={"fieldManager": "t"},
    )
    assert code == 400, body
    assert "expected string" in body["message"]
    code, _ = await admin.get(f"{CM}/{unique}")
    assert code == 404


@pytest.mark.parametrize(
    ("spec", "detail"),
    [
        ([1], "cannot unmarshal array into Go struct field Lease.spec of type v1.LeaseSpec"),
        (
            {"leaseDurationSeconds": "x"},
            "cannot unmarshal string into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32",
        ),
        (
            {"holderIdentity": 5},
            "cannot unmarshal number into Go struct field LeaseSpec.spec.holderIdentity of type string",
        ),
        (
            {"leaseDurationSeconds": 1.5},
            "cannot unmarshal number 1.5 into Go struct field LeaseSpec.spec.leaseDurationSeconds of type int32",
        ),
    ],
)
async def test_lease_put_with_wrong_types(
    admin: Client, unique: str, spec: Any, detail: str
) -> None:
    lease = {"metadata": {"name": unique}, "spec": {"holderIdentity": "a"}}
    code, created = await admin.post(LEASES, lease)
    assert code == 201
    bad = {"metadata": created["metadata"], "spec": spec}
    code, body = await admin.put(f"{LEASES}/{unique}", bad)
    assert code == 400, body
    assert body["message"] == _cannot_handle("Lease", "v1", detail)
    code, stored = await admin.get(f"{LEASES}/{unique}")
    assert stored["spec"] == {"holderIdentity": "a"}


async def test_a_well_typed_lease_is_kept(admin: Client, unique: str) -> None:
    spec = {
        "holderIdentity": "agent",
        "leaseDurationSeconds": 60,
        "acquireTime": "2025-01-01T00:00:00.000000Z",
        "renewTime": "2025-01-01T00:00:01.000000Z",
        "leaseTransitions": 0,
    }
    code, created = await admin.post(LEASES, {"metadata": {"name": unique}, "spec": spec})
    assert code == 201, created
    assert created["spec"] == spec


@pytest.mark.parametrize(
    ("meta", "detail"),
    [
        (
            {"labels": {"k": 1}},
            "cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
        ),
        (
            {"annotations": ["a"]},
            "cannot unmarshal array into Go struct field ObjectMeta.metadata.annotations of type map[string]string",
        ),
        (
            {"finalizers": "x"},
            "cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers of type []string",
        ),
        (
            {"ownerReferences": [{"uid": 5}]},
            "cannot unmarshal number into Go struct field OwnerReference.metadata.ownerReferences.uid of type string",
        ),
        (
            {"managedFields": {"a": 1}},
            "cannot unmarshal object into Go struct field ObjectMeta.metadata.managedFields of type []v1.ManagedFieldsEntry",
        ),
    ],
)
async def test_object_meta_of_the_wrong_type(
    admin: Client, unique: str, meta: dict[str, Any], detail: str
) -> None:
    code, body = await admin.post(CM, {"metadata": {"name": unique, **meta}})
    assert code == 400, body
    assert body["message"] == _cannot_handle("ConfigMap", "v1", detail)


async def test_every_builtin_kind_is_type_checked(admin: Client, unique: str) -> None:
    """One wrong type per served kind: none is stored, none is a 500."""
    cases = [
        ("/api/v1/namespaces", {"spec": {"finalizers": "kubernetes"}}),
        ("/api/v1/namespaces/default/secrets", {"type": 5}),
        ("/api/v1/namespaces/default/serviceaccounts", {"secrets": {"name": "x"}}),
        ("/api/v1/nodes", {"spec": {"unschedulable": "yes"}}),
        ("/api/v1/namespaces/default/events", {"count": "many"}),
        ("/apis/events.k8s.io/v1/namespaces/default/events", {"deprecatedCount": "x"}),
        ("/apis/certificates.k8s.io/v1/certificatesigningrequests", {"spec": {"usages": 1}}),
        ("/apis/rbac.authorization.k8s.io/v1/clusterroles", {"rules": [{"verbs": "get"}]}),
        ("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles", {"rules": {}}),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            {"roleRef": {"name": 1}},
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            {"subjects": [{"kind": True}]},
        ),
        (
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            {"spec": {"group": ["x"]}},
        ),
    ]
    for path, body in cases:
        code, answer = await admin.post(path, {"metadata": {"name": unique}, **body})
        assert code == 400, (path, answer)
        assert "json: cannot unmarshal" in answer["message"], (path, answer)
