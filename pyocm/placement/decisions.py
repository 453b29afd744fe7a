"""Writing a Placement's PlacementDecisions as upstream's scheduling controller does
(``bind`` and ``createOrUpdatePlacementDecision``).

For each wanted PlacementDecision: create it when missing (with its labels and a
controller ownerRef to the Placement; event ``DecisionCreate``), then patch its
``status.decisions`` when they differ (events ``DecisionUpdate`` and ``ScoreUpdate``),
else its labels when they differ (no event). PlacementDecisions of the placement (by
the placement label) that are no longer wanted are deleted (event ``DecisionDelete``).

Existing PlacementDecisions are read from the informer's cache through an index by
``namespace/placement``; writes are guarded by the resourceVersion read, so a stale
cache makes a write fail with 409 and the reconcile run again.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from pyocm.api import kinds as ocm
from pyocm.api import models, wellknown
from pyocm.api.models.cluster_v1beta1 import Placement, PlacementDecision
from pyocm.kube.status import ApiError
from pyocm.placement.scheduling.groups import MAX_DECISIONS_PER_PAGE, DecisionPage
from pyocm.placement.scheduling.prioritize import PluginWarning, score_event_message
from pyocm.runtime.client import Api
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Informer

#: The PlacementDecision informer's index: ``<namespace>/<placement label>``.
BY_PLACEMENT_INDEX = "placement"


def by_placement(decision: Mapping[str, Any]) -> list[str]:
    """An index function: ``<namespace>/<placement>`` from the placement label."""
    meta = decision.get("metadata") or {}
    placement = (meta.get("labels") or {}).get(wellknown.PLACEMENT_LABEL)
    namespace = meta.get("namespace")
    return [f"{namespace}/{placement}"] if isinstance(placement, str) and namespace else []


def desired(placement: Placement, page: DecisionPage) -> PlacementDecision:
    """The PlacementDecision upstream writes for ``page``."""
    if len(page.clusters) > MAX_DECISIONS_PER_PAGE:
        raise ValueError(
            f"the number of clusterdecisions {len(page.clusters)} exceeds "
            f"the max limitation {MAX_DECISIONS_PER_PAGE}"
        )
    meta = placement["metadata"]
    return {
        "apiVersion": ocm.PLACEMENT_DECISION.api_version,
        "kind": ocm.PLACEMENT_DECISION.kind,
        "metadata": {
            "name": page.name,
            "namespace": meta["namespace"],
            "labels": page.labels,
            "ownerReferences": [
                {
                    "apiVersion": ocm.PLACEMENT.api_version,
                    "kind": ocm.PLACEMENT.kind,
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "status": {"decisions": page.decisions()},
    }


class DecisionWriter:
    """Writes one placement's PlacementDecisions; see the module's docstring."""

    def __init__(self, api: Api, decisions: Informer, *, recorder: Recorder) -> None:
        self.api, self.decisions, self.recorder = api, decisions, recorder
        decisions.add_index(BY_PLACEMENT_INDEX, by_placement)

    def existing(self, namespace: str, placement: str) -> list[PlacementDecision]:
        """The cached PlacementDecisions labelled for ``placement`` in ``namespace``."""
        found = self.decisions.store.by_index(BY_PLACEMENT_INDEX, f"{namespace}/{placement}")
        return [models.view(PlacementDecision, obj) for obj in found]

    async def write(
        self,
        placement: Placement,
        pages: Sequence[DecisionPage],
        *,
        scores: Mapping[str, int],
        warning: PluginWarning | None = None,
    ) -> None:
        """Make ``placement``'s PlacementDecisions ``pages``, deleting any others."""
        errors: list[Exception] = []
        for page in pages:
            try:
                await self._create_or_update(placement, desired(placement, page), scores, warning)
            except (ApiError, ValueError) as err:
                errors.append(err)
        if errors:
            raise errors[0]
        wanted = {page.name for page in pages}
        meta = placement["metadata"]
        for extra in self.existing(meta["namespace"], meta["name"]):
            if extra["metadata"]["name"] not in wanted:
                await self._delete(placement, extra)

    async def _create_or_update(
        self,
        placement: Placement,
        wanted: PlacementDecision,
        scores: Mapping[str, int],
        warning: PluginWarning | None,
    ) -> None:
        meta = wanted["metadata"]
        stored = self.decisions.store.get(f"{meta['namespace']}/{meta['name']}")
        if stored is None:
            body = {key: value for key, value in models.wire(wanted).items() if key != "status"}
            try:
                stored = await self.api.create(ocm.PLACEMENT_DECISION, body)
            except ApiError as err:
                if err.code != 409:
                    raise
                # Made by an earlier pass the cache has not seen yet: read it.
                stored = await self.api.get(
                    ocm.PLACEMENT_DECISION, meta["name"], namespace=meta["namespace"]
                )
            else:
                await self._event(
                    placement,
                    "DecisionCreate",
                    "DecisionCreated",
                    _note(placement, meta["name"], "created"),
                )
        current = models.view(PlacementDecision, stored)
        # Upstream writes the status first and, when it changed, leaves the labels to the
        # next pass (its label write would conflict with the status write).
        if current.get("status", {}).get("decisions") != wanted["status"]["decisions"]:
            await self.api.patch(
                ocm.PLACEMENT_DECISION,
                meta["name"],
                {
                    "metadata": {"resourceVersion": current["metadata"]["resourceVersion"]},
                    "status": {"decisions": models.wire(wanted)["status"]["decisions"]},
                },
                namespace=meta["namespace"],
                subresource="status",
            )
            await self._updated_events(placement, meta["name"], scores, warning)
            return
        if current["metadata"].get("labels") != meta["labels"]:
            await self.api.patch(
                ocm.PLACEMENT_DECISION,
                meta["name"],
                {
                    "metadata": {
                        "resourceVersion": current["metadata"]["resourceVersion"],
                        "labels": _labels_patch(
                            current["metadata"].get("labels", {}), meta["labels"]
                        ),
                    }
                },
                namespace=meta["namespace"],
            )

    async def _updated_events(
        self,
        placement: Placement,
        name: str,
        scores: Mapping[str, int],
        warning: PluginWarning | None,
    ) -> None:
        note = _note(placement, name, "updated")
        if warning is not None:
            await self._event(
                placement,
                "DecisionUpdate",
                "DecisionUpdated",
                note + f": {warning.message} in plugin {warning.plugin}",
                type="Warning",
            )
        else:
            await self._event(placement, "DecisionUpdate", "DecisionUpdated", note)
        if scores:
            await self._event(placement, "ScoreUpdate", "ScoreUpdated", score_event_message(scores))

    async def _delete(self, placement: Placement, decision: PlacementDecision) -> None:
        meta = decision["metadata"]
        try:
            await self.api.delete(ocm.PLACEMENT_DECISION, meta["name"], namespace=meta["namespace"])
        except ApiError as err:
            if err.code == 404:
                return
            raise
        await self._event(
            placement,
            "DecisionDelete",
            "DecisionDeleted",
            _note(placement, meta["name"], "deleted"),
        )

    async def _event(
        self, placement: Placement, reason: str, action: str, note: str, *, type: str = "Normal"
    ) -> None:
        await self.recorder.event(
            models.wire(placement),
            reason=reason,
            action=action,
            note=note,
            type="Warning" if type == "Warning" else "Normal",
        )


def _note(placement: Placement, decision: str, verb: str) -> str:
    meta = placement["metadata"]
    return (
        f"Decision {decision} is {verb} with placement {meta['name']}"
        f" in namespace {meta['namespace']}"
    )


def _labels_patch(current: Mapping[str, str], wanted: Mapping[str, str]) -> dict[str, str | None]:
    """A merge patch turning labels ``current`` into ``wanted`` (None removes one)."""
    patch: dict[str, str | None] = {key: None for key in current if key not in wanted}
    patch.update(copy.deepcopy(dict(wanted)))
    return patch
