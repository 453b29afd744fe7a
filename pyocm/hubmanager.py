"""Every hub controller pyocm has, in one manager: what ``pyocm hub``, ``pyocm controller``
and ``pyocm up`` run. Each feature adds its controllers here; none imports another."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from pyocm.addon.agent import AgentAddon
from pyocm.addon.builtin import addons_named, install_cluster_management_addons
from pyocm.addon.manager import add_addon_controllers, addon_approver
from pyocm.addon.registry import AddonRegistry
from pyocm.base.clock import Clock
from pyocm.clustersets.controllers import add_clusterset_controllers
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.placement.manager import EVENT_SOURCE, add_placement_controllers
from pyocm.registration.hub.approvers import CsrApprover
from pyocm.registration.hub.manager import HubOptions, build_hub_manager
from pyocm.registration.hub.signers import SignerRegistry
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Change
from pyocm.runtime.manager import Manager
from pyocm.runtime.servingcerts import ServingCertificates, sync
from pyocm.work.hub.gc import add_work_controllers

log = logging.getLogger(__name__)


def build(
    api: Api,
    *,
    options: HubOptions | None = None,
    clock: Clock | None = None,
    approvers: Sequence[CsrApprover] = (),
    signers: SignerRegistry | None = None,
    addons: Mapping[str, AgentAddon] | None = None,
    webhook_service: tuple[str, str] | None = None,
) -> Manager:
    """``approvers`` and ``signers``: more CSR rules and custom signers
    (:func:`~pyocm.registration.hub.manager.build_hub_manager`); ``addons``: the add-ons
    pyocm implements that this hub runs, by name (:mod:`pyocm.addon.builtin`). The
    add-on manager itself runs unless the ``AddonManagement`` gate is off.
    ``webhook_service`` (namespace, name): keep the serving certificate of the OCM
    webhooks behind that Service (:func:`add_webhook_certificates`)."""
    options = options or HubOptions()
    addons = dict(addons if addons is not None else addons_named(options.addons))
    managing = options.gate("AddonManagement")
    # pyocm's own add-ons, and the template add-ons the add-on manager starts.
    registry = AddonRegistry(addons)
    approver = addon_approver(registry)
    chain = [*approvers, approver] if managing else list(approvers)
    manager = build_hub_manager(api, options=options, clock=clock, approvers=chain, signers=signers)
    recorder = Recorder(
        api, controller="clusterset-controller", instance=options.identity, clock=manager.clock
    )
    add_clusterset_controllers(
        manager, recorder=recorder, default_sets=options.gate("DefaultClusterSet")
    )
    add_work_controllers(manager, replica_sets=options.gate("ManifestWorkReplicaSet"))
    add_placement_controllers(
        manager,
        recorder=Recorder(
            api, controller=EVENT_SOURCE, instance=options.identity, clock=manager.clock
        ),
    )
    if managing:
        add_addon_controllers(
            manager, addons=registry, approver=approver, identity=options.identity
        )
        if addons:

            async def install() -> None:
                # Until it is done: a hub still starting (or a denied write) is retried.
                while True:
                    try:
                        await install_cluster_management_addons(manager.api, addons)
                        return
                    except (ApiError, ApiConnectionError) as err:
                        log.warning("built-in ClusterManagementAddOns not created yet: %s", err)
                        await manager.clock.sleep(5.0)

            manager.add("built-in ClusterManagementAddOns", install)
    if webhook_service is not None:
        add_webhook_certificates(manager, namespace=webhook_service[0], service=webhook_service[1])
    return manager


#: Upstream's resync of its cert rotation controller: far below a fifth of the shortest
#: validity (30 days), so a certificate is always replaced long before it expires.
CERT_RESYNC = 600.0
CERT_KEY = "webhook-serving-certificates"


def add_webhook_certificates(manager: Manager, *, namespace: str, service: str) -> None:
    """What upstream's cluster-manager operator does for its webhooks, for a hub deployed
    without an operator (pyocm's manifests): a signing CA, a CA bundle and the serving
    certificate in Secret ``<service>-serving-cert``, and the bundle as ``caBundle`` of the
    webhook configurations and add-on CRD conversions that call the Service."""
    spec = ServingCertificates(
        namespace=namespace, service=service, serving_secret=f"{service}-serving-cert"
    )
    ours = {spec.signer_secret, spec.serving_secret, spec.bundle_configmap}

    async def cached(kind: kinds.Kind) -> list[dict[str, object]]:
        # The informers this controller watches hold every configuration and CRD: a
        # reconcile (one per CRD status change) reads them instead of listing them again.
        return watched[kind].store.objects()

    async def reconcile(_: str) -> None:
        await sync(manager.api, spec, now=manager.clock.now(), lister=cached)
        controller.enqueue(CERT_KEY, after=CERT_RESYNC)

    def one_key(_: dict[str, object]) -> list[str]:
        return [CERT_KEY]

    def named(change: Change) -> bool:
        return str((change.obj.get("metadata") or {}).get("name")) in ours

    controller = manager.controller("webhook-cert-rotation", reconcile)
    for kind in (kinds.SECRET, kinds.CONFIGMAP):
        controller.watch(manager.informer(kind, namespace=namespace), one_key, predicate=named)
    watched = {
        kind: manager.informer(kind)
        for kind in (
            kinds.VALIDATING_WEBHOOK_CONFIGURATION,
            kinds.MUTATING_WEBHOOK_CONFIGURATION,
            kinds.CRD,
        )
    }
    for informer in watched.values():
        controller.watch(informer, one_key)
    controller.enqueue(CERT_KEY)
