"""Add-on agents deployed through ManifestWorks, through a real hub: the deploy
controller runs in this process (a Manager over the hub) with test add-ons; a work
agent on an embedded cluster applies the works and reports the workloads (simulated
there, as the cluster says) that tell the add-on's health."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pyocm.addon.agent import AgentAddonOptions, HealthProberType
from pyocm.addon.deploy.manager import add_addon_deploy_controllers
from pyocm.api import conditions
from pyocm.api import kinds as ocm
from pyocm.base import metrics
from pyocm.base.clock import RealClock
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.manager import Manager
from pyocm.runtime.retry import retry_on_conflict
from pyocm.testing import HubProcess
from tests.support import eventually
from tests.workagents import joined

Obj = dict[str, Any]
AGENT_NS = "open-cluster-management-agent-addon"
CONTROLLER = "addon-deploy-controller"
ORPHAN = "addon.open-cluster-management.io/deletion-orphan"


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """The work agent joins through registration: these tests need the hub's controllers."""
    return ocm_hub


@dataclass
class Addon:
    """An add-on as a test writes one: its options and a manifests function."""

    opts: AgentAddonOptions
    render: Callable[[Obj, Obj], Sequence[Obj]]

    def options(self) -> AgentAddonOptions:
        return self.opts

    async def manifests(self, cluster: Any, addon: Any) -> list[Obj]:
        return list(self.render(cluster, addon))


@contextlib.asynccontextmanager
async def deploying(api: Api, *addons: Addon) -> AsyncIterator[None]:
    manager = Manager(api)
    add_addon_deploy_controllers(manager, addons=addons)
    task = asyncio.create_task(manager.run())
    try:
        await manager.wait_synced()
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def agent_objects(name: str, *, hook_suspended: bool) -> list[Obj]:
    """A namespace and a ConfigMap left on removal, the agent Deployment and a pre-delete Job
    (which the embedded cluster's simulation completes unless it is suspended; a Job's
    template cannot change, so the unsuspended one is another Job)."""
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": AGENT_NS, "annotations": {ORPHAN: ""}},
        },
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": f"{name}-kept",
                "namespace": AGENT_NS,
                "annotations": {ORPHAN: ""},
            },
            "data": {"a": "b"},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": f"{name}-agent", "namespace": AGENT_NS},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "agent", "image": "agent:1"}]},
                },
            },
        },
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": f"{name}-cleanup" if hook_suspended else f"{name}-cleanup-now",
                "namespace": AGENT_NS,
                "annotations": {"addon.open-cluster-management.io/addon-pre-delete": ""},
            },
            "spec": {
                "suspend": hook_suspended,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "cleanup", "image": "agent:1"}],
                    }
                },
            },
        },
    ]


def addon_object(name: str, cluster: str) -> Obj:
    return {
        "apiVersion": "addon.open-cluster-management.io/v1beta1",
        "kind": "ManagedClusterAddOn",
        "metadata": {"name": name, "namespace": cluster},
        "spec": {},
    }


def reconciles() -> int:
    """How many passes the deploy controllers of this process have made."""
    return sum(metrics.reconcile_stats(CONTROLLER).results.values())


async def passes_after(before: int, times: int = 1) -> None:
    """Wait for ``times`` more passes than ``before`` (counted before the write that
    wakes the controller), so a test can assert what a pass did not do."""

    async def done() -> bool:
        return reconciles() >= before + times

    await eventually(done)


async def work_writes(api: Api) -> float:
    """Writes to ManifestWorks themselves (not their status) the hub has answered."""
    total = 0.0
    for line in (await api.text("/metrics")).splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', line))
        if (
            labels.get("resource") == "manifestworks"
            and labels.get("subresource") == ""
            and labels.get("verb") in ("PATCH", "APPLY", "UPDATE", "POST")
        ):
            total += float(line.rsplit(" ", 1)[1])
    return total


async def set_condition(api: Api, cluster: str, name: str, type: str, status: str = "True") -> None:
    """Set one condition on the add-on's status as the admin (what another controller
    would write), keeping the others."""

    async def write() -> Obj:
        mca = await api.get(ocm.MANAGED_CLUSTER_ADDON, name, namespace=cluster)
        found = mca.setdefault("status", {}).setdefault("conditions", [])
        conditions.set_condition(
            found,
            type=type,
            status=status,
            reason="Test",
            message="set by the test",
            now=RealClock().now(),
        )
        return await api.update(ocm.MANAGED_CLUSTER_ADDON, mca, subresource="status")

    await retry_on_conflict(write, clock=RealClock())


async def condition(api: Api, cluster: str, name: str, type: str) -> Obj:
    mca = await api.get(ocm.MANAGED_CLUSTER_ADDON, name, namespace=cluster)
    return conditions.find(conditions.of(mca), type) or {}


async def has(api: Api, cluster: str, name: str, type: str, **fields: str) -> Obj | None:
    found = await condition(api, cluster, name, type)
    return found if all(found.get(k) == v for k, v in fields.items()) else None


async def gone(api: Api, kind: Any, name: str, namespace: str | None = None) -> bool:
    try:
        await api.get(kind, name, namespace=namespace)
    except ApiError as err:
        return err.code == 404
    return False


async def plain_cluster(api: Api, name: str) -> None:
    """A ManagedCluster and its namespace, no agent: enough for works to be written."""
    await api.create(
        ocm.MANAGED_CLUSTER, {"metadata": {"name": name}, "spec": {"hubAcceptsClient": True}}
    )
    with contextlib.suppress(ApiError):
        await api.create(kinds.NAMESPACE, {"metadata": {"name": name}})


async def test_an_agent_is_deployed_reported_available_and_its_hook_run_on_removal(
    api: Api, hub: HubProcess, tmp_path: Path, unique: str
) -> None:
    name, cluster = f"hello-{unique}", f"c-{unique}"
    hook = {"suspended": True}
    addon = Addon(
        AgentAddonOptions(name=name, health=HealthProberType.WORKLOAD_AVAILABILITY),
        lambda _cluster, _mca: agent_objects(name, hook_suspended=hook["suspended"]),
    )
    async with joined(api, hub, tmp_path, cluster) as (managed, _klusterlet), deploying(api, addon):
        work_name = f"addon-{name}-deploy-0"
        before = reconciles()
        await api.create(ocm.MANAGED_CLUSTER_ADDON, addon_object(name, cluster))
        # Nothing is deployed before the registration is applied.
        await passes_after(before)
        assert await gone(api, ocm.MANIFEST_WORK, work_name, cluster)

        await set_condition(api, cluster, name, "RegistrationApplied")
        work = await eventually(lambda: api.get(ocm.MANIFEST_WORK, work_name, namespace=cluster))
        mca = await api.get(ocm.MANAGED_CLUSTER_ADDON, name, namespace=cluster)
        assert work["metadata"]["labels"] == {"open-cluster-management.io/addon-name": name}
        assert work["metadata"]["ownerReferences"] == [
            {
                "apiVersion": "addon.open-cluster-management.io/v1beta1",
                "kind": "ManagedClusterAddOn",
                "name": name,
                "uid": mca["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        assert "annotations" not in work["metadata"]
        kinds_deployed = [m["kind"] for m in work["spec"]["workload"]["manifests"]]
        assert sorted(kinds_deployed) == ["ConfigMap", "Deployment", "Namespace"]
        assert work["spec"]["manifestConfigs"] == [
            {
                "resourceIdentifier": {
                    "group": "apps",
                    "resource": "deployments",
                    "name": f"{name}-agent",
                    "namespace": AGENT_NS,
                },
                "feedbackRules": [{"type": "WellKnownStatus"}],
                "feedbackScrapeType": "Poll",
            }
        ]
        assert work["spec"]["deleteOption"] == {
            "propagationPolicy": "SelectivelyOrphan",
            "selectivelyOrphans": {
                "orphaningRules": [
                    {"group": "", "resource": "namespaces", "name": AGENT_NS, "namespace": ""},
                    {
                        "group": "",
                        "resource": "configmaps",
                        "name": f"{name}-kept",
                        "namespace": AGENT_NS,
                    },
                ]
            },
        }
        assert mca["metadata"]["finalizers"] == [
            "addon.open-cluster-management.io/addon-pre-delete"
        ]

        applied = await eventually(
            lambda: has(api, cluster, name, "ManifestApplied", status="True")
        )
        assert applied["reason"] == "AddonManifestApplied"
        assert applied["message"] == "manifests of addon are applied successfully"
        available = await eventually(lambda: has(api, cluster, name, "Available", status="True"))
        assert (available["reason"], available["message"]) == (
            "ProbeAvailable",
            f"{name} add-on is available.",
        )
        mca = await api.get(ocm.MANAGED_CLUSTER_ADDON, name, namespace=cluster)
        assert mca["status"]["healthCheck"] == {"mode": "Customized"}
        deployed = await managed.api.get(kinds.DEPLOYMENT, f"{name}-agent", namespace=AGENT_NS)
        assert deployed["status"]["readyReplicas"] == 1
        # The hook is not deployed while the add-on lives.
        assert await gone(api, ocm.MANIFEST_WORK, f"addon-{name}-pre-delete", cluster)

        # An unchanged work is not written again when the add-on is looked at again.
        writes, before = await work_writes(api), reconciles()
        await set_condition(api, cluster, name, "Configured")
        await passes_after(before)
        assert await work_writes(api) == writes

        # Removal waits for the pre-delete hook: its work is applied, and while its Job
        # has not completed the add-on stays.
        await api.delete(ocm.MANAGED_CLUSTER_ADDON, name, namespace=cluster)
        waiting = await eventually(
            lambda: has(api, cluster, name, "HookManifestCompleted", status="False")
        )
        assert (waiting["reason"], waiting["message"]) == (
            "HookManifestIsNotCompleted",
            f"hook manifestWork addon-{name}-pre-delete is not completed.",
        )
        mca = await api.get(ocm.MANAGED_CLUSTER_ADDON, name, namespace=cluster)
        assert mca["metadata"]["deletionTimestamp"]
        # The condition comes with the hook work; the work agent applies its Job after.
        await eventually(lambda: managed.api.get(kinds.JOB, f"{name}-cleanup", namespace=AGENT_NS))

        # Once a Job runs and completes, the add-on goes, and its works with it (owner
        # references); the orphaned Namespace and ConfigMap stay on the cluster.
        hook["suspended"] = False
        await api.patch(
            ocm.MANAGED_CLUSTER_ADDON,
            name,
            {"metadata": {"labels": {"touched": "yes"}}},
            namespace=cluster,
        )
        await eventually(lambda: gone(api, ocm.MANAGED_CLUSTER_ADDON, name, cluster))
        await eventually(lambda: gone(api, ocm.MANIFEST_WORK, work_name, cluster))
        await eventually(lambda: gone(managed.api, kinds.DEPLOYMENT, f"{name}-agent", AGENT_NS))
        await managed.api.get(kinds.CONFIGMAP, f"{name}-kept", namespace=AGENT_NS)


async def test_a_render_error_is_reported_as_manifest_work_apply_failed(
    api: Api, unique: str
) -> None:
    name, cluster = f"broken-{unique}", f"c-{unique}"

    def render(_cluster: Obj, _mca: Obj) -> list[Obj]:
        raise RuntimeError("no image for this cluster")

    addon = Addon(AgentAddonOptions(name=name), render)
    await plain_cluster(api, cluster)
    async with deploying(api, addon):
        await api.create(ocm.MANAGED_CLUSTER_ADDON, addon_object(name, cluster))
        await set_condition(api, cluster, name, "RegistrationApplied")
        failed = await eventually(
            lambda: has(api, cluster, name, "ManifestApplied", status="False")
        )
        assert failed["reason"] == "ManifestWorkApplyFailed"
        assert (
            failed["message"]
            == "failed to get manifest from agent interface: no image for this cluster"
        )


async def test_config_check_and_config_hashes(api: Api, unique: str) -> None:
    name, cluster = f"checked-{unique}", f"c-{unique}"
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
    }
    options = AgentAddonOptions(name=name, config_check=True, health=HealthProberType.LEASE)
    addon = Addon(options, lambda _c, _m: [configmap])
    await plain_cluster(api, cluster)
    async with deploying(api, addon):
        await api.create(ocm.MANAGED_CLUSTER_ADDON, addon_object(name, cluster))
        await set_condition(api, cluster, name, "RegistrationApplied")

        async def mode() -> str | None:
            mca = await api.get(ocm.MANAGED_CLUSTER_ADDON, name, namespace=cluster)
            return mca.get("status", {}).get("healthCheck", {}).get("mode")

        # A pass has seen the registration (it set the mode) and, the add-on not being
        # configured, deployed nothing.
        await eventually(mode)
        work_name = f"addon-{name}-deploy-0"
        assert await gone(api, ocm.MANIFEST_WORK, work_name, cluster)

        async def configure() -> Obj:
            mca = await api.get(ocm.MANAGED_CLUSTER_ADDON, name, namespace=cluster)
            mca["status"]["configReferences"] = [
                {
                    "group": "addon.open-cluster-management.io",
                    "resource": "addondeploymentconfigs",
                    "desiredConfig": {"namespace": "default", "name": "cfg", "specHash": "h1"},
                }
            ]
            return await api.update(ocm.MANAGED_CLUSTER_ADDON, mca, subresource="status")

        await retry_on_conflict(configure, clock=RealClock())
        await set_condition(api, cluster, name, "Configured")
        work = await eventually(lambda: api.get(ocm.MANIFEST_WORK, work_name, namespace=cluster))
        assert work["metadata"]["annotations"] == {
            "open-cluster-management.io/config-spec-hash": (
                '{"addondeploymentconfigs.addon.open-cluster-management.io/default/cfg":"h1"}'
            )
        }


async def test_health_modes_of_lease_and_work_probers(api: Api, unique: str) -> None:
    cluster = f"c-{unique}"
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "default"},
    }
    lease = Addon(
        AgentAddonOptions(name=f"lease-{unique}", health=HealthProberType.LEASE),
        lambda _c, _m: [configmap],
    )
    work = Addon(
        AgentAddonOptions(name=f"work-{unique}", health=HealthProberType.WORK),
        lambda _c, _m: [configmap],
    )
    nothing = Addon(AgentAddonOptions(name=f"empty-{unique}"), lambda _c, _m: [])
    await plain_cluster(api, cluster)
    async with deploying(api, lease, work, nothing):
        for addon in (lease, work, nothing):
            await api.create(ocm.MANAGED_CLUSTER_ADDON, addon_object(addon.opts.name, cluster))
            await set_condition(api, cluster, addon.opts.name, "RegistrationApplied")

        async def mode(name: str) -> str | None:
            mca = await api.get(ocm.MANAGED_CLUSTER_ADDON, name, namespace=cluster)
            return mca.get("status", {}).get("healthCheck", {}).get("mode")

        assert await eventually(lambda: mode(lease.opts.name)) == "Lease"
        assert await eventually(lambda: mode(work.opts.name)) == "Customized"
        found = await eventually(
            lambda: has(api, cluster, work.opts.name, "Available", status="True")
        )
        assert (found["reason"], found["message"]) == (
            "WorkApplied",
            "Addon manifestWork is applied",
        )
        empty = await eventually(
            lambda: has(api, cluster, nothing.opts.name, "ManifestApplied", status="True")
        )
        assert (empty["reason"], empty["message"]) == (
            "AddonManifestApplied",
            "no manifest need to apply",
        )
        # No prober: the mode is left to others.
        assert await mode(nothing.opts.name) is None
        # The Lease prober's add-on is the registration agent's to tell.
        await api.get(ocm.MANIFEST_WORK, f"addon-{lease.opts.name}-deploy-0", namespace=cluster)
        assert await condition(api, cluster, lease.opts.name, "Available") == {}
