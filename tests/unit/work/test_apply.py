"""The apply layer against a recording fake of the managed cluster: which requests each
strategy makes and what it writes, case by case as upstream's unit tests check them.
(The same behaviour against a real API server: tests/integration/work/test_apply*.py.)"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from typing import Any

import pytest

from pyocm.api.models.meta_v1 import OwnerReference
from pyocm.kube import kinds
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError, already_exists, conflict, forbidden_error, not_found
from pyocm.runtime.restmapper import NoKindMatchError
from pyocm.work.agent.apply import (
    ApplyError,
    ExecutorDenied,
    IgnoreFieldError,
    ServerSideApplyConflict,
    UpdateStrategy,
    apply_manifest,
    resolve,
)
from pyocm.work.agent.apply.executor import Executor
from pyocm.work.agent.apply.servicehash import SPEC_HASH_ANNOTATION

Obj = dict[str, Any]
OWNER: OwnerReference = {
    "apiVersion": "work.open-cluster-management.io/v1",
    "kind": "AppliedManifestWork",
    "name": "hash-work",
    "uid": "owner-uid",
}
ORPHAN: OwnerReference = {**OWNER, "uid": "owner-uid-"}
GADGET = Kind("example.com", "v1", "Gadget", "gadgets", True)


class FakeSpoke:
    """A managed cluster in memory that records every request as (verb, name)."""

    def __init__(self, *objects: tuple[Kind, Obj]) -> None:
        self.objects: dict[tuple[str, str, str], Obj] = {}
        self.actions: list[tuple[str, str]] = []
        self.written: list[Obj] = []
        self.revision = itertools.count(1)
        self.allow: Callable[[Obj], bool] = lambda review: True
        self.dry_run_answer: ApiError | None = None
        self.apply_answer: ApiError | None = None
        for kind, obj in objects:
            self._store(kind, copy.deepcopy(obj), new=True)

    async def kind_for(self, *, api_version: str, kind: str) -> Kind:
        for known in (kinds.CONFIGMAP, kinds.SECRET, kinds.SERVICE, kinds.ROLE, GADGET):
            if (known.api_version, known.kind) == (api_version, kind):
                return known
        group, _, version = api_version.rpartition("/")
        raise NoKindMatchError(group=group, version=version, kind=kind)

    async def get(self, kind: Kind, name: str, *, namespace: str | None = None) -> Obj:
        self.actions.append(("get", name))
        found = self.objects.get((kind.plural, namespace or "", name))
        if found is None:
            raise not_found(resource=kind.plural, group=kind.group, name=name)
        return copy.deepcopy(found)

    async def list(self, kind: Kind, *, namespace: str | None = None) -> list[Obj]:
        raise AssertionError("the apply layer never lists")

    async def create(self, kind: Kind, obj: Obj) -> Obj:
        if kind == kinds.SUBJECT_ACCESS_REVIEW:
            self.actions.append(("review", obj["spec"]["resourceAttributes"]["verb"]))
            return {**obj, "status": {"allowed": self.allow(obj)}}
        self.actions.append(("create", obj["metadata"]["name"]))
        self.written.append(copy.deepcopy(obj))
        if self._key(kind, obj) in self.objects:
            raise already_exists(
                resource=kind.plural, group=kind.group, name=obj["metadata"]["name"]
            )
        return self._store(kind, copy.deepcopy(obj), new=True)

    async def update(self, kind: Kind, obj: Obj, *, subresource: str | None = None) -> Obj:
        self.actions.append(("update", obj["metadata"]["name"]))
        self.written.append(copy.deepcopy(obj))
        current = self.objects[self._key(kind, obj)]
        if obj["metadata"].get("resourceVersion") != current["metadata"]["resourceVersion"]:
            raise conflict(resource=kind.plural, group=kind.group, name=obj["metadata"]["name"])
        updated = copy.deepcopy(obj)
        updated["metadata"]["uid"] = current["metadata"]["uid"]
        return self._store(kind, updated, new=False)

    async def apply(self, kind: Kind, obj: Obj, *, field_manager: str, force: bool) -> Obj:
        self.actions.append(("apply", f"{field_manager} force={force}"))
        self.written.append(copy.deepcopy(obj))
        if self.apply_answer is not None:
            raise self.apply_answer
        key = self._key(kind, obj)
        if key not in self.objects:
            return self._store(kind, copy.deepcopy(obj), new=True)
        merged = copy.deepcopy(self.objects[key])
        for field, value in obj.items():
            if field == "metadata":
                for meta_field, meta_value in value.items():
                    if isinstance(meta_value, dict):
                        merged["metadata"].setdefault(meta_field, {}).update(meta_value)
                    else:
                        merged["metadata"][meta_field] = meta_value
            else:
                merged[field] = copy.deepcopy(value)
        return self._store(kind, merged, new=False)

    async def delete(self, kind: Kind, name: str, **options: Any) -> None:
        self.actions.append(("delete", name))
        key = (kind.plural, options.get("namespace") or "", name)
        self.objects.pop(key)

    async def dry_run_create_as(self, kind: Kind, obj: Obj, *, user: str) -> Obj:
        self.actions.append(("dry-run", user))
        if self.dry_run_answer is not None:
            raise self.dry_run_answer
        return obj

    def _key(self, kind: Kind, obj: Obj) -> tuple[str, str, str]:
        meta = obj["metadata"]
        return (kind.plural, meta.get("namespace", "") if kind.namespaced else "", meta["name"])

    def _store(self, kind: Kind, obj: Obj, *, new: bool) -> Obj:
        meta = obj.setdefault("metadata", {})
        if new:
            meta["uid"] = f"uid-{meta['name']}"
        meta["resourceVersion"] = str(next(self.revision))
        self.objects[self._key(kind, obj)] = obj
        return copy.deepcopy(obj)


def configmap(name: str = "cm", **data: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns1"},
        "data": data,
    }


def gadget(name: str = "g1", **spec: Any) -> Obj:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Gadget",
        "metadata": {"name": name, "namespace": "ns1"},
        "spec": spec,
    }


def owned(obj: Obj, *owners: OwnerReference, **meta: Any) -> Obj:
    made = copy.deepcopy(obj)
    made["metadata"].update(meta)
    if owners:
        made["metadata"]["ownerReferences"] = [dict(o) for o in owners]
    return made


# Update, generic path (a custom resource).


async def test_update_creates_a_missing_object_with_the_owner() -> None:
    spoke = FakeSpoke()
    applied = await apply_manifest(spoke, gadget(size=1), kind=GADGET, strategy=None, owner=OWNER)
    assert spoke.actions == [("get", "g1"), ("create", "g1")]
    assert applied.changed and applied.obj["metadata"]["ownerReferences"] == [OWNER]


async def test_update_creates_without_a_removal_owner() -> None:
    spoke = FakeSpoke()
    await apply_manifest(spoke, gadget(size=1), kind=GADGET, strategy=None, owner=ORPHAN)
    assert spoke.written[0]["metadata"]["ownerReferences"] == []


async def test_update_writes_nothing_when_in_sync() -> None:
    spoke = FakeSpoke((GADGET, owned(gadget(size=1), OWNER)))
    applied = await apply_manifest(spoke, gadget(size=1), kind=GADGET, strategy=None, owner=OWNER)
    assert spoke.actions == [("get", "g1")]
    assert not applied.changed


async def test_update_puts_back_a_changed_spec_keeping_status_finalizers_and_labels() -> None:
    existing = owned(gadget(size=5), OWNER, finalizers=["keep"], labels={"theirs": "1"})
    existing["status"] = {"ready": True}
    spoke = FakeSpoke((GADGET, existing))
    applied = await apply_manifest(
        spoke, owned(gadget(size=1), labels={"ours": "2"}), kind=GADGET, strategy=None, owner=OWNER
    )
    assert spoke.actions == [("get", "g1"), ("update", "g1")]
    written = spoke.written[0]
    assert written["spec"] == {"size": 1}
    assert written["metadata"]["finalizers"] == ["keep"]
    assert written["metadata"]["labels"] == {"theirs": "1", "ours": "2"}
    assert written["metadata"]["resourceVersion"] == "1"
    assert applied.changed and applied.obj["spec"] == {"size": 1}


async def test_update_adds_its_owner_beside_another_and_removes_it_for_an_orphan() -> None:
    other: OwnerReference = {"apiVersion": "v1", "kind": "Thing", "name": "x", "uid": "u1"}
    spoke = FakeSpoke((GADGET, owned(gadget(size=1), other)))
    await apply_manifest(spoke, gadget(size=1), kind=GADGET, strategy=None, owner=OWNER)
    assert spoke.written[-1]["metadata"]["ownerReferences"] == [other, OWNER]
    await apply_manifest(spoke, gadget(size=1), kind=GADGET, strategy=None, owner=ORPHAN)
    assert spoke.written[-1]["metadata"]["ownerReferences"] == [other]
    spoke.actions.clear()
    await apply_manifest(spoke, gadget(size=1), kind=GADGET, strategy=None, owner=ORPHAN)
    assert spoke.actions == [("get", "g1")]  # nothing of ours left to remove


async def test_update_removal_keys_remove_labels_and_are_never_created() -> None:
    spoke = FakeSpoke((GADGET, owned(gadget(size=1), OWNER, labels={"a": "1", "b": "2"})))
    await apply_manifest(
        spoke, owned(gadget(size=1), labels={"a-": ""}), kind=GADGET, strategy=None, owner=OWNER
    )
    assert spoke.written[-1]["metadata"]["labels"] == {"b": "2"}
    fresh = FakeSpoke()
    await apply_manifest(
        fresh,
        owned(gadget(size=1), labels={"a-": "", "c": "3"}),
        kind=GADGET,
        strategy=None,
        owner=OWNER,
    )
    assert fresh.written[0]["metadata"]["labels"] == {"c": "3"}


async def test_a_uid_in_the_manifest_is_not_sent() -> None:
    spoke = FakeSpoke()
    await apply_manifest(
        spoke, owned(gadget(size=1), uid="stale"), kind=GADGET, strategy=None, owner=OWNER
    )
    assert "uid" not in spoke.written[0]["metadata"]


# Update, library-go's typed rules.


async def test_typed_configmap_keeps_fields_it_does_not_know() -> None:
    existing = owned(configmap(a="1"), OWNER)
    existing["immutable"] = False  # not compared by library-go
    spoke = FakeSpoke((kinds.CONFIGMAP, existing))
    applied = await apply_manifest(
        spoke, configmap(a="1"), kind=kinds.CONFIGMAP, strategy=None, owner=OWNER
    )
    assert not applied.changed
    await apply_manifest(spoke, configmap(a="2"), kind=kinds.CONFIGMAP, strategy=None, owner=OWNER)
    assert spoke.written[-1]["data"] == {"a": "2"}
    assert spoke.written[-1]["immutable"] is False


async def test_typed_secret_folds_string_data_and_refuses_a_conflict() -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "ns1"},
        "stringData": {"k": "v"},
    }
    spoke = FakeSpoke()
    await apply_manifest(spoke, secret, kind=kinds.SECRET, strategy=None, owner=OWNER)
    assert spoke.written[0]["data"] == {"k": "dg=="}
    assert "stringData" not in spoke.written[0]
    spoke.objects[("secrets", "ns1", "s")]["type"] = "Opaque"
    spoke.actions.clear()
    again = await apply_manifest(spoke, secret, kind=kinds.SECRET, strategy=None, owner=OWNER)
    assert not again.changed and spoke.actions == [("get", "s")]
    clash = {**secret, "data": {"k": "eA=="}}  # "x"
    with pytest.raises(
        ApplyError, match=r'Secret.stringData\["k"\] conflicts with Secret.data\["k"\]'
    ):
        await apply_manifest(spoke, clash, kind=kinds.SECRET, strategy=None, owner=OWNER)


async def test_typed_secret_type_change_deletes_and_creates() -> None:
    existing = owned(
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns1"}},
        OWNER,
        type="Opaque",
    )
    existing["type"] = "Opaque"
    spoke = FakeSpoke((kinds.SECRET, existing))
    wanted = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "ns1"},
        "type": "example.com/other",
    }
    applied = await apply_manifest(spoke, wanted, kind=kinds.SECRET, strategy=None, owner=OWNER)
    assert spoke.actions == [("get", "s"), ("delete", "s"), ("create", "s")]
    assert applied.obj["type"] == "example.com/other"
    assert "resourceVersion" not in spoke.written[-1]["metadata"]


async def test_typed_service_gets_the_spec_hash_and_keeps_the_cluster_ip() -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "svc", "namespace": "ns1"},
        "spec": {"selector": {"app": "a"}, "ports": [{"port": 80}]},
    }
    spoke = FakeSpoke()
    created = await apply_manifest(spoke, service, kind=kinds.SERVICE, strategy=None, owner=OWNER)
    digest = created.obj["metadata"]["annotations"][SPEC_HASH_ANNOTATION]
    assert len(digest) == 64
    spoke.objects[("services", "ns1", "svc")]["spec"].update(clusterIP="10.0.0.1", type="ClusterIP")
    spoke.actions.clear()
    again = await apply_manifest(spoke, service, kind=kinds.SERVICE, strategy=None, owner=OWNER)
    assert not again.changed and spoke.actions == [("get", "svc")]
    service["spec"]["ports"] = [{"port": 81}]
    changed = await apply_manifest(spoke, service, kind=kinds.SERVICE, strategy=None, owner=OWNER)
    assert changed.changed and changed.obj["spec"]["ports"] == [{"port": 81}]
    assert changed.obj["metadata"]["annotations"][SPEC_HASH_ANNOTATION] != digest


async def test_typed_binding_fills_the_rbac_group() -> None:
    binding_kind = Kind("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings", True)
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "b", "namespace": "ns1"},
        "roleRef": {"kind": "Role", "name": "r"},
        "subjects": [{"kind": "User", "name": "u"}],
    }
    stored = owned(binding, OWNER)
    stored["roleRef"]["apiGroup"] = "rbac.authorization.k8s.io"
    stored["subjects"][0]["apiGroup"] = "rbac.authorization.k8s.io"
    spoke = FakeSpoke((binding_kind, stored))
    applied = await apply_manifest(spoke, binding, kind=binding_kind, strategy=None, owner=OWNER)
    assert not applied.changed


# CreateOnly.


async def test_create_only_creates_then_never_updates() -> None:
    spoke = FakeSpoke()
    strategy: UpdateStrategy = {"type": "CreateOnly"}
    await apply_manifest(spoke, gadget(size=1), kind=GADGET, strategy=strategy, owner=OWNER)
    applied = await apply_manifest(
        spoke, gadget(size=2), kind=GADGET, strategy=strategy, owner=OWNER
    )
    assert spoke.actions == [("get", "g1"), ("create", "g1"), ("get", "g1")]
    assert applied.obj["spec"] == {"size": 1} and not applied.changed


async def test_create_only_puts_the_owner_on_an_existing_object_and_takes_it_off() -> None:
    spoke = FakeSpoke((GADGET, gadget(size=9)))
    strategy: UpdateStrategy = {"type": "CreateOnly"}
    applied = await apply_manifest(
        spoke, gadget(size=1), kind=GADGET, strategy=strategy, owner=OWNER
    )
    assert applied.changed and applied.obj["metadata"]["ownerReferences"] == [OWNER]
    assert applied.obj["spec"] == {"size": 9}
    orphaned = await apply_manifest(
        spoke, gadget(size=1), kind=GADGET, strategy=strategy, owner=ORPHAN
    )
    assert orphaned.obj["metadata"]["ownerReferences"] == []


# ServerSideApply.


async def test_server_side_apply_uses_the_field_manager_and_force() -> None:
    spoke = FakeSpoke()
    manifest = gadget(size=1)
    manifest["spec"]["template"] = {"metadata": {"creationTimestamp": None, "name": "t"}}
    strategy: UpdateStrategy = {
        "type": "ServerSideApply",
        "serverSideApply": {"fieldManager": "work-agent-x", "force": True},
    }
    applied = await apply_manifest(spoke, manifest, kind=GADGET, strategy=strategy, owner=OWNER)
    assert spoke.actions[0] == ("apply", "work-agent-x force=True")
    assert spoke.written[0]["spec"]["template"]["metadata"] == {"name": "t"}
    assert applied.obj["metadata"]["ownerReferences"] == [OWNER]
    default: UpdateStrategy = {"type": "ServerSideApply"}
    await apply_manifest(spoke, manifest, kind=GADGET, strategy=default, owner=OWNER)
    assert ("apply", "work-agent force=False") in spoke.actions


async def test_server_side_apply_conflict_keeps_the_cluster_message() -> None:
    spoke = FakeSpoke()
    spoke.apply_answer = ApiError(
        code=409, reason="Conflict", message='Apply failed with 1 conflict: conflict with "kubectl"'
    )
    with pytest.raises(ServerSideApplyConflict) as caught:
        await apply_manifest(
            spoke, gadget(size=1), kind=GADGET, strategy={"type": "ServerSideApply"}, owner=OWNER
        )
    assert str(caught.value) == 'Apply failed with 1 conflict: conflict with "kubectl"'
    assert not isinstance(caught.value, ApiError)


def ignoring(condition: str, **paths: list[str]) -> UpdateStrategy:
    return {
        "type": "ServerSideApply",
        "serverSideApply": {"ignoreFields": [{"condition": condition, **paths}]},  # type: ignore[typeddict-item]
    }


async def test_ignore_fields_on_spoke_present_are_created_then_left_out() -> None:
    spoke = FakeSpoke()
    strategy = ignoring("OnSpokePresent", jsonPaths=[".spec.size"])
    await apply_manifest(
        spoke, gadget(size=1, color="red"), kind=GADGET, strategy=strategy, owner=OWNER
    )
    assert spoke.written[0]["spec"] == {"size": 1, "color": "red"}  # created whole
    digest = spoke.written[0]["metadata"]["annotations"][
        "open-cluster-management.io/config-spec-hash"
    ]
    spoke.objects[("gadgets", "ns1", "g1")]["spec"]["size"] = 7  # changed on the spoke
    spoke.actions.clear()
    same = await apply_manifest(
        spoke, gadget(size=1, color="red"), kind=GADGET, strategy=strategy, owner=OWNER
    )
    assert spoke.actions == [("get", "g1")] and not same.changed
    changed = await apply_manifest(
        spoke, gadget(size=1, color="blue"), kind=GADGET, strategy=strategy, owner=OWNER
    )
    assert changed.changed
    applied = spoke.written[-1]  # the apply (the owner is on already)
    assert applied["spec"] == {"color": "blue"}  # size left out
    assert (
        applied["metadata"]["annotations"]["open-cluster-management.io/config-spec-hash"] != digest
    )


async def test_ignore_fields_on_spoke_change_are_applied_when_the_manifest_changes() -> None:
    strategy = ignoring("OnSpokeChange", jsonPaths=[".spec.size"])
    spoke = FakeSpoke()
    await apply_manifest(spoke, gadget(size=1), kind=GADGET, strategy=strategy, owner=OWNER)
    spoke.objects[("gadgets", "ns1", "g1")]["spec"]["size"] = 7
    kept = await apply_manifest(spoke, gadget(size=1), kind=GADGET, strategy=strategy, owner=OWNER)
    assert kept.obj["spec"]["size"] == 7
    changed = await apply_manifest(
        spoke, gadget(size=2), kind=GADGET, strategy=strategy, owner=OWNER
    )
    assert changed.obj["spec"]["size"] == 2


async def test_ignore_fields_by_pointer_and_jq() -> None:
    spoke = FakeSpoke((GADGET, gadget(size=1)))
    manifest = gadget(size=1, parts=[{"n": "a"}, {"n": "b"}])
    manifest["metadata"]["annotations"] = {"a/b": "x"}
    strategy = ignoring(
        "OnSpokePresent",
        jsonPointers=["/metadata/annotations/a~1b", "/spec/missing/x", "/spec/parts/5"],
        jqPathExpressions=['.spec.parts[] | select(.n == "a")'],
    )
    await apply_manifest(spoke, manifest, kind=GADGET, strategy=strategy, owner=OWNER)
    applied = spoke.written[0]
    assert applied["spec"] == {"size": 1, "parts": [{"n": "b"}]}
    assert "a/b" not in applied["metadata"]["annotations"]


@pytest.mark.parametrize(
    ("paths", "message"),
    [
        ({"jsonPointers": ["spec"]}, "JSON Pointer error in 'spec': "),
        (
            {"jqPathExpressions": ["del("]},
            "JQ expression error in 'del(': failed to parse jq expression",
        ),
        (
            {"jqPathExpressions": ["."]},
            "JQ expression error in '.': jq expression result is not a valid object",
        ),
    ],
)
async def test_bad_ignore_fields_are_ignore_field_errors(
    paths: dict[str, list[str]], message: str
) -> None:
    spoke = FakeSpoke()
    with pytest.raises(IgnoreFieldError) as caught:
        await apply_manifest(
            spoke,
            gadget(size=1),
            kind=GADGET,
            strategy=ignoring("OnSpokePresent", **paths),
            owner=OWNER,
        )
    assert str(caught.value).startswith(message)
    assert spoke.actions == []


# ReadOnly.


async def test_read_only_never_writes() -> None:
    spoke = FakeSpoke((GADGET, gadget(size=5)))
    strategy: UpdateStrategy = {"type": "ReadOnly"}
    present = await apply_manifest(
        spoke, gadget(size=1), kind=GADGET, strategy=strategy, owner=OWNER
    )
    absent = await apply_manifest(
        spoke, gadget("g2", size=1), kind=GADGET, strategy=strategy, owner=OWNER
    )
    assert spoke.written == []
    assert present.obj["spec"] == {"size": 5} and present.obj["metadata"]["uid"] == "uid-g1"
    assert absent.obj == gadget("g2", size=1) and not absent.changed


# The executor check.

EXECUTOR: Executor = {
    "subject": {"type": "ServiceAccount", "serviceAccount": {"namespace": "ns1", "name": "sa"}}
}


async def test_executor_is_asked_for_each_verb_and_delete_only_when_owned() -> None:
    spoke = FakeSpoke()
    await apply_manifest(
        spoke, gadget(size=1), kind=GADGET, strategy=None, owner=OWNER, executor=EXECUTOR
    )
    reviews = [verb for action, verb in spoke.actions if action == "review"]
    assert reviews == ["create", "update", "patch", "get", "delete"]
    spoke.actions.clear()
    strategy: UpdateStrategy = {"type": "ReadOnly"}
    await apply_manifest(
        spoke, gadget(size=1), kind=GADGET, strategy=strategy, owner=ORPHAN, executor=EXECUTOR
    )
    assert [verb for action, verb in spoke.actions if action == "review"] == [
        "create",
        "update",
        "patch",
        "get",
    ]


async def test_executor_denied_with_upstream_text_and_nothing_applied() -> None:
    spoke = FakeSpoke()
    spoke.allow = lambda review: review["spec"]["resourceAttributes"]["verb"] != "patch"
    with pytest.raises(ExecutorDenied) as caught:
        await apply_manifest(
            spoke,
            configmap(a="1"),
            kind=kinds.CONFIGMAP,
            strategy=None,
            owner=OWNER,
            executor=EXECUTOR,
        )
    assert str(caught.value) == (
        "not allowed to apply the resource  configmaps, ns1 cm, will try again in 1m0s"
    )
    assert caught.value.requeue_after == 60
    assert spoke.written == []
    assert spoke.actions[-1] == ("review", "patch")  # the first refusal ends the checks


async def test_executor_review_body_is_upstreams() -> None:
    seen: list[Obj] = []
    spoke = FakeSpoke()
    spoke.allow = lambda review: seen.append(review) is None
    await apply_manifest(
        spoke, gadget(size=1), kind=GADGET, strategy=None, owner=OWNER, executor=EXECUTOR
    )
    assert seen[0]["spec"] == {
        "resourceAttributes": {
            "namespace": "ns1",
            "verb": "create",
            "group": "example.com",
            "version": "v1",
            "resource": "gadgets",
            "name": "g1",
        },
        "user": "system:serviceaccount:ns1:sa",
        "groups": ["system:serviceaccounts", "system:authenticated", "system:serviceaccounts:ns1"],
    }


async def test_executor_escalation_for_rbac_objects() -> None:
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "r", "namespace": "ns1"},
        "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}],
    }
    spoke = FakeSpoke()
    spoke.dry_run_answer = forbidden_error(message="roles.rbac.authorization.k8s.io is forbidden")
    with pytest.raises(ExecutorDenied) as caught:
        await apply_manifest(
            spoke, role, kind=kinds.ROLE, strategy=None, owner=OWNER, executor=EXECUTOR
        )
    assert str(caught.value) == (
        "not allowed to apply the resource rbac.authorization.k8s.io roles, ns1 r, "
        "error: permission escalation, will try again in 1m0s"
    )
    assert ("dry-run", "system:serviceaccount:ns1:sa") in spoke.actions
    spoke.dry_run_answer = already_exists(
        resource="roles", group="rbac.authorization.k8s.io", name="r"
    )
    applied = await apply_manifest(
        spoke, role, kind=kinds.ROLE, strategy=None, owner=OWNER, executor=EXECUTOR
    )
    assert applied.changed


@pytest.mark.parametrize(
    ("executor", "message"),
    [
        ({"subject": {"type": "User"}}, "only support ServiceAccount type for the executor"),
        ({"subject": {"type": "ServiceAccount"}}, "the executor service account is nil"),
    ],
)
async def test_executor_basic_check(executor: Executor, message: str) -> None:
    with pytest.raises(ApplyError) as caught:
        await apply_manifest(
            FakeSpoke(), gadget(), kind=GADGET, strategy=None, owner=OWNER, executor=executor
        )
    assert str(caught.value) == message
    assert not isinstance(caught.value, ExecutorDenied)


# Resolution and bad manifests.


async def test_resolve_finds_served_kinds_and_words_failures_as_upstream() -> None:
    spoke = FakeSpoke()
    assert await resolve(spoke, gadget()) == GADGET
    with pytest.raises(ApplyError, match=r'^the server doesn\'t have a resource type "Widget"$'):
        await resolve(spoke, {**gadget(), "kind": "Widget"})
    no_kind = {"apiVersion": "v1", "metadata": {"name": "x"}}
    with pytest.raises(ApplyError) as caught:
        await resolve(spoke, no_kind)
    assert (
        str(caught.value)
        == """Object 'Kind' is missing in '{"apiVersion":"v1","metadata":{"name":"x"}}'"""
    )
    with pytest.raises(ApplyError, match=r"^Object 'apiVersion' is missing in"):
        await resolve(spoke, {"kind": "ConfigMap", "metadata": {"name": "x"}})
    with pytest.raises(ApplyError, match=r"^resource name may not be empty$"):
        await resolve(spoke, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})


async def test_an_unknown_strategy_is_refused() -> None:
    with pytest.raises(ApplyError, match="unknown update strategy type 'Sometimes'"):
        await apply_manifest(
            FakeSpoke(), gadget(), kind=GADGET, strategy={"type": "Sometimes"}, owner=OWNER
        )


async def test_cluster_errors_pass_through() -> None:
    spoke = FakeSpoke()

    async def refuse(kind: Kind, obj: Obj) -> Obj:
        raise ApiError(code=422, reason="Invalid", message='Gadget "g1" is invalid: spec.size: bad')

    spoke.create = refuse  # type: ignore[method-assign]
    with pytest.raises(ApiError) as caught:
        await apply_manifest(spoke, gadget(size=1), kind=GADGET, strategy=None, owner=OWNER)
    assert caught.value.code == 422
    assert str(caught.value) == 'Gadget "g1" is invalid: spec.size: bad'
