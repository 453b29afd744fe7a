"""Through the whole agent (a real hub, a joined embedded cluster): status feedback from
a Deployment the embedded cluster's workload simulation makes ready, each update
strategy, and an executor that may not apply what its work carries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.support import eventually
from tests.workagents import (
    configmap,
    joined,
    manifest_work,
    reconciled,
    update_spec,
    work_with,
)

Obj = dict[str, Any]


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    return ocm_hub


def deployment(name: str, replicas: int = 2) -> Obj:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
            },
        },
    }


def config(kind: str, name: str, **rest: Any) -> Obj:
    group, resource = {
        "Deployment": ("apps", "deployments"),
        "ConfigMap": ("", "configmaps"),
    }[kind]
    identifier = {"group": group, "resource": resource, "name": name, "namespace": "default"}
    return {"resourceIdentifier": identifier, **rest}


def strategy(type: str, **rest: Any) -> Obj:
    return {"updateStrategy": {"type": type, **rest}}


def feedback(work: Obj, index: int = 0) -> dict[str, Any]:
    manifest = work["status"]["resourceStatus"]["manifests"][index]
    values = (manifest.get("statusFeedback") or {}).get("values") or []
    return {v["name"]: next(x for k, x in v["fieldValue"].items() if k != "type") for v in values}


def applied_condition(work: Obj, index: int = 0) -> Obj:
    manifest = work["status"]["resourceStatus"]["manifests"][index]
    return next(c for c in manifest["conditions"] if c["type"] == "Applied")


async def test_status_feedback_reports_a_deployments_readiness(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster = f"c-{unique}"
    rules = [
        {"type": "WellKnownStatus"},
        {
            "type": "JSONPaths",
            "jsonPaths": [{"name": "image", "path": ".spec.template.spec.containers[0].image"}],
        },
    ]
    async with joined(api, hub, tmp_path, cluster):
        work = manifest_work(
            "w",
            cluster,
            deployment("web"),
            manifestConfigs=[config("Deployment", "web", feedbackRules=rules)],
        )
        await api.create(ocm.MANIFEST_WORK, work)

        async def ready() -> Obj | None:
            found = await work_with(api, cluster, "w", Applied="True", Available="True")
            return found if found and feedback(found).get("ReadyReplicas") == 2 else None

        done = await eventually(ready)
        assert feedback(done) == {
            "ReadyReplicas": 2,
            "Replicas": 2,
            "AvailableReplicas": 2,
            "image": "nginx:1.27",
        }
        synced = next(
            c
            for c in done["status"]["resourceStatus"]["manifests"][0]["conditions"]
            if c["type"] == "StatusFeedbackSynced"
        )
        assert (synced["status"], synced["reason"]) == ("True", "StatusFeedbackSynced")

        # Scaled on the hub: the feedback follows at the next status sync.
        web = deployment("web", replicas=3)
        await update_spec(api, cluster, "w", workload={"manifests": [web]})

        async def scaled() -> bool:
            found = await api.get(ocm.MANIFEST_WORK, "w", namespace=cluster)
            return bool(feedback(found).get("ReadyReplicas") == 3)

        await eventually(scaled)


async def test_create_only_creates_and_then_leaves_the_object_alone(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster = f"c-{unique}"
    async with joined(api, hub, tmp_path, cluster) as (managed, _):
        spoke = managed.api
        work = manifest_work(
            "w",
            cluster,
            configmap("once", a="1"),
            manifestConfigs=[config("ConfigMap", "once", **strategy("CreateOnly"))],
        )
        await api.create(ocm.MANIFEST_WORK, work)
        await eventually(lambda: work_with(api, cluster, "w", Applied="True"))
        found = await spoke.get(kinds.CONFIGMAP, "once", namespace="default")
        await spoke.update(kinds.CONFIGMAP, {**found, "data": {"a": "changed"}})
        await update_spec(api, cluster, "w", workload={"manifests": [configmap("once", a="2")]})
        await eventually(lambda: work_with(api, cluster, "w", Applied="True"))
        # Two applies later, neither the hub's edit nor the cluster's was undone.
        await reconciled(2)
        found = await spoke.get(kinds.CONFIGMAP, "once", namespace="default")
        assert found["data"] == {"a": "changed"}


async def test_server_side_apply_owns_its_fields_and_reports_a_conflict(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster = f"c-{unique}"
    async with joined(api, hub, tmp_path, cluster) as (managed, _):
        spoke = managed.api
        ssa = strategy("ServerSideApply")
        work = manifest_work(
            "w",
            cluster,
            configmap("shared", a="1"),
            manifestConfigs=[config("ConfigMap", "shared", **ssa)],
        )
        await api.create(ocm.MANIFEST_WORK, work)
        await eventually(lambda: work_with(api, cluster, "w", Applied="True"))
        found = await spoke.get(kinds.CONFIGMAP, "shared", namespace="default")
        assert "work-agent" in {m["manager"] for m in found["metadata"]["managedFields"]}

        # Another manager takes field a: the agent's next apply conflicts, and says so.
        taken = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "shared", "namespace": "default"},
            "data": {"a": "mine"},
        }
        await spoke.apply(kinds.CONFIGMAP, taken, field_manager="someone", force=True)
        await update_spec(api, cluster, "w", workload={"manifests": [configmap("shared", a="2")]})
        conflicted = await eventually(lambda: work_with(api, cluster, "w", Applied="False"))
        message = applied_condition(conflicted)["message"]
        assert message.startswith("Failed to apply manifest: ")
        assert "conflict" in message.lower()
        assert (await spoke.get(kinds.CONFIGMAP, "shared", namespace="default"))["data"] == {
            "a": "mine"
        }

        # With force, the field is taken back.
        forced = strategy(
            "ServerSideApply", serverSideApply={"force": True, "fieldManager": "work-agent"}
        )
        await update_spec(
            api, cluster, "w", manifestConfigs=[config("ConfigMap", "shared", **forced)]
        )
        await eventually(lambda: work_with(api, cluster, "w", Applied="True"))
        assert (await spoke.get(kinds.CONFIGMAP, "shared", namespace="default"))["data"] == {
            "a": "2"
        }


async def test_read_only_never_writes_and_reports_what_is_there(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster = f"c-{unique}"
    async with joined(api, hub, tmp_path, cluster) as (managed, _):
        spoke = managed.api
        rules = [{"type": "JSONPaths", "jsonPaths": [{"name": "a", "path": ".data.a"}]}]
        work = manifest_work(
            "w",
            cluster,
            configmap("watched", a="from the hub"),
            manifestConfigs=[
                config("ConfigMap", "watched", feedbackRules=rules, **strategy("ReadOnly"))
            ],
        )
        await api.create(ocm.MANIFEST_WORK, work)
        missing = await eventually(
            lambda: work_with(api, cluster, "w", Applied="True", Available="False")
        )
        assert applied_condition(missing)["message"] == "Apply manifest complete"
        assert all(
            o["metadata"]["name"] != "watched"
            for o in (await spoke.list(kinds.CONFIGMAP, namespace="default"))["items"]
        )
        await spoke.create(kinds.CONFIGMAP, configmap("watched", a="from the cluster"))

        async def reported() -> bool:
            found = await work_with(api, cluster, "w", Applied="True", Available="True")
            return found is not None and feedback(found) == {"a": "from the cluster"}

        await eventually(reported)
        found = await spoke.get(kinds.CONFIGMAP, "watched", namespace="default")
        assert found["data"] == {"a": "from the cluster"}
        assert not found["metadata"].get("ownerReferences")


async def test_an_executor_that_may_not_apply_is_refused_until_allowed(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster = f"c-{unique}"
    executor = {
        "subject": {
            "type": "ServiceAccount",
            "serviceAccount": {"namespace": "default", "name": "deployer"},
        }
    }
    async with joined(api, hub, tmp_path, cluster) as (managed, _):
        spoke = managed.api
        work = manifest_work("w", cluster, configmap("guarded", a="1"), executor=executor)
        await api.create(ocm.MANIFEST_WORK, work)
        refused = await eventually(lambda: work_with(api, cluster, "w", Applied="False"))
        condition = applied_condition(refused)
        assert condition["reason"] == "AppliedManifestFailed"
        assert condition["message"] == (
            "Failed to apply manifest: not allowed to apply the resource  configmaps, "
            "default guarded, will try again in 1m0s"
        )
        assert all(
            o["metadata"]["name"] != "guarded"
            for o in (await spoke.list(kinds.CONFIGMAP, namespace="default"))["items"]
        )

        # Allowed on the managed cluster, the next generation applies at once.
        role = {
            "metadata": {"name": "deployer", "namespace": "default"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]}],
        }
        await spoke.create(kinds.ROLE, role)
        binding = {
            "metadata": {"name": "deployer", "namespace": "default"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "deployer",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": "default"}],
        }
        await spoke.create(kinds.ROLE_BINDING, binding)
        await update_spec(api, cluster, "w", workload={"manifests": [configmap("guarded", a="2")]})
        await eventually(lambda: work_with(api, cluster, "w", Applied="True"))
        found = await spoke.get(kinds.CONFIGMAP, "guarded", namespace="default")
        assert found["data"] == {"a": "2"}
