"""Wire the hub's registration controllers over shared informers.

:func:`build_hub_manager` is what ``pyocm hub`` runs in-process and ``pyocm controller``
runs against any API server; both only talk to the API through ``api``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyocm.api import kinds as ocm
from pyocm.api import models, shapes, wellknown
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.api.models.meta_v1 import ObjectMeta
from pyocm.base.clock import Clock, RealClock
from pyocm.kube import kinds
from pyocm.kube.kinds import Kind
from pyocm.kube.selectors import escape_field_value
from pyocm.kube.status import ApiError
from pyocm.registration.hub import rbac
from pyocm.registration.hub.addonhealth import add_addon_health_controller
from pyocm.registration.hub.approvers import CsrApprover
from pyocm.registration.hub.clusterroles import KEY as COMMON_ROLES_KEY
from pyocm.registration.hub.clusterroles import ClusterRolesController
from pyocm.registration.hub.csrapproval import CLIENT_SIGNER, CsrApprovalController
from pyocm.registration.hub.gc import DEFAULT_RESOURCES, GcController
from pyocm.registration.hub.lease import LEASE_NAME, ClockSyncController, LeaseController, lease_key
from pyocm.registration.hub.managedcluster import ManagedClusterController
from pyocm.registration.hub.signers import CsrSigningController, SignerRegistry
from pyocm.registration.hub.taint import TaintController
from pyocm.runtime.client import Api
from pyocm.runtime.ensure import ensure
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Change, Informer
from pyocm.runtime.manager import Manager

CONTROLLER_NAME = "pyocm-registration-controller"
LEADER_LEASE = "pyocm-hub-controllers"
LEADER_NAMESPACE = "open-cluster-management-hub"
#: Workers of the controllers that a burst of joins or renewals floods (acceptance, CSR
#: approval): their reconciles wait on API round trips, not on the CPU.
WORKERS = 16

#: Feature gates of upstream's hub registration, with their defaults.
DEFAULT_GATES: Mapping[str, bool] = {
    "AddonManagement": True,  # the ClusterManager's gate for the hub's add-on manager
    "DefaultClusterSet": True,
    "ManagedClusterAutoApproval": False,
    "ResourceCleanup": True,
    "V1beta1CSRAPICompatibility": False,
    "ClusterProfile": False,
    "ClusterImporter": False,
}


@dataclass(frozen=True)
class HubOptions:
    identity: str = "pyocm-hub"
    labels: Mapping[str, str] = field(default_factory=dict)
    auto_approved_users: tuple[str, ...] = ()
    feature_gates: Mapping[str, bool] = field(default_factory=dict)
    gc_resources: tuple[Kind, ...] = DEFAULT_RESOURCES
    #: The add-ons pyocm implements that the hub runs, by name (``--addons``).
    addons: tuple[str, ...] = ()

    def gate(self, name: str) -> bool:
        return bool(self.feature_gates.get(name, DEFAULT_GATES.get(name, False)))


def _cluster_of(obj: Mapping[str, Any]) -> list[str]:
    meta: ObjectMeta = obj.get("metadata", {})
    name = meta.get("labels", {}).get(wellknown.CLUSTER_NAME_LABEL)
    return [name] if name else []


def _beyond_status(change: Change) -> bool:
    """Whether something other than status (and the resourceVersion) changed."""
    if change.old is None or change.new is None:
        return True

    def essence(obj: Mapping[str, Any]) -> dict[str, Any]:
        cluster = models.view(ManagedCluster, obj)
        meta = {
            k: v
            for k, v in cluster["metadata"].items()
            if k not in ("resourceVersion", "managedFields")
        }
        return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}

    return essence(change.old) != essence(change.new)


def _renewed(change: Change) -> bool:
    """A renewal: an update that moved renewTime. As upstream, not a lease first seen
    (a hub restarted after hours down lists leases hours old: no clock is wrong)."""

    def renew(obj: Mapping[str, Any] | None) -> object:
        # Leases are not read through a schema: a spec of another type has no renewTime.
        return shapes.mapping((obj or {}).get("spec")).get("renewTime")

    return (
        change.old is not None and change.new is not None and renew(change.old) != renew(change.new)
    )


def custom_signer_selector(names: frozenset[str]) -> str:
    """The field selector of the custom signers' CSR informer: exactly the one signer's
    CSRs when one is registered; else every CSR but the kube-apiserver-client signer's
    (field selectors cannot OR), which the controllers' predicate then narrows."""
    if len(names) == 1:
        return f"spec.signerName={escape_field_value(next(iter(names)))}"
    return f"spec.signerName!={CLIENT_SIGNER}"


def build_hub_manager(
    api: Api,
    *,
    options: HubOptions | None = None,
    clock: Clock | None = None,
    approvers: Sequence[CsrApprover] = (),
    signers: SignerRegistry | None = None,
) -> Manager:
    """The hub's registration controllers in one manager.

    ``approvers`` come after the cluster-agent approver in the CSR approval chain
    (approvers.py): they see the CSRs it passes on, whether for the
    kube-apiserver-client signer or for one of ``signers``. ``signers`` (signers.py) are
    the custom signers the hub signs for: those registered when the manager is built.
    Their CSRs come through a second informer, created only when some signer is
    registered, so the cluster agents' informer and controller stay as they are."""
    options = options or HubOptions()
    clock = clock or RealClock()
    manager = Manager(api, clock=clock)
    recorder = Recorder(api, controller=CONTROLLER_NAME, instance=options.identity, clock=clock)
    clusters = manager.informer(ocm.MANAGED_CLUSTER)
    csrs = manager.informer(kinds.CSR, fields=f"spec.signerName={CLIENT_SIGNER}")
    leases = manager.informer(kinds.LEASE, fields=f"metadata.name={LEASE_NAME}")
    labelled = wellknown.CLUSTER_NAME_LABEL
    roles = manager.informer(kinds.CLUSTER_ROLE, labels=labelled)
    role_bindings = manager.informer(kinds.CLUSTER_ROLE_BINDING, labels=labelled)
    namespaced_bindings = manager.informer(kinds.ROLE_BINDING, labels=labelled)
    cluster_namespaces = manager.informer(kinds.NAMESPACE, labels=labelled)

    accept = ManagedClusterController(
        api,
        clusters,
        clock=clock,
        recorder=recorder,
        labels=options.labels,
        auto_accept=options.gate("ManagedClusterAutoApproval"),
        caches={
            informer.kind.kind: informer.store
            for informer in (cluster_namespaces, roles, role_bindings, namespaced_bindings)
        },
    )
    # Several workers: a burst of joins waits on API round trips, not on one another
    # (the queue never hands the same cluster to two workers at once). An acceptance
    # makes about ten writes; on etcd each is a consensus round trip of tens of
    # milliseconds, so 4 workers accepted fewer than 25 clusters a second.
    controller = manager.controller("managedcluster", accept.reconcile, workers=WORKERS)
    # Agents report status every health-check period; acceptance depends on spec and
    # metadata only (what it writes elsewhere is watched through the RBAC informers).
    controller.watch(clusters, predicate=_beyond_status)
    for informer in (roles, role_bindings, namespaced_bindings):
        controller.watch(informer, _cluster_of)

    approval = CsrApprovalController(
        api,
        csrs,
        clusters,
        clock=clock,
        recorder=recorder,
        auto_approved_users=options.auto_approved_users
        if options.gate("ManagedClusterAutoApproval")
        else (),
        approvers=approvers,
    )
    # Each approval waits on three round trips (review, approval, event); in a rotation
    # storm one worker would leave the hub idle between them (and 4, on etcd, approved
    # a 1,000-cluster storm in 21 s where 16 took 12 s).
    manager.controller("csr-approval", approval.reconcile, workers=WORKERS).watch(csrs)

    common = ClusterRolesController(api, clusters, labels=options.labels, cache=roles.store)
    common_controller = manager.controller("clusterrole", common.reconcile)
    # Only whether any cluster exists matters: clusters coming and going, not their updates.
    common_controller.watch(
        clusters, lambda _: [COMMON_ROLES_KEY], predicate=lambda c: c.old is None or c.new is None
    )
    common_controller.watch(roles, lambda _: [COMMON_ROLES_KEY])

    lease = LeaseController(api, clusters, leases, clock=clock, recorder=recorder)
    lease_controller = manager.controller("lease", lease.reconcile)
    lease_controller.watch(clusters)
    lease_controller.watch(leases, lease_key)

    clock_sync = ClockSyncController(api, clusters, leases, clock=clock)
    manager.controller("clocksync", clock_sync.reconcile).watch(
        leases, lease_key, predicate=_renewed
    )

    taint = TaintController(api, clusters, recorder=recorder)
    manager.controller("taint", taint.reconcile).watch(clusters)

    # Upstream's registration hub runs it whatever the AddonManagement gate says.
    add_addon_health_controller(manager)

    if options.gate("ResourceCleanup"):
        gc = GcController(
            api, clusters, clock=clock, recorder=recorder, resources=options.gc_resources
        )
        manager.controller("gc", gc.reconcile).watch(clusters)

    if signers is not None and signers.names:
        _add_custom_signers(
            manager,
            api,
            clusters,
            signers,
            approvers=approvers,
            clock=clock,
            recorder=recorder,
        )

    async def bootstrap_rbac() -> None:
        await ensure(api, kinds.NAMESPACE, {"metadata": {"name": rbac.BOOTSTRAP_NAMESPACE}})
        await ensure(
            api,
            kinds.SERVICE_ACCOUNT,
            {
                "metadata": {
                    "name": rbac.BOOTSTRAP_SERVICE_ACCOUNT,
                    "namespace": rbac.BOOTSTRAP_NAMESPACE,
                }
            },
        )
        for obj in rbac.bootstrap_objects():
            await ensure(
                api,
                kinds.CLUSTER_ROLE if obj["kind"] == "ClusterRole" else kinds.CLUSTER_ROLE_BINDING,
                models.wire(obj),
            )
        await _drop_legacy_bootstrap_binding(api)

    manager.add("bootstrap-rbac", bootstrap_rbac)
    return manager


async def _drop_legacy_bootstrap_binding(api: Api) -> None:
    """Earlier pyocm hubs bound the bootstrap role once, by the role's own name, to the
    tokens' group and the ServiceAccount's pre-2025 name; upstream's two bindings (just
    applied) replace it, so the old name stops granting anything."""
    try:
        await api.delete(kinds.CLUSTER_ROLE_BINDING, rbac.LEGACY_BOOTSTRAP_BINDING)
    except ApiError as err:
        if err.code != 404:
            raise


def _add_custom_signers(
    manager: Manager,
    api: Api,
    clusters: Informer,
    signers: SignerRegistry,
    *,
    approvers: Sequence[CsrApprover],
    clock: Clock,
    recorder: Recorder,
) -> None:
    """Approve (through the same chain) and sign the CSRs of the registered signers."""
    names = signers.names
    csrs = manager.informer(kinds.CSR, fields=custom_signer_selector(names))

    def registered(change: Change) -> bool:
        obj = change.new if change.new is not None else change.old
        return shapes.mapping(shapes.mapping(obj).get("spec")).get("signerName") in names

    # The cluster-agent approver stays first: it passes these CSRs on (they are not for
    # its signer), so only the added approvers decide them.
    approval = CsrApprovalController(
        api, csrs, clusters, clock=clock, recorder=recorder, approvers=approvers
    )
    manager.controller("custom-signer-csr-approval", approval.reconcile).watch(
        csrs, predicate=registered
    )
    signing = CsrSigningController(api, csrs, registry=signers, clock=clock)
    manager.controller("csr-signing", signing.reconcile).watch(csrs, predicate=registered)
