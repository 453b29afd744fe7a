"""The work agent for real: a hub process, an embedded managed cluster joined by the
klusterlet, ManifestWorks written on the hub as a user would, and the state of both
clusters asserted."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.local.embedded import EmbeddedCluster
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.support import eventually
from tests.workagents import (
    FAST,
    configmap,
    joined,
    manifest_conditions,
    manifest_work,
    running_klusterlet,
    update_spec,
    work_hash,
    work_with,
)

Obj = dict[str, Any]
OWNER_KIND = ("work.open-cluster-management.io/v1", "AppliedManifestWork")


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """The work agent joins through registration: these tests need the hub's controllers."""
    return ocm_hub


def cluster_role(name: str) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}],
    }


def owners(obj: Obj) -> list[tuple[str, str, str]]:
    return [
        (ref["apiVersion"], ref["kind"], ref["name"])
        for ref in obj["metadata"].get("ownerReferences") or []
    ]


async def gone(api: Api, kind: Any, name: str, namespace: str | None = None) -> bool:
    try:
        await api.get(kind, name, namespace=namespace)
    except ApiError as err:
        return err.code == 404
    return False


async def test_a_work_is_applied_recorded_and_reported(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster = f"c-{unique}"
    async with joined(api, hub, tmp_path, cluster) as (managed, _):
        work = manifest_work(
            "w1",
            cluster,
            configmap(f"cm-{unique}", a="1"),
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"ns-{unique}"}},
            configmap("inside", namespace=f"ns-{unique}", b="2"),
            cluster_role(f"role-{unique}"),
        )
        await api.create(ocm.MANIFEST_WORK, work)
        done = await eventually(
            lambda: work_with(api, cluster, "w1", Applied="True", Available="True")
        )
        assert done["metadata"]["finalizers"] == [wellknown.MANIFEST_WORK_CLEANUP_FINALIZER]
        applied = {c["type"]: c for c in done["status"]["conditions"]}
        assert (applied["Applied"]["reason"], applied["Applied"]["message"]) == (
            "AppliedManifestWorkComplete",
            "Apply manifest work complete",
        )
        assert (applied["Available"]["reason"], applied["Available"]["message"]) == (
            "ResourcesAvailable",
            "All resources are available",
        )
        assert (
            manifest_conditions(done)
            == [{"Applied": "True", "Available": "True", "StatusFeedbackSynced": "True"}] * 4
        )
        metas = [m["resourceMeta"] for m in done["status"]["resourceStatus"]["manifests"]]
        assert metas[3] == {
            "ordinal": 3,
            "group": "rbac.authorization.k8s.io",
            "version": "v1",
            "kind": "ClusterRole",
            "resource": "clusterroles",
            "name": f"role-{unique}",
            "namespace": "",
        }

        record_name = f"{work_hash(hub)}-w1"
        record = await managed.api.get(ocm.APPLIED_MANIFEST_WORK, record_name)
        assert record["spec"]["hubHash"] == work_hash(hub)
        assert record["spec"]["manifestWorkName"] == "w1"
        assert record["metadata"]["finalizers"] == [
            wellknown.APPLIED_MANIFEST_WORK_CLEANUP_FINALIZER
        ]
        stored = {
            "cm": await managed.api.get(kinds.CONFIGMAP, f"cm-{unique}", namespace="default"),
            "ns": await managed.api.get(kinds.NAMESPACE, f"ns-{unique}"),
            "inside": await managed.api.get(kinds.CONFIGMAP, "inside", namespace=f"ns-{unique}"),
            "role": await managed.api.get(kinds.CLUSTER_ROLE, f"role-{unique}"),
        }
        assert stored["cm"]["data"] == {"a": "1"}
        for obj in stored.values():
            assert owners(obj) == [(*OWNER_KIND, record_name)]
        resources = record["status"]["appliedResources"]
        assert [
            (r["group"], r["resource"], r["namespace"], r["name"]) for r in resources
        ] == sorted(
            [
                ("", "configmaps", "default", f"cm-{unique}"),
                ("", "namespaces", "", f"ns-{unique}"),
                ("", "configmaps", f"ns-{unique}", "inside"),
                ("rbac.authorization.k8s.io", "clusterroles", "", f"role-{unique}"),
            ],
            key=lambda r: (r[0], "v1", r[1], r[2], r[3]),
        )
        uids = {obj["metadata"]["uid"] for obj in stored.values()}
        assert {r["uid"] for r in resources} == uids
        assert {r["version"] for r in resources} == {"v1"}


async def test_edits_removals_and_drift_reach_the_cluster(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster = f"c-{unique}"
    async with joined(api, hub, tmp_path, cluster) as (managed, _):
        spoke = managed.api
        await api.create(
            ocm.MANIFEST_WORK,
            manifest_work("w", cluster, configmap("keep", a="1"), configmap("drop", b="2")),
        )
        await eventually(lambda: work_with(api, cluster, "w", Applied="True", Available="True"))
        dropped = await spoke.get(kinds.CONFIGMAP, "drop", namespace="default")

        # An edit: one manifest changed, one removed.
        await update_spec(api, cluster, "w", workload={"manifests": [configmap("keep", a="2")]})

        async def edited() -> bool:
            kept = await spoke.get(kinds.CONFIGMAP, "keep", namespace="default")
            return kept["data"] == {"a": "2"} and await gone(
                spoke, kinds.CONFIGMAP, "drop", "default"
            )

        await eventually(edited)
        done = await eventually(
            lambda: work_with(api, cluster, "w", Applied="True", Available="True")
        )
        assert len(done["status"]["resourceStatus"]["manifests"]) == 1

        async def recorded() -> Obj:
            # The record follows the deletion in the agent's next pass, not at once.
            found = await spoke.get(ocm.APPLIED_MANIFEST_WORK, f"{work_hash(hub)}-w")
            assert [r["name"] for r in found["status"]["appliedResources"]] == ["keep"]
            return found

        record = await eventually(recorded)
        assert dropped["metadata"]["uid"] not in {
            r["uid"] for r in record["status"]["appliedResources"]
        }

        # Drift: changed and deleted on the managed cluster, put back at resync.
        kept = await spoke.get(kinds.CONFIGMAP, "keep", namespace="default")
        await spoke.update(kinds.CONFIGMAP, {**kept, "data": {"a": "changed"}})

        async def restored() -> bool:
            found = await spoke.get(kinds.CONFIGMAP, "keep", namespace="default")
            return bool(found["data"] == {"a": "2"})

        await eventually(restored)
        before = await spoke.get(kinds.CONFIGMAP, "keep", namespace="default")
        await spoke.delete(kinds.CONFIGMAP, "keep", namespace="default")

        async def recreated() -> Obj | None:
            found = await spoke.get(kinds.CONFIGMAP, "keep", namespace="default")
            return found if found["metadata"]["uid"] != before["metadata"]["uid"] else None

        again = await eventually(recreated)
        assert again["data"] == {"a": "2"}

        async def recorded_anew() -> bool:
            record = await spoke.get(ocm.APPLIED_MANIFEST_WORK, f"{work_hash(hub)}-w")
            return [r["uid"] for r in record["status"]["appliedResources"]] == [
                again["metadata"]["uid"]
            ]

        await eventually(recorded_anew)


async def test_a_bad_manifest_fails_alone(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster = f"c-{unique}"
    async with joined(api, hub, tmp_path, cluster) as (managed, _):
        unknown = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
        invalid = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "bad", "namespace": "default"},
            "data": {"not a valid key!": "x"},
        }
        work = manifest_work("w", cluster, unknown, configmap("good", a="1"), invalid)
        await api.create(ocm.MANIFEST_WORK, work)
        done = await eventually(lambda: work_with(api, cluster, "w", Applied="False"))
        assert {c["type"]: c["reason"] for c in done["status"]["conditions"]}["Applied"] == (
            "AppliedManifestWorkFailed"
        )
        manifests = done["status"]["resourceStatus"]["manifests"]
        applied = [next(c for c in m["conditions"] if c["type"] == "Applied") for m in manifests]
        assert [a["status"] for a in applied] == ["False", "True", "False"]
        assert applied[0]["reason"] == "AppliedManifestFailed"
        assert applied[0]["message"] == (
            'Failed to apply manifest: the server doesn\'t have a resource type "Widget"'
        )
        assert applied[1]["message"] == "Apply manifest complete"
        assert applied[2]["message"].startswith(
            'Failed to apply manifest: ConfigMap "bad" is invalid'
        )
        assert "not a valid key!" in applied[2]["message"]
        assert manifests[0]["resourceMeta"] == {
            "ordinal": 0,
            "group": "example.com",
            "version": "v1",
            "kind": "Widget",
            "resource": "",
            "name": "w",
            "namespace": "",
        }
        assert (await managed.api.get(kinds.CONFIGMAP, "good", namespace="default"))["data"] == {
            "a": "1"
        }
        assert await gone(managed.api, kinds.CONFIGMAP, "bad", "default")

        # Fixed on the hub, it applies: the failure's backoff starts over with the new generation.
        await update_spec(
            api,
            cluster,
            "w",
            workload={"manifests": [configmap("good", a="1"), configmap("bad", b="2")]},
        )
        await eventually(lambda: work_with(api, cluster, "w", Applied="True", Available="True"))
        assert (await managed.api.get(kinds.CONFIGMAP, "bad", namespace="default"))["data"] == {
            "b": "2"
        }


async def test_a_deleted_work_takes_its_resources_then_goes(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster = f"c-{unique}"
    async with joined(api, hub, tmp_path, cluster) as (managed, _):
        spoke = managed.api
        held = configmap("held", a="1")
        held["metadata"]["finalizers"] = ["example.com/hold"]
        await api.create(ocm.MANIFEST_WORK, manifest_work("w", cluster, configmap("plain"), held))
        await eventually(lambda: work_with(api, cluster, "w", Applied="True", Available="True"))
        await api.delete(ocm.MANIFEST_WORK, "w", namespace=cluster)

        async def deleting() -> Obj | None:
            work = await api.get(ocm.MANIFEST_WORK, "w", namespace=cluster)
            found = [c for c in work["status"]["conditions"] if c["type"] == "Deleting"]
            return work if found and found[0]["status"] == "True" else None

        work = await eventually(deleting)
        deleting_condition = next(
            c for c in work["status"]["conditions"] if c["type"] == "Deleting"
        )
        assert (deleting_condition["reason"], deleting_condition["message"]) == (
            "WorkDeleting",
            "ManifestWork is being deleted",
        )
        await eventually(lambda: gone(spoke, kinds.CONFIGMAP, "plain", "default"))
        # Foreground: the work waits for the resource held by its finalizer.
        record_name = f"{work_hash(hub)}-w"

        async def waiting_for_held() -> bool:
            record = await spoke.get(ocm.APPLIED_MANIFEST_WORK, record_name)
            assert record["metadata"]["deletionTimestamp"]
            return [r["name"] for r in record["status"]["appliedResources"]] == ["held"]

        await eventually(waiting_for_held)
        assert (await api.get(ocm.MANIFEST_WORK, "w", namespace=cluster))["metadata"]["finalizers"]

        stuck = await spoke.get(kinds.CONFIGMAP, "held", namespace="default")
        await spoke.update(
            kinds.CONFIGMAP, {**stuck, "metadata": {**stuck["metadata"], "finalizers": []}}
        )
        await eventually(lambda: gone(spoke, kinds.CONFIGMAP, "held", "default"))
        await eventually(lambda: gone(spoke, ocm.APPLIED_MANIFEST_WORK, record_name))
        await eventually(lambda: gone(api, ocm.MANIFEST_WORK, "w", cluster))


ORPHAN_KEPT = {
    "propagationPolicy": "SelectivelyOrphan",
    "selectivelyOrphans": {
        "orphaningRules": [
            {"group": "", "resource": "configmaps", "namespace": "default", "name": "kept"}
        ]
    },
}


@pytest.mark.parametrize(
    ("delete_option", "left"),
    [
        ({"propagationPolicy": "Foreground"}, set()),
        ({"propagationPolicy": "Orphan"}, {"kept", "other"}),
        (ORPHAN_KEPT, {"kept"}),
    ],
    ids=["Foreground", "Orphan", "SelectivelyOrphan"],
)
async def test_delete_options_decide_what_a_deleted_work_leaves(
    hub: HubProcess,
    api: Api,
    tmp_path: Path,
    unique: str,
    delete_option: Obj,
    left: set[str],
) -> None:
    cluster = f"c-{unique}"
    async with joined(api, hub, tmp_path, cluster) as (managed, _):
        spoke = managed.api
        work = manifest_work(
            "w", cluster, configmap("kept"), configmap("other"), deleteOption=delete_option
        )
        await api.create(ocm.MANIFEST_WORK, work)
        await eventually(lambda: work_with(api, cluster, "w", Applied="True", Available="True"))
        record_name = f"{work_hash(hub)}-w"
        for name in ("kept", "other"):
            found = await spoke.get(kinds.CONFIGMAP, name, namespace="default")
            # What the work orphans carries no owner reference of it: nothing collects it.
            expected = [] if name in left else [(*OWNER_KIND, record_name)]
            assert owners(found) == expected
        await api.delete(ocm.MANIFEST_WORK, "w", namespace=cluster)
        await eventually(lambda: gone(api, ocm.MANIFEST_WORK, "w", cluster))
        assert await gone(spoke, ocm.APPLIED_MANIFEST_WORK, record_name)
        remaining = {
            o["metadata"]["name"]
            for o in (await spoke.list(kinds.CONFIGMAP, namespace="default"))["items"]
            if o["metadata"]["name"] in ("kept", "other")
        }
        assert remaining == left


async def test_orphaning_an_applied_resource_takes_the_owner_off(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster = f"c-{unique}"
    async with joined(api, hub, tmp_path, cluster) as (managed, _):
        await api.create(ocm.MANIFEST_WORK, manifest_work("w", cluster, configmap("kept")))
        await eventually(lambda: work_with(api, cluster, "w", Applied="True"))
        found = await managed.api.get(kinds.CONFIGMAP, "kept", namespace="default")
        assert owners(found) == [(*OWNER_KIND, f"{work_hash(hub)}-w")]
        await update_spec(api, cluster, "w", deleteOption=ORPHAN_KEPT)

        async def unowned() -> bool:
            found = await managed.api.get(kinds.CONFIGMAP, "kept", namespace="default")
            return owners(found) == []

        await eventually(unowned)


async def test_a_crd_and_its_instances_in_one_work(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    """The instance comes first in the work; upstream's order applies the CRD first, and
    the instance finds its kind once the CRD is served (a retry at worst)."""
    cluster = f"c-{unique}"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {
                "kind": "Widget",
                "plural": "widgets",
                "singular": "widget",
                "listKind": "WidgetList",
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                }
                            },
                        }
                    },
                }
            ],
        },
    }
    widget = {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "default"},
        "spec": {"size": 3},
    }
    async with joined(api, hub, tmp_path, cluster) as (managed, _):
        await api.create(ocm.MANIFEST_WORK, manifest_work("w", cluster, widget, crd))
        done = await eventually(
            lambda: work_with(api, cluster, "w", Applied="True", Available="True")
        )
        metas = [m["resourceMeta"] for m in done["status"]["resourceStatus"]["manifests"]]
        assert [(m["ordinal"], m["kind"], m["resource"]) for m in metas] == [
            (0, "Widget", "widgets"),
            (1, "CustomResourceDefinition", "customresourcedefinitions"),
        ]
        widgets = await managed.api.list(
            kinds.Kind("example.com", "v1", "Widget", "widgets", True), namespace="default"
        )
        assert [w["spec"] for w in widgets["items"]] == [{"size": 3}]


async def test_a_record_whose_work_vanished_while_the_agent_was_away_is_evicted(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster = f"c-{unique}"
    managed = EmbeddedCluster(name=cluster, data_dir=tmp_path / cluster)
    await managed.start()
    try:
        spoke = managed.api
        async with running_klusterlet(api, hub, managed, cluster):
            await api.create(ocm.MANIFEST_WORK, manifest_work("w", cluster, configmap("mine")))
            await eventually(lambda: work_with(api, cluster, "w", Applied="True"))
        # Away: the hub work goes without the agent (its finalizer taken off by hand).
        await api.delete(ocm.MANIFEST_WORK, "w", namespace=cluster)
        await api.patch(
            ocm.MANIFEST_WORK, "w", {"metadata": {"finalizers": None}}, namespace=cluster
        )
        other_hub = {
            "metadata": {"name": f"{'0' * 64}-w"},
            "spec": {"hubHash": "0" * 64, "manifestWorkName": "w", "agentID": "0" * 64},
        }
        await spoke.create(ocm.APPLIED_MANIFEST_WORK, other_hub)
        record_name = f"{work_hash(hub)}-w"
        grace = dataclasses.replace(FAST, appliedmanifestwork_eviction_grace_period=2.0)
        async with running_klusterlet(api, hub, managed, cluster, work=grace, accept_it=False):

            async def eviction_started() -> str | None:
                record = await spoke.get(ocm.APPLIED_MANIFEST_WORK, record_name)
                return (record.get("status") or {}).get("evictionStartTime")

            started = await eventually(eviction_started)
            assert await spoke.get(kinds.CONFIGMAP, "mine", namespace="default")
            await eventually(lambda: gone(spoke, kinds.CONFIGMAP, "mine", "default"))
            await eventually(lambda: gone(spoke, ocm.APPLIED_MANIFEST_WORK, record_name))
            assert started
            left = await spoke.get(ocm.APPLIED_MANIFEST_WORK, other_hub["metadata"]["name"])
            assert "status" not in left or "evictionStartTime" not in left["status"]
    finally:
        await managed.stop()


async def test_a_deleted_resource_is_put_back_at_the_status_sync_not_only_the_resync(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    """The status sync that finds an applied resource gone has the work applied at once;
    upstream waits for its 4 to 6 minute resync (here an hour, never reached)."""
    cluster = f"c-{unique}"
    slow_resync = dataclasses.replace(FAST, resync_interval=3600.0)
    async with joined(api, hub, tmp_path, cluster, work=slow_resync) as (managed, _):
        spoke = managed.api
        await api.create(ocm.MANIFEST_WORK, manifest_work("w", cluster, configmap("back", a="1")))
        await eventually(lambda: work_with(api, cluster, "w", Applied="True", Available="True"))
        before = await spoke.get(kinds.CONFIGMAP, "back", namespace="default")
        await spoke.delete(kinds.CONFIGMAP, "back", namespace="default")

        async def recreated() -> bool:
            found = await spoke.get(kinds.CONFIGMAP, "back", namespace="default")
            return bool(found["metadata"]["uid"] != before["metadata"]["uid"])

        await eventually(recreated)
