"""The Update strategy's resource cache: an unchanged manifest over an object nobody has
written since is not written again, even when the server defaults fields the manifest
leaves out; a change of either side is applied; entries of objects no longer applied go."""

from __future__ import annotations

import copy
from typing import Any

from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.kube.kinds import Kind
from pyocm.sim.memoryspoke import MemorySpoke
from pyocm.work.agent.apply import ResourceCache, apply_manifest
from tests.unit.work.test_apply import OWNER, FakeSpoke, configmap
from tests.unit.work.test_reconcile import KEY, controller, manifest_work
from tests.unit.work.test_reconcile import configmap as work_configmap

Obj = dict[str, Any]


class DefaultingSpoke(FakeSpoke):
    """A cluster that fills in a Deployment's defaults on every write, as the API does."""

    async def create(self, kind: Kind, obj: Obj) -> Obj:
        return await super().create(kind, _defaulted(kind, obj))

    async def update(self, kind: Kind, obj: Obj, *, subresource: str | None = None) -> Obj:
        return await super().update(kind, _defaulted(kind, obj), subresource=subresource)

    def writes(self) -> int:
        return sum(verb in ("create", "update") for verb, _ in self.actions)

    def version(self) -> str:
        return str(self.objects[("deployments", "ns1", "web")]["metadata"]["resourceVersion"])


def _defaulted(kind: Kind, obj: Obj) -> Obj:
    obj = copy.deepcopy(obj)
    if kind == kinds.DEPLOYMENT:
        spec = obj.setdefault("spec", {})
        spec.setdefault("progressDeadlineSeconds", 600)
        spec.setdefault("revisionHistoryLimit", 10)
    return obj


def deployment(replicas: int = 1) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "ns1"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]},
            },
        },
    }


async def apply(spoke: FakeSpoke, manifest: Obj, cache: ResourceCache | None) -> bool:
    applied = await apply_manifest(
        spoke, manifest, kind=kinds.DEPLOYMENT, strategy=None, owner=OWNER, cache=cache
    )
    return applied.changed


async def test_without_the_cache_a_defaulted_object_is_written_every_time() -> None:
    spoke = DefaultingSpoke()
    for _ in range(3):
        await apply(spoke, deployment(), None)
    assert spoke.writes() == 3


async def test_an_unchanged_manifest_over_an_unchanged_object_is_not_written() -> None:
    spoke, cache = DefaultingSpoke(), ResourceCache()
    assert await apply(spoke, deployment(), cache)
    version = spoke.version()
    for _ in range(3):
        assert not await apply(spoke, deployment(), cache)
    assert spoke.writes() == 1
    assert spoke.version() == version
    assert spoke.actions[-1] == ("get", "web")


async def test_a_change_on_the_cluster_is_applied_then_skipped_again() -> None:
    spoke, cache = DefaultingSpoke(), ResourceCache()
    await apply(spoke, deployment(), cache)
    # Someone scales it by hand: a new resourceVersion.
    scaled = copy.deepcopy(spoke.objects[("deployments", "ns1", "web")])
    scaled["spec"]["replicas"] = 5
    await spoke.update(kinds.DEPLOYMENT, scaled)
    assert await apply(spoke, deployment(), cache)
    assert spoke.objects[("deployments", "ns1", "web")]["spec"]["replicas"] == 1
    writes = spoke.writes()
    assert not await apply(spoke, deployment(), cache)
    assert spoke.writes() == writes


async def test_a_changed_manifest_is_applied() -> None:
    spoke, cache = DefaultingSpoke(), ResourceCache()
    await apply(spoke, deployment(replicas=1), cache)
    assert await apply(spoke, deployment(replicas=2), cache)
    assert spoke.objects[("deployments", "ns1", "web")]["spec"]["replicas"] == 2
    assert spoke.writes() == 2


async def test_a_changed_owner_is_applied() -> None:
    spoke, cache = DefaultingSpoke(), ResourceCache()
    await apply(spoke, deployment(), cache)
    orphaned = await apply_manifest(
        spoke,
        deployment(),
        kind=kinds.DEPLOYMENT,
        strategy=None,
        owner={**OWNER, "uid": OWNER["uid"] + "-"},
        cache=cache,
    )
    assert orphaned.changed
    assert orphaned.obj["metadata"].get("ownerReferences", []) == []


async def test_prune_drops_what_a_round_did_not_apply() -> None:
    spoke, cache = DefaultingSpoke(), ResourceCache()
    await apply(spoke, deployment(), cache)
    await apply_manifest(
        spoke, configmap(a="1"), kind=kinds.CONFIGMAP, strategy=None, owner=OWNER, cache=cache
    )
    cache.prune()
    assert len(cache) == 2  # typed kinds (the ConfigMap) are recorded too
    await apply(spoke, deployment(), cache)
    cache.prune()
    assert len(cache) == 1
    cache.prune()
    assert len(cache) == 0


async def test_the_controller_keeps_one_entry_per_applied_object_and_drops_the_work() -> None:
    spoke = MemorySpoke(served=[ocm.APPLIED_MANIFEST_WORK])
    two = manifest_work(work_configmap("a", x="1"), work_configmap("b", x="1"))
    reconciler, _, works = controller(spoke, two)
    await reconciler.reconcile(KEY)
    assert len(reconciler._applied[KEY]) == 2
    one = copy.deepcopy(works.store.get(KEY))
    assert one is not None
    one["spec"]["workload"]["manifests"] = one["spec"]["workload"]["manifests"][:1]
    one["metadata"]["generation"] = 2
    works.store.upsert(one)
    await reconciler.reconcile(KEY)
    assert len(reconciler._applied[KEY]) == 1
    works.store.delete(KEY)
    await reconciler.reconcile(KEY)
    assert reconciler._applied == {}
