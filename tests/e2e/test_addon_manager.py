"""The hub add-on manager's install strategy and configuration controllers against a
real hub: placements deciding where MCAs are created and deleted, owner references,
annotations, default and per-placement configs with upstream's spec hashes, the
Configured and Progressing conditions, and a Progressive rollout advancing as add-on
works complete.

The controllers run in the test process against the hub's API, with the test's add-on
registered; the hub runs its other controllers (placement, registration) but not its
own add-on manager (gate ``AddonManagement=false``), so each object has one writer.
Clusters are created directly (no agents)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import pytest_asyncio

from pyocm.addon.agent import ADDON_DEPLOYMENT_CONFIG, AgentAddonOptions
from pyocm.addon.hub.manager import add_addon_manager_controllers
from pyocm.addon.hub.spechash import spec_hash
from pyocm.api import conditions
from pyocm.api import kinds as ocm
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.events import Recorder
from pyocm.runtime.manager import Manager
from pyocm.testing import HubProcess
from tests.conftest import hub_process
from tests.support import cluster_set, label_selector
from tests.support import eventually as _eventually

Obj = dict[str, Any]
ADC = kinds.Kind(
    "addon.open-cluster-management.io",
    "v1alpha1",
    "AddOnDeploymentConfig",
    "addondeploymentconfigs",
    True,
)
ADC_GR = {"group": "addon.open-cluster-management.io", "resource": "addondeploymentconfigs"}
INSTALL_NAMESPACE_ANNOTATION = "addon.open-cluster-management.io/v1alpha1-install-namespace"
INSTALLED_BY = "addons.pyocm.io/installed-by"
AGENTLESS = [
    {"key": "cluster.open-cluster-management.io/unreachable", "operator": "Exists"},
    {"key": "cluster.open-cluster-management.io/unavailable", "operator": "Exists"},
]
#: An AddOnDeploymentConfig as upstream's Go client sends it in its integration tests
#: (``proxyConfig`` is a struct, never omitted); its stored form hashes to this.
GO_CLIENT_ADC_SPEC = {"customizedVariables": [{"name": "test", "value": "test"}], "proxyConfig": {}}
GO_CLIENT_ADC_HASH = "ea4e6089e8b2f584c1cd8b86e16a15df3186b30744f433ede7436091c93a4cc7"


@pytest.fixture(scope="session")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """The placement controller decides; the registration controllers make namespaces;
    the add-on manager is the test's."""
    yield from hub_process(
        tmp_path_factory, "addon-manager-hub", ["--feature-gates", "AddonManagement=false"]
    )


@dataclass
class ConfigReadingAddon:
    """An add-on pyocm implements, reading AddOnDeploymentConfigs."""

    name: str

    def options(self) -> AgentAddonOptions:
        return AgentAddonOptions(name=self.name, supported_configs=(ADDON_DEPLOYMENT_CONFIG,))

    async def manifests(self, cluster: ManagedCluster, addon: ManagedClusterAddOn) -> list[Obj]:
        return []


@dataclass
class World:
    api: Api
    unique: str
    clusters: list[str] = field(default_factory=list)

    @property
    def namespace(self) -> str:
        return self.unique

    @property
    def addon(self) -> str:
        return f"addon-{self.unique}"

    async def cluster(self, name: str, *, annotations: dict[str, str] | None = None) -> str:
        full = f"{name}-{self.unique}"
        meta: Obj = {"name": full, "labels": {"fleet": self.unique, "pick": "yes"}}
        if annotations:
            meta["annotations"] = annotations
        await self.api.create(
            ocm.MANAGED_CLUSTER, {"metadata": meta, "spec": {"hubAcceptsClient": True}}
        )
        self.clusters.append(full)

        async def namespace_made() -> bool:
            await self.api.get(kinds.NAMESPACE, full)
            return True

        await eventually(namespace_made)
        return full

    async def placement(self, name: str, **spec: Any) -> None:
        spec.setdefault(
            "predicates",
            [{"requiredClusterSelector": {"labelSelector": {"matchLabels": {"pick": "yes"}}}}],
        )
        spec["tolerations"] = AGENTLESS
        await self.api.create(
            ocm.PLACEMENT, {"metadata": {"name": name, "namespace": self.namespace}, "spec": spec}
        )

    async def cma(self, spec: Obj, *, annotations: dict[str, str] | None = None) -> Obj:
        meta: Obj = {"name": self.addon}
        if annotations:
            meta["annotations"] = annotations
        return await self.api.create(ocm.CLUSTER_MANAGEMENT_ADDON, {"metadata": meta, "spec": spec})

    async def adc(self, name: str, spec: Obj) -> Obj:
        return await self.api.create(
            ADC, {"metadata": {"name": name, "namespace": self.namespace}, "spec": spec}
        )

    async def mca(self, cluster: str) -> Obj:
        return await self.api.get(ocm.MANAGED_CLUSTER_ADDON, self.addon, namespace=cluster)

    async def mca_clusters(self) -> list[str]:
        found = []
        for cluster in self.clusters:
            with contextlib.suppress(ApiError):
                await self.mca(cluster)
                found.append(cluster)
        return found

    async def relabel(self, cluster: str, pick: str) -> None:
        await self.api.patch(ocm.MANAGED_CLUSTER, cluster, {"metadata": {"labels": {"pick": pick}}})


@pytest_asyncio.fixture
async def world(api: Api, unique: str) -> AsyncIterator[World]:
    made = World(api, unique)
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    await api.create(
        ocm.MANAGED_CLUSTER_SET, cluster_set(f"set-{unique}", label_selector({"fleet": unique}))
    )
    await api.create(
        ocm.MANAGED_CLUSTER_SET_BINDING,
        {
            "metadata": {"name": f"set-{unique}", "namespace": unique},
            "spec": {"clusterSet": f"set-{unique}"},
        },
    )
    manager = Manager(api)
    add_addon_manager_controllers(
        manager,
        recorder=Recorder(api, controller="addon-manager", instance="test"),
        addons={made.addon: ConfigReadingAddon(made.addon)},
    )
    running = asyncio.create_task(manager.run())
    try:
        yield made
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)
        with contextlib.suppress(ApiError):
            await api.delete(ocm.CLUSTER_MANAGEMENT_ADDON, made.addon)
        for cluster in made.clusters:
            with contextlib.suppress(ApiError):
                await api.delete(ocm.MANAGED_CLUSTER, cluster)
        await api.delete(ocm.MANAGED_CLUSTER_SET, f"set-{unique}")


def placements_strategy(*placements: Obj) -> Obj:
    return {"installStrategy": {"type": "Placements", "placements": list(placements)}}


async def eventually(check: Callable[[], Awaitable[bool]]) -> None:
    """Until ``check`` passes; a status not written yet (a missing key or item) is
    "not yet" as a failed assertion is."""

    async def guarded() -> bool:
        try:
            return await check()
        except (KeyError, IndexError, TypeError, ValueError) as err:
            raise AssertionError(repr(err)) from err

    await _eventually(guarded)


def addon_annotations(mca: Obj) -> dict[str, str]:
    """The MCA's add-on annotations but the install namespace one the v1alpha1 storage
    version adds (its ``installNamespace`` default, converted)."""
    found = mca["metadata"].get("annotations") or {}
    return {k: v for k, v in found.items() if k != INSTALL_NAMESPACE_ANNOTATION}


def condition(obj: Obj, type: str) -> tuple[str, str, str] | None:
    found = conditions.find(conditions.of(obj), type)
    return None if found is None else (found["status"], found["reason"], found["message"])


async def test_placements_install_creates_owns_and_removes_mcas(world: World) -> None:
    one = await world.cluster(
        "one", annotations={"addon.open-cluster-management.io/x": "1", "other": "no"}
    )
    two = await world.cluster("two")
    three = await world.cluster("three")
    await world.relabel(three, "no")
    await world.placement("all")
    cma = await world.cma(placements_strategy({"namespace": world.namespace, "name": "all"}))

    async def installed() -> bool:
        assert await world.mca_clusters() == [one, two]
        return True

    await eventually(installed)
    mca = await world.mca(one)
    assert mca["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "addon.open-cluster-management.io/v1beta1",
            "kind": "ClusterManagementAddOn",
            "name": world.addon,
            "uid": cma["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert addon_annotations(mca) == {
        "addon.open-cluster-management.io/x": "1",
        INSTALLED_BY: "install-strategy",
    }

    # A cluster's add-on annotations follow onto its MCA.
    await world.api.patch(
        ocm.MANAGED_CLUSTER,
        one,
        {
            "metadata": {
                "annotations": {
                    "addon.open-cluster-management.io/x": None,
                    "addon.open-cluster-management.io/y": "2",
                }
            }
        },
    )

    async def synced() -> bool:
        assert addon_annotations(await world.mca(one)) == {
            "addon.open-cluster-management.io/y": "2",
            INSTALLED_BY: "install-strategy",
        }
        return True

    await eventually(synced)

    # Leaving the placement removes the MCA the strategy created; an MCA a user created
    # stays, where no placement selects and after its cluster leaves (upstream removes
    # both); a deleted selected one comes back.
    await world.api.create(
        ocm.MANAGED_CLUSTER_ADDON,
        {"metadata": {"name": world.addon, "namespace": three}, "spec": {}},
    )
    four = await world.cluster("four")
    await world.api.create(
        ocm.MANAGED_CLUSTER_ADDON,
        {"metadata": {"name": world.addon, "namespace": four}, "spec": {}},
    )

    async def owned_by_cma() -> bool:
        for cluster in (three, four):
            refs = (await world.mca(cluster))["metadata"].get("ownerReferences")
            assert refs and refs[0]["uid"] == cma["metadata"]["uid"]
        return True

    await eventually(owned_by_cma)
    # Four leaves first, so the pass that removes two's MCA has seen four leave too.
    await world.relabel(four, "no")
    await world.relabel(two, "no")

    async def left() -> bool:
        assert await world.mca_clusters() == [one, three, four]
        return True

    await eventually(left)
    assert INSTALLED_BY not in (await world.mca(four))["metadata"].get("annotations", {})
    first_uid = (await world.mca(one))["metadata"]["uid"]
    await world.api.delete(ocm.MANAGED_CLUSTER_ADDON, world.addon, namespace=one)

    async def recreated() -> bool:
        assert (await world.mca(one))["metadata"]["uid"] != first_uid
        return True

    await eventually(recreated)


async def test_manual_mca_gets_its_cma_as_owner(world: World) -> None:
    one = await world.cluster("one")
    cma = await world.cma({})
    await world.api.create(
        ocm.MANAGED_CLUSTER_ADDON, {"metadata": {"name": world.addon, "namespace": one}, "spec": {}}
    )

    async def owned() -> bool:
        refs = (await world.mca(one))["metadata"].get("ownerReferences")
        assert refs and refs[0]["uid"] == cma["metadata"]["uid"] and refs[0]["controller"] is True
        return True

    await eventually(owned)


async def test_default_configs_resolve_with_upstream_hashes(world: World) -> None:
    stored = await world.adc("defaults", GO_CLIENT_ADC_SPEC)
    # pyocm's CRD defaults make the same stored object as upstream's API server.
    assert stored["spec"] == {
        "agentInstallNamespace": "open-cluster-management-agent-addon",
        **GO_CLIENT_ADC_SPEC,
    }
    assert spec_hash(stored) == GO_CLIENT_ADC_HASH
    one = await world.cluster("one")
    await world.cma(
        {"defaultConfigs": [{**ADC_GR, "namespace": world.namespace, "name": "defaults"}]}
    )
    await world.api.create(
        ocm.MANAGED_CLUSTER_ADDON, {"metadata": {"name": world.addon, "namespace": one}, "spec": {}}
    )
    desired = {"namespace": world.namespace, "name": "defaults", "specHash": GO_CLIENT_ADC_HASH}

    async def resolved() -> bool:
        cma = await world.api.get(ocm.CLUSTER_MANAGEMENT_ADDON, world.addon)
        assert cma.get("status", {}).get("defaultConfigReferences") == [
            {**ADC_GR, "desiredConfig": desired}
        ]
        mca = await world.mca(one)
        assert mca.get("status", {}).get("configReferences") == [
            {
                **ADC_GR,
                "desiredConfig": desired,
                "lastObservedGeneration": stored["metadata"]["generation"],
            }
        ]
        assert mca.get("status", {}).get("supportedConfigs") == [ADC_GR]
        assert condition(mca, "Configured") == (
            "True",
            "ConfigurationsConfigured",
            "Configurations configured",
        )
        assert condition(mca, "Progressing") == (
            "False",
            "WaitingForManifestApplied",
            "Waiting for ManagedClusterAddOn ManifestApplied condition",
        )
        return True

    await eventually(resolved)

    # A config of a kind the add-on does not support is reported as upstream words it.
    await world.api.patch(
        ocm.MANAGED_CLUSTER_ADDON,
        world.addon,
        {"spec": {"configs": [{"group": "example.io", "resource": "widgets", "name": "w"}]}},
        namespace=one,
    )

    async def unsupported() -> bool:
        assert condition(await world.mca(one), "Progressing") == (
            "False",
            "ConfigurationUnsupported",
            "Configuration with gvr example.io/widgets is not supported for this addon",
        )
        return True

    await eventually(unsupported)


async def test_placement_configs_and_install_progression(world: World) -> None:
    await world.adc("defaults", {"customizedVariables": [{"name": "a", "value": "1"}]})
    placed = await world.adc("placed", {"customizedVariables": [{"name": "b", "value": "2"}]})
    one = await world.cluster("one")
    two = await world.cluster("two")
    await world.placement("all")
    placed_ref = {**ADC_GR, "namespace": world.namespace, "name": "placed"}
    await world.cma(
        {
            "defaultConfigs": [{**ADC_GR, "namespace": world.namespace, "name": "defaults"}],
            **placements_strategy(
                {"namespace": world.namespace, "name": "all", "configs": [placed_ref]}
            ),
        }
    )
    desired = {"namespace": world.namespace, "name": "placed", "specHash": spec_hash(placed)}

    async def progressing() -> bool:
        cma = await world.api.get(ocm.CLUSTER_MANAGEMENT_ADDON, world.addon)
        [progression] = cma["status"]["installProgressions"]
        assert progression["configReferences"] == [{**ADC_GR, "desiredConfig": desired}]
        assert condition(
            progression | {"status": {"conditions": progression.get("conditions")}}, "Progressing"
        ) == (
            "True",
            "Progressing",
            "selected clusters 2. configured addons 2/2 progressing..., 0 failed 0 timeout.",
        )
        for cluster in (one, two):
            mca = await world.mca(cluster)
            assert [r["desiredConfig"] for r in mca["status"]["configReferences"]] == [desired]
        return True

    await eventually(progressing)


async def complete(world: World, cluster: str) -> None:
    """Act as the deploy controller and the work agent: the add-on's work carries the
    MCA's desired config hashes and is applied and available. Done once, so it waits, as
    the deploy controller's config check does, until every desired config has its hash
    (Configured can come before the hashes under load)."""

    async def hashed() -> bool:
        refs = (await world.mca(cluster))["status"]["configReferences"]
        return all(r["desiredConfig"].get("specHash") for r in refs)

    await eventually(hashed)
    mca = await world.mca(cluster)
    hashes = {
        f"addondeploymentconfigs.addon.open-cluster-management.io/{r['desiredConfig']['namespace']}/{r['desiredConfig']['name']}": r[
            "desiredConfig"
        ]["specHash"]
        for r in mca["status"]["configReferences"]
    }
    name = f"addon-{world.addon}-deploy-0"
    annotations = {"open-cluster-management.io/config-spec-hash": json.dumps(hashes)}
    body: Obj = {
        "metadata": {
            "name": name,
            "namespace": cluster,
            "labels": {"open-cluster-management.io/addon-name": world.addon},
            "annotations": annotations,
        },
        "spec": {
            "workload": {
                "manifests": [
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {"name": "a", "namespace": "default"},
                    }
                ]
            }
        },
    }
    try:
        work = await world.api.create(ocm.MANIFEST_WORK, body)
    except ApiError:
        current = await world.api.get(ocm.MANIFEST_WORK, name, namespace=cluster)
        current["metadata"]["annotations"] = annotations
        work = await world.api.update(ocm.MANIFEST_WORK, current)
    generation = work["metadata"]["generation"]
    now = "2024-01-01T00:00:00Z"
    work_conditions = [
        {
            "type": t,
            "status": "True",
            "reason": "Done",
            "message": "",
            "lastTransitionTime": now,
            "observedGeneration": generation,
        }
        for t in ("Applied", "Available")
    ]
    await world.api.patch(
        ocm.MANIFEST_WORK,
        name,
        {"status": {"conditions": work_conditions}},
        namespace=cluster,
        subresource="status",
    )
    applied = [*conditions.of(mca)]
    if conditions.find(applied, "ManifestApplied") is None:
        applied.append(
            {
                "type": "ManifestApplied",
                "status": "True",
                "reason": "AddonManifestApplied",
                "message": "",
                "lastTransitionTime": now,
            }
        )
        await world.api.patch(
            ocm.MANAGED_CLUSTER_ADDON,
            world.addon,
            {"status": {"conditions": applied}},
            namespace=cluster,
            subresource="status",
        )


async def test_progressive_rollout_one_cluster_at_a_time(world: World) -> None:
    await world.adc("v1", {"customizedVariables": [{"name": "v", "value": "1"}]})
    v2 = await world.adc("v2", {"customizedVariables": [{"name": "v", "value": "2"}]})
    one = await world.cluster("one")
    two = await world.cluster("two")
    await world.placement("all")
    strategy = {"type": "Progressive", "progressive": {"maxConcurrency": 1}}
    ref = {"namespace": world.namespace, "name": "all", "rolloutStrategy": strategy}
    await world.cma(
        placements_strategy(
            {**ref, "configs": [{**ADC_GR, "namespace": world.namespace, "name": "v1"}]}
        )
    )

    async def first_configured() -> bool:
        assert condition(await world.mca(one), "Configured") == (
            "True",
            "ConfigurationsConfigured",
            "Configurations configured",
        )
        assert condition(await world.mca(two), "Configured") == (
            "False",
            "ConfigurationsNotConfigured",
            "Configurations updated and not configured yet",
        )
        return True

    await eventually(first_configured)
    await complete(world, one)

    async def one_done() -> bool:
        mca = await world.mca(one)
        assert condition(mca, "Progressing") == ("False", "Completed", "completed with no errors.")
        assert mca["status"]["configReferences"][0]["lastAppliedConfig"]["name"] == "v1"
        assert condition(await world.mca(two), "Configured")[0] == "True"  # type: ignore[index]
        return True

    await eventually(one_done)
    await complete(world, two)

    async def all_done() -> bool:
        cma = await world.api.get(ocm.CLUSTER_MANAGEMENT_ADDON, world.addon)
        [progression] = cma["status"]["installProgressions"]
        found = conditions.find(progression.get("conditions"), "Progressing")
        assert found is not None
        assert (found["status"], found["reason"], found["message"]) == (
            "False",
            "Completed",
            "selected clusters 2. configured addons 2/2 completed with no errors, 0 failed 0 timeout.",
        )
        assert progression["configReferences"][0]["lastKnownGoodConfig"]["name"] == "v1"
        return True

    await eventually(all_done)

    # The next config reaches one cluster first, the other only once it completed.
    await world.api.patch(
        ocm.CLUSTER_MANAGEMENT_ADDON,
        world.addon,
        {
            "spec": {
                "installStrategy": placements_strategy(
                    {**ref, "configs": [{**ADC_GR, "namespace": world.namespace, "name": "v2"}]}
                )["installStrategy"]
            }
        },
    )

    async def v2_on_one() -> bool:
        mca_one, mca_two = await world.mca(one), await world.mca(two)
        assert mca_one["status"]["configReferences"][0]["desiredConfig"] == {
            "namespace": world.namespace,
            "name": "v2",
            "specHash": spec_hash(v2),
        }
        assert mca_two["status"]["configReferences"][0]["desiredConfig"]["name"] == "v1"
        assert condition(mca_two, "Configured")[0] == "False"  # type: ignore[index]
        return True

    await eventually(v2_on_one)
    await complete(world, one)

    async def v2_on_two() -> bool:
        mca_two = await world.mca(two)
        assert mca_two["status"]["configReferences"][0]["desiredConfig"]["name"] == "v2"
        return True

    await eventually(v2_on_two)
