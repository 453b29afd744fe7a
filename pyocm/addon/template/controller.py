"""Template add-ons come and go with their ClusterManagementAddOns (upstream's
``addon-template-controller``; ocm-behaviour.md 4.6).

For each CMA whose default configs name the AddOnTemplate kind, a
:class:`~pyocm.addon.template.agent.TemplateAddon` joins the
:class:`~pyocm.addon.registry.AddonRegistry` the framework's controllers serve; it
leaves once the CMA is gone or names no template **and** no MCA of the add-on is left
(their removal still needs it). A name pyocm implements in code is never taken over.

One thing is pyocm's: an MCA whose template reference names an AddOnTemplate that does
not exist gets ``ManifestApplied`` False (``ManifestWorkApplyFailed``, "failed to get
manifest from agent interface: addontemplate... not found"), the condition and message
upstream's deploy controller writes when a template it had goes missing. Upstream says
nothing while the template was never there (its reference has no spec hash, so no
controller of the add-on looks at the MCA); the issue asks for the MCA to say it.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyocm.addon.agent import ADDON_TEMPLATE, AgentAddon
from pyocm.addon.hub import common, hashes
from pyocm.addon.registry import AddonRegistry
from pyocm.addon.template import refs
from pyocm.api import conditions, models, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.addon_v1beta1 import ClusterManagementAddOn
from pyocm.base.clock import Clock
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Change, Informer

log = logging.getLogger(__name__)
CONTROLLER_NAME = "addon-template-controller"
#: pyocm's own: the MCAs whose template is missing (see the module docstring).
MISSING_CONTROLLER_NAME = "addon-template-missing-controller"
REASON_APPLY_FAILED = "ManifestWorkApplyFailed"
Obj = dict[str, Any]


def references_template(change: Change) -> bool:
    """An MCA event worth a look: the MCA refers to a template (upstream's filter)."""
    return refs.template_ref(change.obj.get("status", {}).get("configReferences") or []) is not None


@dataclass
class TemplateAddonController:
    api: Api
    registry: AddonRegistry
    cmas: Informer
    mcas: Informer
    templates: Informer
    make: Callable[[str], AgentAddon]
    clock: Clock
    _refused: set[str] = field(default_factory=set)

    async def reconcile(self, name: str) -> None:
        """Add-on ``name`` joins or leaves the registry."""
        cma = models.view(ClusterManagementAddOn, self.cmas.store.get(name))
        if not refs.supports_templates(cma):
            if (
                name in self.registry
                and not self.registry.is_fixed(name)
                and not self.mcas.store.index_count(common.MCA_BY_NAME, name)
            ):
                log.info("stopping template add-on %s", name)
                self.registry.remove(name)
            return
        if self.registry.is_fixed(name):
            if name not in self._refused:
                self._refused.add(name)
                log.warning("add-on %s is implemented by pyocm: its template is not used", name)
            return
        if name not in self.registry:
            log.info("starting template add-on %s", name)
            self.registry.add(self.make(name))

    async def report_missing_template(self, key: str) -> None:
        """MCA ``key`` (``<cluster>/<addon>``) of a template add-on, when the template its
        reference names does not exist: say so. One MCA a pass: a fleet's MCAs changing
        costs a look at each, not a scan of all of them at each change."""
        mca = self.mcas.store.get(key)
        if mca is None:
            return
        name = mca["metadata"]["name"]
        if name not in self.registry or self.registry.is_fixed(name):
            return
        ref = refs.template_ref(mca.get("status", {}).get("configReferences") or [])
        desired = (ref or {}).get("desiredConfig") or {}
        wanted = desired.get("name")
        if not wanted or desired.get("specHash") or self.templates.store.get(wanted) is not None:
            return
        message = "failed to get manifest from agent interface: " + refs.not_found(
            "addontemplate", wanted
        )
        found = conditions.find(conditions.of(mca), wellknown.ADDON_MANIFEST_APPLIED)
        if found is not None and (found["status"], found["message"]) == ("False", message):
            return
        status = copy.deepcopy(mca.get("status", {}))
        conditions.set_condition(
            status.setdefault("conditions", []),
            type=wellknown.ADDON_MANIFEST_APPLIED,
            status="False",
            reason=REASON_APPLY_FAILED,
            message=message,
            now=self.clock.now(),
        )
        await common.patch_status(self.api, ocm.MANAGED_CLUSTER_ADDON, mca, status)

    def mcas_of_template(self, template: Obj) -> list[str]:
        """The keys of the MCAs whose references name ``template``."""
        key = hashes.config_of_key(template, ADDON_TEMPLATE)
        return self.mcas.store.index_keys(hashes.MCA_BY_CONFIG, key)
