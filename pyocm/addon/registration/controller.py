"""The registration controller: one ManagedClusterAddOn of a registered add-on at a time
(upstream's ``addon-registration-controller``, ocm-behaviour.md 4.9).

Nothing happens until the add-on is owned by its ClusterManagementAddOn (an owner
reference of kind ClusterManagementAddOn with the add-on's name: the owner controller
sets it). Then, in one status patch: ``supportedConfigs`` from the add-on's options;
with no registration option, ``RegistrationApplied`` True ``NilRegistration``;
otherwise the add-on's hub permissions are configured, and ``registrations``,
``namespace`` and ``RegistrationApplied`` (True ``SetPermissionApplied``, or False
``PermissionConfigPending`` while the registration names no subject yet) are written.
A permission error sets False ``SetPermissionFailed`` alone and is retried.

Upstream writes ``supportedConfigs`` first in a patch of its own and comes back for the
rest; the end state is the same, in one write instead of two.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any

from pyocm.addon.agent import AgentAddon, AgentAddonOptions, SubjectNotReady
from pyocm.addon.registration import status as st
from pyocm.api import conditions, models, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn, ManagedClusterAddOnStatus
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.base.clock import Clock
from pyocm.runtime.cache import split_key
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Informer

log = logging.getLogger(__name__)
CONTROLLER_NAME = "addon-registration-controller"


def owned_by_cma(addon: ManagedClusterAddOn) -> bool:
    """``IsOwnedByCMA``."""
    name = addon["metadata"]["name"]
    return any(
        ref.get("kind") == "ClusterManagementAddOn" and ref.get("name") == name
        for ref in addon["metadata"].get("ownerReferences") or []
    )


class RegistrationController:
    def __init__(
        self,
        api: Api,
        *,
        addons: Mapping[str, AgentAddon],
        clusters: Informer,
        mcas: Informer,
        clock: Clock,
    ) -> None:
        self.api = api
        self.addons = addons
        self.clusters = clusters
        self.mcas = mcas
        self.clock = clock

    async def reconcile(self, key: str) -> None:
        namespace, name = split_key(key)
        agent = self.addons.get(name)
        if agent is None or namespace is None:
            return
        cluster = self.clusters.store.get(namespace)
        cached = self.mcas.store.get(key)
        if cluster is None or cached is None:
            return
        addon = models.view(ManagedClusterAddOn, copy.deepcopy(cached))
        if not owned_by_cma(addon):
            log.info("OwnerReferences is not set for %s", key)
            return
        options = agent.options()
        if not options.accepts(addon):
            return
        desired = copy.deepcopy(addon.get("status", {}))
        desired["supportedConfigs"] = st.supported_configs(options)
        # What was decided is written even when a step fails (a permission error's
        # condition, the supported configs), as upstream patches before returning it.
        try:
            await self._registration(
                options, models.view(ManagedCluster, copy.deepcopy(cluster)), addon, desired
            )
        finally:
            await self._patch(addon, desired)

    async def _registration(
        self,
        options: AgentAddonOptions,
        cluster: ManagedCluster,
        addon: ManagedClusterAddOn,
        desired: ManagedClusterAddOnStatus,
    ) -> None:
        """Fill ``desired``; a permission error is set in it, then raised."""
        registration = options.registration
        if registration is None:
            self._condition(desired, st.applied(st.NIL_REGISTRATION))
            return
        configs = await registration.configurations(cluster, addon)
        cluster_name, name = cluster["metadata"]["name"], addon["metadata"]["name"]
        registrations = st.build_registrations(
            configs,
            addon.get("status", {}).get("registrations") or [],
            cluster=cluster_name,
            addon=name,
        )
        ready = True
        if registration.permissions is not None:
            # The grants follow the registrations decided here, not the status as the
            # cluster's agent (who may write it) left it.
            granted = copy.deepcopy(addon)
            granted.setdefault("status", {})["registrations"] = copy.deepcopy(registrations)
            try:
                await registration.permissions(self.api, cluster, granted)
            except SubjectNotReady:
                ready = False
            except Exception as err:
                self._condition(desired, st.permission_failed(err))
                raise
        namespace = st.default_namespace(addon)
        if options.install_namespace is not None:
            # Asked before anything is put in ``desired``: when it fails, the namespace
            # and registrations written stay as they are (upstream returns without a
            # patch), so the agent does not move the credential to a default namespace.
            namespace = await options.install_namespace(self.api, addon) or namespace
        desired["registrations"] = registrations
        desired["namespace"] = namespace
        reason = st.SET_PERMISSION_APPLIED if ready else st.PERMISSION_CONFIG_PENDING
        message = st.CONFIGURED if ready else st.SUBJECT_NOT_READY
        self._condition(desired, st.applied(reason, message))

    def _condition(self, desired: ManagedClusterAddOnStatus, outcome: tuple[str, str, str]) -> None:
        found = desired.setdefault("conditions", [])
        status, reason, message = outcome
        conditions.set_condition(
            found,  # type: ignore[arg-type]
            type=wellknown.ADDON_REGISTRATION_APPLIED,
            status=status,
            reason=reason,
            message=message,
            now=self.clock.now(),
        )

    async def _patch(self, addon: ManagedClusterAddOn, desired: ManagedClusterAddOnStatus) -> None:
        """One guarded merge patch of what changed; empty lists are removed, as Go's
        omitempty drops them."""
        current = addon.get("status", {})
        changes: dict[str, Any] = {}
        for field in ("supportedConfigs", "registrations", "namespace", "conditions"):
            value: Any = desired.get(field)
            if value == current.get(field) or (not value and not current.get(field)):
                continue
            changes[field] = value or None
        if not changes:
            return
        meta = addon["metadata"]
        patch = {"metadata": {"resourceVersion": meta["resourceVersion"]}, "status": changes}
        await self.api.patch(
            ocm.MANAGED_CLUSTER_ADDON,
            meta["name"],
            patch,
            namespace=meta["namespace"],
            subresource="status",
        )
