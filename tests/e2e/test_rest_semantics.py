"""REST semantics of the hub API server, checked on the wire against a real process."""

from __future__ import annotations

import asyncio

from pyocm.testing import Client

CM = "/api/v1/namespaces/default/configmaps"
NS = "/api/v1/namespaces"
MCL = "/apis/cluster.open-cluster-management.io/v1/managedclusters"


def configmap(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def cluster(name: str, **spec: object) -> dict:
    return {"apiVersion": "cluster.open-cluster-management.io/v1", "kind": "ManagedCluster",
            "metadata": {"name": name}, "spec": spec}


async def test_create_sets_server_fields(admin: Client, unique: str) -> None:
    code, obj = await admin.post(CM, configmap(unique, a="1"))
    assert code == 201
    meta = obj["metadata"]
    assert meta["namespace"] == "default"
    assert len(meta["uid"]) == 36
    assert meta["creationTimestamp"].endswith("Z")
    assert int(meta["resourceVersion"]) > 0
    code, again = await admin.get(f"{CM}/{unique}")
    assert code == 200 and again == obj


async def test_create_existing_is_already_exists(admin: Client, unique: str) -> None:
    await admin.post(CM, configmap(unique))
    code, status = await admin.post(CM, configmap(unique))
    assert code == 409
    assert status["reason"] == "AlreadyExists"
    assert status["message"] == f'configmaps "{unique}" already exists'
    assert status["details"] == {"name": unique, "kind": "configmaps"}


async def test_generate_name(admin: Client, unique: str) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": f"{unique}-"}}
    code, obj = await admin.post(CM, body)
    assert code == 201
    assert obj["metadata"]["name"].startswith(f"{unique}-")
    assert len(obj["metadata"]["name"]) == len(unique) + 6


async def test_get_missing_is_not_found(admin: Client) -> None:
    code, status = await admin.get(f"{MCL}/nope-missing")
    assert code == 404
    assert status["reason"] == "NotFound"
    assert status["message"] == 'managedclusters.cluster.open-cluster-management.io "nope-missing" not found'
    assert status["details"]["group"] == "cluster.open-cluster-management.io"


async def test_update_with_stale_resource_version_conflicts(admin: Client, unique: str) -> None:
    _, obj = await admin.post(CM, configmap(unique, a="1"))
    stale = dict(obj)
    obj["data"] = {"a": "2"}
    code, updated = await admin.put(f"{CM}/{unique}", obj)
    assert code == 200 and updated["data"] == {"a": "2"}
    assert int(updated["metadata"]["resourceVersion"]) > int(stale["metadata"]["resourceVersion"])
    stale["data"] = {"a": "3"}
    code, status = await admin.put(f"{CM}/{unique}", stale)
    assert code == 409 and status["reason"] == "Conflict"
    assert "the object has been modified" in status["message"]


async def test_noop_update_keeps_resource_version(admin: Client, unique: str) -> None:
    _, obj = await admin.post(CM, configmap(unique, a="1"))
    code, same = await admin.put(f"{CM}/{unique}", obj)
    assert code == 200
    assert same["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]


async def test_custom_resource_update_requires_resource_version(admin: Client, unique: str) -> None:
    _, obj = await admin.post(MCL, cluster(unique, hubAcceptsClient=False))
    del obj["metadata"]["resourceVersion"]
    code, status = await admin.put(f"{MCL}/{unique}", obj)
    assert code == 422
    assert status["details"]["causes"][0]["field"] == "metadata.resourceVersion"


async def test_custom_resource_defaults_and_generation(admin: Client, unique: str) -> None:
    code, obj = await admin.post(MCL, cluster(unique, hubAcceptsClient=False))
    assert code == 201, obj
    assert obj["spec"]["leaseDurationSeconds"] == 60
    assert obj["metadata"]["generation"] == 1
    code, obj = await admin.patch(f"{MCL}/{unique}", {"spec": {"hubAcceptsClient": True}})
    assert code == 200 and obj["metadata"]["generation"] == 2
    _, obj = await admin.patch(f"{MCL}/{unique}", {"metadata": {"labels": {"a": "b"}}})
    assert obj["metadata"]["generation"] == 2


async def test_status_subresource_split(admin: Client, unique: str) -> None:
    await admin.post(MCL, cluster(unique, hubAcceptsClient=False))
    status_body = {"conditions": [{"type": "ManagedClusterJoined", "status": "True", "reason": "Joined",
                                   "message": "joined", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    # status is ignored on the main resource ...
    code, main = await admin.patch(f"{MCL}/{unique}", {"status": status_body})
    assert code == 200 and "conditions" not in (main.get("status") or {})
    # ... and spec is ignored on /status
    code, sub = await admin.patch(f"{MCL}/{unique}/status", {"status": status_body, "spec": {"hubAcceptsClient": True}})
    assert code == 200, sub
    assert sub["status"]["conditions"][0]["type"] == "ManagedClusterJoined"
    assert sub["spec"]["hubAcceptsClient"] is False
    assert sub["metadata"]["generation"] == 1


async def test_schema_validation_reports_field_paths(admin: Client, unique: str) -> None:
    body = cluster(unique, hubAcceptsClient="yes", taints=[{"key": "k", "effect": "Sometimes"}])
    code, status = await admin.post(MCL, body)
    assert code == 422, status
    fields = {c["field"] for c in status["details"]["causes"]}
    assert "spec.hubAcceptsClient" in fields
    assert "spec.taints[0].effect" in fields
    assert status["details"]["kind"] == "ManagedCluster"


async def test_unknown_fields_pruned_or_refused(admin: Client, unique: str) -> None:
    body = cluster(unique, hubAcceptsClient=False, bogus=1)
    code, status = await admin.post(MCL, body, params={"fieldValidation": "Strict"})
    assert code == 400 and 'unknown field "spec.bogus"' in status["message"]
    code, obj = await admin.post(MCL, body)
    assert code == 201 and "bogus" not in obj["spec"]


async def test_patch_types(admin: Client, unique: str) -> None:
    await admin.post(CM, configmap(unique, a="1", b="2"))
    code, obj = await admin.patch(f"{CM}/{unique}", {"data": {"a": None, "c": "3"}})
    assert code == 200 and obj["data"] == {"b": "2", "c": "3"}
    code, obj = await admin.patch(f"{CM}/{unique}", [{"op": "replace", "path": "/data/b", "value": "9"}], patch_type="json")
    assert code == 200 and obj["data"]["b"] == "9"
    code, obj = await admin.patch(f"{CM}/{unique}", {"data": {"d": "4"}}, patch_type="strategic")
    assert code == 200 and obj["data"]["d"] == "4"


async def test_strategic_merge_patch_refused_on_custom_resources(admin: Client, unique: str) -> None:
    await admin.post(MCL, cluster(unique, hubAcceptsClient=False))
    code, status = await admin.patch(f"{MCL}/{unique}", {"spec": {"hubAcceptsClient": True}}, patch_type="strategic")
    assert code == 415 and status["reason"] == "UnsupportedMediaType"


async def test_patch_with_stale_resource_version_conflicts(admin: Client, unique: str) -> None:
    _, obj = await admin.post(CM, configmap(unique, a="1"))
    await admin.patch(f"{CM}/{unique}", {"data": {"a": "2"}})
    code, status = await admin.patch(
        f"{CM}/{unique}", {"metadata": {"resourceVersion": obj["metadata"]["resourceVersion"]}, "data": {"a": "3"}}
    )
    assert code == 409 and status["reason"] == "Conflict"


async def test_delete_with_finalizers(admin: Client, unique: str) -> None:
    body = configmap(unique)
    body["metadata"]["finalizers"] = ["example.com/hold"]
    await admin.post(CM, body)
    code, obj = await admin.delete(f"{CM}/{unique}")
    assert code == 200 and obj["metadata"]["deletionTimestamp"]
    code, status = await admin.patch(f"{CM}/{unique}", {"metadata": {"finalizers": ["example.com/hold", "x.io/new"]}})
    assert code == 422, status
    code, _ = await admin.patch(f"{CM}/{unique}", {"metadata": {"finalizers": None}})
    assert code == 200
    code, _ = await admin.get(f"{CM}/{unique}")
    assert code == 404


async def test_label_and_field_selectors(admin: Client, unique: str) -> None:
    for i, env in enumerate(["prod", "dev", "prod"]):
        body = configmap(f"{unique}-{i}")
        body["metadata"]["labels"] = {"env": env, "suite": unique}
        await admin.post(CM, body)
    code, lst = await admin.get(CM, params={"labelSelector": f"suite={unique}, env in (prod)"})
    assert code == 200 and sorted(i["metadata"]["name"] for i in lst["items"]) == [f"{unique}-0", f"{unique}-2"]
    code, lst = await admin.get(CM, params={"labelSelector": f"suite={unique},env!=prod"})
    assert [i["metadata"]["name"] for i in lst["items"]] == [f"{unique}-1"]
    code, lst = await admin.get(CM, params={"fieldSelector": f"metadata.name={unique}-1"})
    assert [i["metadata"]["name"] for i in lst["items"]] == [f"{unique}-1"]
    code, status = await admin.get(CM, params={"fieldSelector": "spec.foo=bar"})
    assert code == 400 and status["message"] == "field label not supported: spec.foo"
    code, status = await admin.get(CM, params={"labelSelector": "a in (b"})
    assert code == 400 and status["reason"] == "BadRequest"


async def test_namespace_lifecycle(admin: Client, unique: str) -> None:
    code, ns = await admin.post(NS, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": unique}})
    assert code == 201 and ns["status"]["phase"] == "Active" and ns["spec"]["finalizers"] == ["kubernetes"]
    held = configmap("held")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await admin.post(f"/api/v1/namespaces/{unique}/configmaps", held)
    code, ns = await admin.delete(f"{NS}/{unique}")
    assert code == 200 and ns["status"]["phase"] == "Terminating"
    code, status = await admin.post(f"/api/v1/namespaces/{unique}/configmaps", configmap("late"))
    assert code == 403 and status["details"]["causes"][0]["reason"] == "NamespaceTerminating"
    await admin.patch(f"/api/v1/namespaces/{unique}/configmaps/held", {"metadata": {"finalizers": None}})
    for _ in range(100):
        code, _ = await admin.get(f"{NS}/{unique}")
        if code == 404:
            break
        await asyncio.sleep(0.1)
    assert code == 404


async def test_create_in_missing_namespace(admin: Client, unique: str) -> None:
    code, status = await admin.post(f"/api/v1/namespaces/{unique}/configmaps", configmap("x"))
    assert code == 404 and status["message"] == f'namespaces "{unique}" not found'


async def test_garbage_collection_by_owner(admin: Client, unique: str) -> None:
    _, owner = await admin.post(CM, configmap(f"{unique}-owner"))
    dep = configmap(f"{unique}-dep")
    dep["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": f"{unique}-owner",
                                           "uid": owner["metadata"]["uid"]}]
    await admin.post(CM, dep)
    await admin.delete(f"{CM}/{unique}-owner")
    assert await collected(admin, f"{CM}/{unique}-dep")


async def collected(admin: Client, path: str) -> bool:
    """Whether the garbage collector deletes ``path`` within ten seconds."""
    for _ in range(100):
        code, _ = await admin.get(path)
        if code == 404:
            return True
        await asyncio.sleep(0.1)
    return False


async def test_owner_references_set_and_removed_by_updates(admin: Client, unique: str) -> None:
    _, owner = await admin.post(CM, configmap(f"{unique}-owner"))
    reference = {"apiVersion": "v1", "kind": "ConfigMap", "name": f"{unique}-owner",
                 "uid": owner["metadata"]["uid"]}
    for name in ("adopted", "released"):
        _, dep = await admin.post(CM, configmap(f"{unique}-{name}"))
        dep["metadata"]["ownerReferences"] = [reference]
        code, dep = await admin.put(f"{CM}/{unique}-{name}", dep)
        assert code == 200
    del dep["metadata"]["ownerReferences"]
    code, _ = await admin.put(f"{CM}/{unique}-released", dep)
    assert code == 200
    for n in range(3):  # the owner's own plain updates leave it known as an owner
        owner["data"] = {"n": str(n)}
        code, owner = await admin.put(f"{CM}/{unique}-owner", owner)
        assert code == 200
    await admin.delete(f"{CM}/{unique}-owner")
    assert await collected(admin, f"{CM}/{unique}-adopted")
    code, _ = await admin.get(f"{CM}/{unique}-released")
    assert code == 200


async def test_bad_input_answers_clear_errors(admin: Client, unique: str) -> None:
    code, status = await admin.request("POST", CM, raw=b"{not json")
    assert code == 400 and status["reason"] == "BadRequest"
    code, status = await admin.post(CM, {"apiVersion": "v2", "kind": "ConfigMap", "metadata": {"name": unique}})
    assert code == 400 and "does not match the expected API version" in status["message"]
    code, status = await admin.post(CM, configmap("Bad_Name"))
    assert code == 422 and status["details"]["causes"][0]["field"] == "metadata.name"
    code, status = await admin.request("POST", CM, raw=b"x" * (3 * 1024 * 1024 + 1))
    assert code == 413 and status["reason"] == "RequestEntityTooLarge"
    code, status = await admin.get("/apis/nope.example.com/v1/things")
    assert code == 404
    code, status = await admin.request("POST", CM, raw=b"\x00\x01", content_type="application/octet-stream")
    assert code == 415 and status["reason"] == "UnsupportedMediaType"


async def test_discovery(admin: Client) -> None:
    code, groups = await admin.get("/apis")
    names = {g["name"] for g in groups["groups"]}
    assert {"cluster.open-cluster-management.io", "certificates.k8s.io", "rbac.authorization.k8s.io"} <= names
    code, res = await admin.get("/apis/cluster.open-cluster-management.io/v1")
    entries = {r["name"]: r for r in res["resources"]}
    assert entries["managedclusters"]["shortNames"] == ["mcl", "mcls"]
    assert entries["managedclusters"]["namespaced"] is False
    assert entries["managedclusters/status"]["verbs"] == ["get", "patch", "update"]
    code, core = await admin.get("/api/v1")
    names = {r["name"] for r in core["resources"]}
    assert {"namespaces", "namespaces/finalize", "serviceaccounts/token", "configmaps", "secrets"} <= names
    code, version = await admin.get("/version")
    assert code == 200 and version["major"] == "1"
