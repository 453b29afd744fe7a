"""The AppliedManifestWork's rules: its name and owner, what a delete option owns, what
left the work, and deleting what it owns (over the simulator's memory spoke, which the
conformance tests hold to the real cluster's behaviour)."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from pyocm.api import kinds as ocm
from pyocm.api.models.work_v1 import ManifestWorkSpecDeleteOption
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.sim.memoryspoke import MemorySpoke
from pyocm.work.agent import appliedwork
from pyocm.work.agent.appliedwork import AppliedResource
from pyocm.work.agent.cleanup import delete_applied_resources
from pyocm.work.agent.options import OptionsError, WorkAgentOptions, hub_hash

Obj = dict[str, Any]


def test_hub_hash_is_upstreams_sha256_of_the_server_url() -> None:
    url = "https://hub.example.com:6443"
    assert hub_hash(url) == hashlib.sha256(url.encode()).hexdigest()
    assert len(hub_hash(url)) == 64
    assert appliedwork.applied_work_name(hub_hash(url), "w") == f"{hub_hash(url)}-w"
    assert appliedwork.work_name_of(hub_hash(url), f"{hub_hash(url)}-my-work") == "my-work"
    assert appliedwork.work_name_of(hub_hash(url), f"{'0' * 64}-my-work") is None


def test_options_keep_upstreams_defaults_and_refuse_bad_values() -> None:
    options = WorkAgentOptions(cluster_name="c1")
    assert (options.status_sync_interval, options.appliedmanifestwork_eviction_grace_period) == (
        10,
        3600,
    )
    assert (options.max_json_raw_length, options.workers, options.resync_interval) == (
        1024,
        10,
        240,
    )
    assert not options.eviction_disabled
    assert WorkAgentOptions(
        appliedmanifestwork_eviction_grace_period=100 * 365 * 86400
    ).eviction_disabled
    with pytest.raises(OptionsError, match="workload-agent-workers must be >= 1, got 0"):
        WorkAgentOptions(workers=0)
    with pytest.raises(OptionsError, match="cluster name is empty"):
        WorkAgentOptions().check_cluster()
    with pytest.raises(OptionsError, match=r"metadata\.name format is not correct"):
        WorkAgentOptions(cluster_name="Not_A_Name").check_cluster()


@pytest.mark.parametrize(
    ("option", "owned"),
    [
        (None, {"kept", "other"}),
        ({"propagationPolicy": "Foreground"}, {"kept", "other"}),
        ({"propagationPolicy": "Orphan"}, set()),
        ({"propagationPolicy": "SelectivelyOrphan"}, {"kept", "other"}),
        (
            {
                "propagationPolicy": "SelectivelyOrphan",
                "selectivelyOrphans": {
                    "orphaningRules": [
                        {"group": "", "resource": "configmaps", "namespace": "ns", "name": "kept"},
                        # rules match exactly: no wildcards
                        {"group": "", "resource": "configmaps", "namespace": "ns", "name": "*"},
                    ]
                },
            },
            {"other"},
        ),
    ],
)
def test_what_the_work_owns_follows_its_delete_option(
    option: ManifestWorkSpecDeleteOption | None, owned: set[str]
) -> None:
    found = {
        name
        for name in ("kept", "other")
        if appliedwork.owned_by_the_work(
            group="", resource="configmaps", namespace="ns", name=name, delete_option=option
        )
    }
    assert found == owned


def resource(name: str, uid: str, *, version: str = "v1", namespace: str = "ns") -> AppliedResource:
    return {
        "group": "",
        "version": version,
        "resource": "configmaps",
        "namespace": namespace,
        "name": name,
        "uid": uid,
    }


def test_untracked_resources_ignore_the_version_and_uid() -> None:
    recorded = [resource("a", "1"), resource("b", "2"), resource("c", "3")]
    current = [resource("a", "9", version="v2"), resource("c", "3")]
    assert appliedwork.find_untracked(recorded, current) == [resource("b", "2")]


OWNER = {
    "apiVersion": "work.open-cluster-management.io/v1",
    "kind": "AppliedManifestWork",
    "name": "hash-w",
    "uid": "owner-uid",
}
OTHER = {**OWNER, "name": "other-hash-w", "uid": "other-uid"}


@pytest.fixture
def spoke() -> MemorySpoke:
    return MemorySpoke(served=[ocm.APPLIED_MANIFEST_WORK])


async def configmap(spoke: MemorySpoke, name: str, *owners: Obj, **meta: Any) -> Obj:
    body = {"metadata": {"name": name, "namespace": "ns", "ownerReferences": list(owners), **meta}}
    return await spoke.create(kinds.CONFIGMAP, body)


def recorded(obj: Obj) -> AppliedResource:
    return resource(obj["metadata"]["name"], obj["metadata"]["uid"])


async def names(spoke: MemorySpoke) -> set[str]:
    return {o["metadata"]["name"] for o in await spoke.list(kinds.CONFIGMAP, namespace="ns")}


async def test_deletion_spares_what_is_not_ours_and_shares_what_others_own(
    spoke: MemorySpoke,
) -> None:
    ours = await configmap(spoke, "ours", OWNER)
    shared = await configmap(spoke, "shared", OWNER, OTHER)
    orphaned = await configmap(spoke, "orphaned")  # applied with the "remove owner" form
    taken = await configmap(spoke, "taken", OTHER)
    outcome = await delete_applied_resources(
        spoke,
        [recorded(o) for o in (ours, shared, orphaned, taken)] + [resource("gone", "x")],
        owner=OWNER,  # type: ignore[arg-type]
        reason="test",
    )
    assert outcome.errors == []
    assert outcome.pending == [recorded(ours)]
    assert await names(spoke) == {"shared", "orphaned", "taken"}
    kept = await spoke.get(kinds.CONFIGMAP, "shared", namespace="ns")
    assert kept["metadata"]["ownerReferences"] == [OTHER]


async def test_deletion_never_touches_a_recreated_namesake(spoke: MemorySpoke) -> None:
    old = await configmap(spoke, "again", OWNER)
    await spoke.delete(kinds.CONFIGMAP, "again", namespace="ns")
    await configmap(spoke, "again", OWNER)
    outcome = await delete_applied_resources(spoke, [recorded(old)], owner=OWNER, reason="test")  # type: ignore[arg-type]
    assert outcome.pending == [] and outcome.errors == []
    assert await names(spoke) == {"again"}


async def test_a_resource_held_by_a_finalizer_stays_pending(spoke: MemorySpoke) -> None:
    held = await configmap(spoke, "held", OWNER, finalizers=["example.com/hold"])
    first = await delete_applied_resources(spoke, [recorded(held)], owner=OWNER, reason="test")  # type: ignore[arg-type]
    again = await delete_applied_resources(spoke, [recorded(held)], owner=OWNER, reason="test")  # type: ignore[arg-type]
    assert first.pending == again.pending == [recorded(held)]
    stored = await spoke.get(kinds.CONFIGMAP, "held", namespace="ns")
    stored["metadata"]["finalizers"] = []
    await spoke.update(kinds.CONFIGMAP, stored)
    done = await delete_applied_resources(spoke, [recorded(held)], owner=OWNER, reason="test")  # type: ignore[arg-type]
    assert done.pending == []


async def test_a_failure_is_reported_and_the_others_still_go(spoke: MemorySpoke) -> None:
    class Refusing(MemorySpoke):
        async def delete(self, kind: Any, name: str, **options: Any) -> None:
            if name == "refused":
                raise ApiError(
                    code=403, reason="Forbidden", message=f'configmaps "{name}" is forbidden'
                )
            await super().delete(kind, name, **options)

    refusing = Refusing()
    refused = await configmap(refusing, "refused", OWNER)
    fine = await configmap(refusing, "fine", OWNER)
    outcome = await delete_applied_resources(
        refusing,
        [recorded(refused), recorded(fine)],
        owner=OWNER,
        reason="test",  # type: ignore[arg-type]
    )
    assert outcome.pending == [recorded(fine)]
    assert outcome.errors == [
        'failed to delete resource /v1, Resource=configmaps with key ns/refused: configmaps "refused" is forbidden'
    ]
    assert await names(refusing) == {"refused"}


async def test_the_record_is_created_then_only_its_spec_kept(spoke: MemorySpoke) -> None:
    wanted = appliedwork.desired(hub_hash="h", agent_id="a", work_name="w", labels={"team": "x"})
    made = await appliedwork.ensure(spoke, wanted)
    assert made["metadata"]["name"] == "h-w"
    assert made["metadata"]["finalizers"] == [appliedwork.FINALIZER]
    assert made["spec"] == {"hubHash": "h", "manifestWorkName": "w", "agentID": "a"}
    assert made["metadata"]["labels"] == {"team": "x"}
    same = await appliedwork.ensure(spoke, wanted)
    assert same["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"]
    moved = appliedwork.desired(hub_hash="h", agent_id="b", work_name="w", labels={"team": "y"})
    updated = await appliedwork.ensure(spoke, moved)
    assert updated["spec"]["agentID"] == "b"
    assert updated["metadata"]["labels"] == {"team": "x"}
    assert appliedwork.owner_of(updated) == {
        "apiVersion": "work.open-cluster-management.io/v1",
        "kind": "AppliedManifestWork",
        "name": "h-w",
        "uid": made["metadata"]["uid"],
    }
    assert (
        appliedwork.removal_of(appliedwork.owner_of(updated))["uid"]
        == made["metadata"]["uid"] + "-"
    )
