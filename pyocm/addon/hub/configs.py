"""Configuration resolution and rollout (upstream ``addonconfiguration``).

For each ClusterManagementAddOn the add-on manager manages, the configuration graph
(:mod:`pyocm.addon.hub.graph`) says each MCA's desired configs and which MCAs the
rollout strategies update now. Those get the desired configs merged into
``status.configReferences`` (what was recorded for a config still desired is kept, its
``desiredConfig`` replaced; new ones appended; sorted by group and resource) and
``Configured`` True; MCAs still waiting get ``Configured`` False; MCAs done get it
True. Then each install progression of the CMA gets its ``Progressing`` condition, and
once every configured MCA is done, its configs' last applied and last known good
configs become the desired ones.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pyocm.addon.hub import common, graph, install, refs
from pyocm.api import conditions, models, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.addon_v1beta1 import ClusterManagementAddOn
from pyocm.api.models.cluster_v1beta1 import PlacementDecision
from pyocm.base.clock import Clock
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Result
from pyocm.runtime.informer import Informer
from pyocm.work import rollout

log = logging.getLogger(__name__)
CONTROLLER_NAME = "addon-configuration-controller"
Obj = dict[str, Any]

REASON_CONFIGURED = "ConfigurationsConfigured"
MESSAGE_CONFIGURED = "Configurations configured"
REASON_NOT_CONFIGURED = "ConfigurationsNotConfigured"
MESSAGE_NOT_CONFIGURED = "Configurations updated and not configured yet"


def merge_config_references(mca: Mapping[str, Any], desired: graph.ConfigMap) -> list[Obj]:
    """``mergeAddonConfig``: the MCA's config references made the desired ones."""
    merged: dict[refs.GR, list[Obj]] = {}
    for recorded in mca.get("status", {}).get("configReferences") or []:
        gr = refs.gr_of(recorded)
        kept = merged.setdefault(gr, [])
        if graph.find(desired, gr, refs.referent_of(recorded.get("desiredConfig"))) >= 0:
            kept.append(copy.deepcopy(recorded))
    for gr, wanted in desired.items():
        kept = merged.setdefault(gr, [])
        for ref in wanted:
            i = graph.find(merged, gr, refs.referent_of(ref["desiredConfig"]))
            if i >= 0:
                kept[i]["desiredConfig"] = copy.deepcopy(ref["desiredConfig"])
            else:
                kept.append({**copy.deepcopy(ref), "lastObservedGeneration": 0})
    return [ref for gr in refs.sorted_grs(merged) for ref in merged[gr]]


def progression_condition(
    progression: Obj, counts: tuple[int, int, int, int], total: int, configured: int, now: datetime
) -> None:
    """``setAddOnInstallProgressionsAndLastApplied``: 0/0 is not completed (it would
    let the next group start before anything was applied)."""
    upgrading, done, failed, timed_out = counts
    if (configured == 0 and done == 0) or done != configured:
        status, reason = "True", graph.REASON_PROGRESSING
        message = (
            f"selected clusters {total}. configured addons {upgrading + done}/{configured} "
            f"progressing..., {failed} failed {timed_out} timeout."
        )
    else:
        for ref in progression.get("configReferences") or []:
            ref["lastAppliedConfig"] = copy.deepcopy(ref.get("desiredConfig"))
            ref["lastKnownGoodConfig"] = copy.deepcopy(ref.get("desiredConfig"))
        status, reason = "False", graph.REASON_COMPLETED
        message = (
            f"selected clusters {total}. configured addons {done}/{configured} "
            f"completed with no errors, {failed} failed {timed_out} timeout."
        )
    conds = progression.setdefault("conditions", [])
    conditions.set_condition(
        conds,
        type=wellknown.ADDON_PROGRESSING,
        status=status,
        reason=reason,
        message=message,
        now=now,
    )


def _configured(mca: Mapping[str, Any], status: str) -> bool:
    """Whether the MCA's Configured condition already says ``status`` with its reason
    and message (then a write would change nothing)."""
    reason, message = (
        (REASON_CONFIGURED, MESSAGE_CONFIGURED)
        if status == "True"
        else (REASON_NOT_CONFIGURED, MESSAGE_NOT_CONFIGURED)
    )
    found = conditions.find(mca.get("status", {}).get("conditions"), wellknown.ADDON_CONFIGURED)
    if found is None:
        return False
    return (found.get("status"), found.get("reason"), found.get("message")) == (
        status,
        reason,
        message,
    )


@dataclass
class ConfigurationController:
    api: Api
    cmas: Informer
    mcas: Informer
    placements: Informer
    decisions: Informer
    clock: Clock

    async def reconcile(self, name: str) -> Result | None:
        cma = models.view(ClusterManagementAddOn, self.cmas.store.get(name))
        if cma is None or not common.managed_by_addon_manager(cma):
            return None
        mcas = self.mcas.store.by_index(common.MCA_BY_NAME, name)
        now = self.clock.now()
        built = graph.build(cma, mcas, self._placements(cma))
        built.generate(now)
        errors: list[ApiError] = []
        await self._configure_addons(built, now, errors)
        await self._progressions(cma, built, now, errors)
        if errors:
            raise errors[0]
        wait = built.requeue_after()
        return Result(requeue_after=wait) if wait is not None else None

    def _placements(
        self, cma: ClusterManagementAddOn
    ) -> dict[tuple[str, str], graph.Placement | None]:
        found: dict[tuple[str, str], graph.Placement | None] = {}
        for strategy in cma.get("spec", {}).get("installStrategy", {}).get("placements") or []:
            ref = (strategy["namespace"], strategy["name"])
            placement = self.placements.store.get(f"{ref[0]}/{ref[1]}")
            if placement is None:
                found[ref] = None
                continue
            decisions = self.decisions.store.by_index(
                install.DECISIONS_BY_PLACEMENT, f"{ref[0]}/{ref[1]}"
            )
            try:
                groups = rollout.decision_groups(
                    models.view(PlacementDecision, d) for d in decisions
                )
            except rollout.RolloutError as err:
                raise graph.GraphError(str(err)) from err
            found[ref] = graph.Placement(placement, groups)
        return found

    async def _configure_addons(
        self, built: graph.Graph, now: datetime, errors: list[ApiError]
    ) -> None:
        # Each pass looks at every MCA of the add-on: only those that change are copied,
        # or a fleet's MCAs (each change of one wakes the whole add-on) cost a quadratic
        # amount of copying.
        updated: set[str] = set()
        for node in built.all_nodes():
            for addon in node.to_update():
                updated.add(addon.cluster)
                refs = merge_config_references(addon.mca, addon.desired)
                current = addon.mca.get("status", {})
                if refs == (current.get("configReferences") or []) and _configured(
                    addon.mca, "True"
                ):
                    continue
                status = copy.deepcopy(current)
                status["configReferences"] = refs
                if not refs:
                    del status["configReferences"]
                await self._write(addon.mca, status, "True", now, errors)
        for node in built.all_nodes():
            for wanted, state in (
                ("False", rollout.Status.TO_APPLY),
                ("True", rollout.Status.SUCCEEDED),
            ):
                for addon in node.with_status(state):
                    if addon.cluster in updated or _configured(addon.mca, wanted):
                        continue
                    status = copy.deepcopy(addon.mca.get("status", {}))
                    await self._write(addon.mca, status, wanted, now, errors)

    async def _write(
        self, mca: Obj, status: Obj, configured: str, now: datetime, errors: list[ApiError]
    ) -> None:
        reason, message = (
            (REASON_CONFIGURED, MESSAGE_CONFIGURED)
            if configured == "True"
            else (REASON_NOT_CONFIGURED, MESSAGE_NOT_CONFIGURED)
        )
        conds = status.setdefault("conditions", [])
        conditions.set_condition(
            conds,
            type=wellknown.ADDON_CONFIGURED,
            status=configured,
            reason=reason,
            message=message,
            now=now,
        )
        try:
            await common.patch_status(self.api, ocm.MANAGED_CLUSTER_ADDON, mca, status)
        except ApiError as err:
            errors.append(err)

    async def _progressions(
        self, cma: ClusterManagementAddOn, built: graph.Graph, now: datetime, errors: list[ApiError]
    ) -> None:
        status: Obj = copy.deepcopy(dict(cma.get("status", {})))
        nodes = {n.ref: n for n in built.nodes}
        for progression in status.get("installProgressions") or []:
            node = nodes.get((progression.get("namespace", ""), progression.get("name", "")))
            if node is None:
                continue
            progression_condition(
                progression, node.counts(), len(node.clusters), len(node.configured), now
            )
        try:
            await common.patch_status(self.api, ocm.CLUSTER_MANAGEMENT_ADDON, cma, status)
        except ApiError as err:
            errors.append(err)
