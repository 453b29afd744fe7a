"""The hub add-on manager's install, owner, annotation, configuration and progressing
controllers, wired into a hub manager (upstream ``pkg/addon/manager.go``'s
``RunControllerManagerWithInformers`` for these parts).

They act for every ClusterManagementAddOn the add-on manager manages, whether or not
pyocm implements the add-on. ``addons`` (the add-ons pyocm implements, by name; an
:class:`~pyocm.addon.registry.AddonRegistry` when add-ons come and go) adds the
framework's config controllers (spec hashes, observed generations, supported configs)
for those add-ons, as each add-on's own framework manager runs them upstream.
"""

from __future__ import annotations

from collections.abc import Mapping

from pyocm.addon.agent import AgentAddon, ConfigGVR
from pyocm.addon.hub import annotations as annotation_sync
from pyocm.addon.hub import (
    common,
    configs,
    hashes,
    install,
    owner,
    progressing,
    progression,
)
from pyocm.addon.registry import AddonRegistry
from pyocm.api import kinds as ocm
from pyocm.runtime.controller import Controller, Mapper
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Informer
from pyocm.runtime.manager import Manager

#: Seconds an add-on-wide controller (install, progression, configuration: each pass reads
#: every MCA of the add-on) waits after an MCA change, so a fleet's MCAs changing at once
#: (every cluster registering) cost a pass per add-on, not a pass per MCA.
MCA_DELAY = 0.5


def add_addon_manager_controllers(
    manager: Manager, *, recorder: Recorder, addons: Mapping[str, AgentAddon] | None = None
) -> list[Controller]:
    """Add the controllers to ``manager`` and return them. ``recorder`` is kept for the
    events these controllers may report (upstream's write none)."""
    del recorder
    cmas = common.index_cmas(manager.informer(ocm.CLUSTER_MANAGEMENT_ADDON))
    mcas = common.index_mcas(manager.informer(ocm.MANAGED_CLUSTER_ADDON))
    mcas.add_index(annotation_sync.MCA_BY_NAMESPACE, _namespace)
    clusters = manager.informer(ocm.MANAGED_CLUSTER)
    placements = manager.informer(ocm.PLACEMENT)
    decisions = manager.informer(ocm.PLACEMENT_DECISION)
    decisions.add_index(install.DECISIONS_BY_PLACEMENT, install.decisions_by_placement)
    works = manager.informer(ocm.MANIFEST_WORK)
    works.add_index(progressing.WORKS_BY_ADDON, progressing.works_by_addon)

    by_placement = common.cmas_by_placement(cmas)
    by_decision = common.cmas_by_decision(cmas)
    mcas_of = common.mcas_of_cma(mcas)

    installer = install.InstallController(manager.api, cmas, mcas, clusters, placements, decisions)
    install_c = manager.controller(install.CONTROLLER_NAME, installer.reconcile, workers=2)
    install_c.watch(cmas)
    install_c.watch(mcas, common.mca_name, delay=MCA_DELAY)
    install_c.watch(decisions, by_decision)
    install_c.watch(placements, by_placement)
    # The cluster cache is read for annotations; its changes wake nothing here.
    install_c.watch(clusters, _nothing)

    owners = owner.OwnerController(manager.api, mcas, cmas)
    owner_c = manager.controller(owner.CONTROLLER_NAME, owners.reconcile, workers=2)
    owner_c.watch(mcas)
    owner_c.watch(cmas, mcas_of)

    syncer = annotation_sync.AnnotationController(manager.api, clusters, mcas, cmas)
    annotation_c = manager.controller(annotation_sync.CONTROLLER_NAME, syncer.reconcile, workers=2)
    annotation_c.watch(clusters, predicate=annotation_sync.annotations_changed)
    annotation_c.watch(mcas, _nothing)
    annotation_c.watch(cmas, _nothing)

    progressions = progression.InstallProgressionController(manager.api, cmas)
    progression_c = manager.controller(
        progression.CONTROLLER_NAME, progressions.reconcile, workers=2
    )
    progression_c.watch(cmas)
    progression_c.watch(mcas, common.mca_name, delay=MCA_DELAY)

    configuration = configs.ConfigurationController(
        manager.api, cmas, mcas, placements, decisions, manager.clock
    )
    configuration_c = manager.controller(
        configs.CONTROLLER_NAME, configuration.reconcile, workers=2
    )
    configuration_c.watch(cmas)
    configuration_c.watch(mcas, common.mca_name, delay=MCA_DELAY)
    configuration_c.watch(decisions, by_decision)
    configuration_c.watch(placements, by_placement)

    progress = progressing.ProgressingController(manager.api, mcas, cmas, works, manager.clock)
    progressing_c = manager.controller(progressing.CONTROLLER_NAME, progress.reconcile, workers=2)
    progressing_c.watch(mcas)
    progressing_c.watch(cmas, mcas_of)
    progressing_c.watch(works, progressing.works_by_addon)

    made = [install_c, owner_c, annotation_c, progression_c, configuration_c, progressing_c]
    if addons or isinstance(addons, AddonRegistry):
        made += _add_hash_controllers(manager, cmas, mcas, addons)
    return made


def _add_hash_controllers(
    manager: Manager,
    cmas: Informer,
    mcas: Informer,
    addons: Mapping[str, AgentAddon],
) -> list[Controller]:
    every = (
        addons.config_gvrs()
        if isinstance(addons, AddonRegistry)
        else [c for a in addons.values() for c in a.options().supported_configs]
    )
    gvrs = {(c.group, c.resource): c for c in every}
    informers = {gr: manager.informer(hashes.config_kind(gvr)) for gr, gvr in gvrs.items()}
    found = hashes.Configs(informers)
    cmas.add_index(hashes.CMA_BY_CONFIG, hashes.cma_configs)
    mcas.add_index(hashes.MCA_BY_CONFIG, hashes.mca_configs)

    cma_hashes = hashes.CmaConfigController(manager.api, cmas, found, addons)
    cma_c = manager.controller(hashes.CMA_CONTROLLER_NAME, cma_hashes.reconcile, workers=2)
    cma_c.watch(cmas)
    mca_hashes = hashes.McaConfigController(manager.api, mcas, cmas, found, addons)
    mca_c = manager.controller(hashes.MCA_CONTROLLER_NAME, mca_hashes.reconcile, workers=2)
    mca_c.watch(mcas)
    mca_c.watch(cmas, _nothing)
    for gr, informer in informers.items():
        gvr = gvrs[gr]
        cma_c.watch(informer, _by_config(cmas, hashes.CMA_BY_CONFIG, gvr))
        mca_c.watch(informer, _by_config(mcas, hashes.MCA_BY_CONFIG, gvr))
    return [cma_c, mca_c]


def _by_config(informer: Informer, index: str, gvr: ConfigGVR) -> Mapper:
    def keys(obj: common.Obj) -> list[str]:
        return informer.store.index_keys(index, hashes.config_of_key(obj, gvr))

    return keys


def _namespace(obj: common.Obj) -> list[str]:
    return [obj["metadata"]["namespace"]]


def _nothing(_obj: common.Obj) -> list[str]:
    return []
