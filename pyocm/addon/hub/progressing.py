"""An MCA's ``Progressing`` condition and last applied configs (upstream
``addonprogressing``).

A spec config of a kind the add-on does not support is reported first
(``ConfigurationUnsupported``); until the deploy controller reports ``ManifestApplied``
(and ``HostingManifestApplied`` for a hosted add-on) the MCA waits for it. Then the
add-on's ManifestWorks (labelled ``open-cluster-management.io/addon-name``; pre-delete
hook works aside) tell the rest: none yet, configs other than the MCA's desired ones
(their ``config-spec-hash`` annotation), or not yet applied and available for their
generation is still progressing; all current is ``Completed``, and every config's
``lastAppliedConfig`` becomes its desired one (kept from then on, so a later
unhealthy spell does not roll the rollout back).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyocm.addon.hub import common, refs
from pyocm.api import conditions, wellknown
from pyocm.api import kinds as ocm
from pyocm.base.clock import Clock
from pyocm.runtime.cache import key_of
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Informer

CONTROLLER_NAME = "addon-progressing-controller"
Obj = dict[str, Any]
CONFIG_SPEC_HASH_ANNOTATION = "open-cluster-management.io/config-spec-hash"
#: ManifestWork informer index: ``<cluster namespace>/<add-on>`` of add-on works.
WORKS_BY_ADDON = "addonWorksByAddon"


def works_by_addon(work: Obj) -> list[str]:
    """Default-mode works under their own namespace; hosted ones (``addon-namespace``
    label) under the managed cluster's, as upstream's queue key maps them."""
    labels = work["metadata"].get("labels") or {}
    addon = labels.get(wellknown.ADDON_NAME_LABEL)
    if not addon:
        return []
    namespace = labels.get(wellknown.ADDON_NAMESPACE_LABEL) or work["metadata"].get("namespace")
    return [f"{namespace}/{addon}"]


def unsupported_config(mca: Mapping[str, Any]) -> refs.GR | None:
    """The first spec config whose group-resource is not in ``status.supportedConfigs``."""
    supported = {refs.gr_of(c) for c in mca.get("status", {}).get("supportedConfigs") or []}
    for config in mca.get("spec", {}).get("configs") or []:
        if refs.gr_of(config) not in supported:
            return refs.gr_of(config)
    return None


def configs_map(config_refs: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """``ConfigsToMap``: ``<resource>[.<group>]/<namespace>/<name>`` -> spec hash."""
    found: dict[str, str] = {}
    for ref in config_refs:
        desired = ref.get("desiredConfig")
        if desired is None:
            continue
        resource = ref.get("resource", "") + (f".{ref['group']}" if ref.get("group") else "")
        namespace, name = refs.referent_of(desired)
        found[f"{resource}/{namespace}/{name}"] = desired.get("specHash") or ""
    return found


def work_matches(work: Mapping[str, Any], mca: Mapping[str, Any]) -> bool:
    """``workConfigsMatchesAddon``."""
    config_refs = mca.get("status", {}).get("configReferences") or []
    annotation = (work["metadata"].get("annotations") or {}).get(CONFIG_SPEC_HASH_ANNOTATION)
    if annotation is None:
        return not config_refs
    try:
        work_hashes = json.loads(annotation)
    except ValueError:
        return False
    if not isinstance(work_hashes, dict) or any(v == "" for v in work_hashes.values()):
        return False
    for ref in config_refs:
        if not (ref.get("desiredConfig") or {}).get("specHash"):
            return False
    return work_hashes == configs_map(config_refs)


def work_ready(work: Mapping[str, Any]) -> bool:
    """Available and Applied True, both for the work's current generation."""
    generation = work["metadata"].get("generation", 0)
    found = work.get("status", {}).get("conditions")
    for kind in (wellknown.WORK_AVAILABLE, wellknown.WORK_APPLIED):
        cond = conditions.find(found, kind)
        if cond is None or cond.get("status") != "True":
            return False
        if cond.get("observedGeneration", 0) != generation:
            return False
    return True


def progressing(mca: Mapping[str, Any], works: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """The condition's ``(reason, message)`` once the manifests were applied."""
    if not works:
        return "Progressing", "progressing... no addon works"
    pre_delete = f"addon-{mca['metadata']['name']}-pre-delete"
    for work in works:
        if work["metadata"]["name"].startswith(pre_delete):
            continue
        if not work_matches(work, mca):
            return "Progressing", "progressing... mca and work configs mismatch"
        if not work_ready(work):
            return "Progressing", "progressing... work is not ready"
    return "Completed", "completed with no errors."


@dataclass
class ProgressingController:
    api: Api
    mcas: Informer
    cmas: Informer
    works: Informer
    clock: Clock

    async def reconcile(self, key: str) -> None:
        found = common.managed_addon(self.mcas, self.cmas, key)
        if found is None:
            return
        mca, _cma = found
        status = copy.deepcopy(mca.get("status", {}))
        reason, message = self._judge(mca, status)
        condition_status = "True" if reason == "Progressing" else "False"
        conditions.set_condition(
            status.setdefault("conditions", []),
            type=wellknown.ADDON_PROGRESSING,
            status=condition_status,
            reason=reason,
            message=message,
            now=self.clock.now(),
        )
        await common.patch_status(self.api, ocm.MANAGED_CLUSTER_ADDON, mca, status)

    def _judge(self, mca: Obj, status: Obj) -> tuple[str, str]:
        unsupported = unsupported_config(mca)
        if unsupported is not None:
            return (
                "ConfigurationUnsupported",
                f"Configuration with gvr {unsupported[0]}/{unsupported[1]} "
                "is not supported for this addon",
            )
        found = status.get("conditions")
        if conditions.find(found, wellknown.ADDON_MANIFEST_APPLIED) is None:
            return (
                "WaitingForManifestApplied",
                "Waiting for ManagedClusterAddOn ManifestApplied condition",
            )
        annotations = mca["metadata"].get("annotations") or {}
        hosting = annotations.get(wellknown.ADDON_HOSTING_CLUSTER_ANNOTATION, "")
        if hosting and conditions.find(found, wellknown.ADDON_HOSTING_MANIFEST_APPLIED) is None:
            return (
                "WaitingForHostingManifestApplied",
                "Waiting for ManagedClusterAddOn HostingManifestApplied condition",
            )
        reason, message = progressing(mca, self._works(mca, hosting))
        if reason == "Completed":
            for ref in status.get("configReferences") or []:
                ref["lastAppliedConfig"] = copy.deepcopy(ref.get("desiredConfig"))
        return reason, message

    def _works(self, mca: Obj, hosting: str) -> list[Obj]:
        """The add-on's works in the cluster's namespace (without the hosted label) and,
        hosted, those in the hosting cluster's namespace labelled for this cluster."""
        cluster, name = mca["metadata"]["namespace"], mca["metadata"]["name"]
        found = []
        for work in self.works.store.by_index(WORKS_BY_ADDON, f"{cluster}/{name}"):
            labels = work["metadata"].get("labels") or {}
            namespace = work["metadata"].get("namespace")
            if (namespace == cluster and wellknown.ADDON_NAMESPACE_LABEL not in labels) or (
                hosting
                and namespace == hosting
                and labels.get(wellknown.ADDON_NAMESPACE_LABEL) == cluster
            ):
                found.append(work)
        return sorted(found, key=key_of)
