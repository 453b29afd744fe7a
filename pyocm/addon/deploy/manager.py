"""The deploy controller's wiring into a hub manager: the informers it shares, the
watches that wake it (an add-on, its deploy or hook works, its cluster's availability),
one worker."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pyocm.addon.agent import AgentAddon
from pyocm.addon.deploy import works
from pyocm.addon.deploy.sync import WORKS_BY_ADDON, DeployController, Informers, work_addon
from pyocm.api import conditions, wellknown
from pyocm.api import kinds as ocm
from pyocm.runtime.cache import by_namespace, key_of
from pyocm.runtime.controller import Controller
from pyocm.runtime.informer import Change
from pyocm.runtime.manager import Manager

Obj = dict[str, object]
#: Upstream's controller name.
CONTROLLER_NAME = "addon-deploy-controller"
#: MCA informer index: the cluster namespace (upstream's ``ManagedClusterAddonByNamespace``).
MCA_BY_NAMESPACE = "managedClusterAddonByNamespace"


def add_addon_deploy_controllers(
    manager: Manager, *, addons: Iterable[AgentAddon] | Mapping[str, AgentAddon]
) -> Controller:
    """Add the deploy controller for ``addons`` (by name: a live mapping, such as an
    :class:`~pyocm.addon.registry.AddonRegistry`, is looked up at each event; other
    add-ons are keyed by their options' names) to ``manager``. Returns the controller."""
    by_name: Mapping[str, AgentAddon] = (
        addons if isinstance(addons, Mapping) else {addon.options().name: addon for addon in addons}
    )
    informers = Informers(
        mcas=manager.informer(ocm.MANAGED_CLUSTER_ADDON).add_index(MCA_BY_NAMESPACE, by_namespace),
        clusters=manager.informer(ocm.MANAGED_CLUSTER),
        # Only works labelled with an add-on's name matter, as upstream's informer selects.
        works=manager.informer(ocm.MANIFEST_WORK, labels=wellknown.ADDON_NAME_LABEL).add_index(
            WORKS_BY_ADDON, work_addon
        ),
    )
    deploy = DeployController(manager.api, informers, addons=by_name, clock=manager.clock)
    controller = manager.controller(CONTROLLER_NAME, deploy.reconcile)

    def of_mca(mca: dict[str, object]) -> list[str]:
        return [key_of(mca)] if _name(mca) in by_name else []

    def of_work(work: dict[str, object]) -> list[str]:
        """A deploy or hook work to its add-on (a hosted one to the add-on named by
        its add-on-namespace label)."""
        meta = work["metadata"]
        assert isinstance(meta, dict)
        labels = meta.get("labels") or {}
        addon = labels.get(wellknown.ADDON_NAME_LABEL)
        if not isinstance(addon, str) or addon not in by_name:
            return []
        name = str(meta["name"])
        if not name.startswith(
            (works.deploy_work_prefix(addon), works.pre_delete_work_name(addon))
        ):
            return []
        namespace = labels.get(wellknown.ADDON_NAMESPACE_LABEL) or meta.get("namespace")
        return [f"{namespace}/{addon}"]

    def on_cluster(change: Change) -> None:
        """Health is not told while a cluster's availability is Unknown: look again
        when it changes; and when an add-on's deploy trigger says the change matters."""
        if change.old is None or change.new is None:
            return
        old, new = change.old, change.new
        available_changed = _available(old) != _available(new)
        # Triggers read a cluster's labels and annotations (upstream's: the registries
        # annotation): a status report changing neither costs no look at its add-ons.
        if not available_changed and _marks(old) == _marks(new):
            return
        for key in informers.mcas.store.index_keys(MCA_BY_NAMESPACE, _name(new)):
            addon = by_name.get(split_name(key))
            if addon is None:
                continue
            trigger = addon.options().deploy_trigger
            if available_changed or (trigger is not None and trigger(old, new)):  # type: ignore[arg-type]
                controller.enqueue(key)

    controller.watch(informers.mcas, of_mca)
    controller.watch(informers.works, of_work)
    informers.clusters.add_handler(on_cluster)
    controller.watch(informers.clusters, _no_keys)
    return controller


def split_name(key: str) -> str:
    return key.rpartition("/")[2]


def _name(obj: dict[str, object]) -> str:
    meta = obj["metadata"]
    assert isinstance(meta, dict)
    return str(meta["name"])


def _available(cluster: dict[str, object]) -> str | None:
    found = conditions.find(conditions.of(cluster), wellknown.CLUSTER_AVAILABLE)
    return None if found is None else str(found.get("status"))


def _marks(cluster: dict[str, object]) -> tuple[object, object]:
    meta = cluster["metadata"]
    assert isinstance(meta, dict)
    return meta.get("labels"), meta.get("annotations")


def _no_keys(_obj: object) -> list[str]:
    return []
