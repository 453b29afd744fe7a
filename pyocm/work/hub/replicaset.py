"""ManifestWorkReplicaSets: one ManifestWork per cluster its Placements select (upstream's
ManifestWorkReplicaSetController, run when the hub gate ``ManifestWorkReplicaSet`` is on).

Each reconcile, in upstream's order: a set being deleted has its works deleted, then its
finalizer removed (with ``cascadeDeletionPolicy: Foreground`` only once the works are
gone); a set without the finalizer gets it; then every placement reference is deployed:
its PlacementDecisions name the clusters, its rollout strategy
(:mod:`pyocm.work.rollout`) says which of them get the template now, judged from
each up-to-date work's conditions; works of clusters or placements no longer selected
are deleted. Last the status: per-placement and total summaries counted from the works'
Applied/Available/Progressing/Degraded conditions, and the conditions
``PlacementVerified``, ``PlacementRolledOut`` and ``ManifestworkApplied``.

Works are labelled ``work.open-cluster-management.io/manifestworkreplicaset=<ns>.<name>``
and ``work.open-cluster-management.io/placementname=<placement>`` over the set's own
labels; a new work is named by ``generateName`` from the set's name, as upstream. A work is
current when its spec equals the template as upstream compares them, and is brought to
the template by a merge patch computed from old to new (:mod:`pyocm.work.hub.applier`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pyocm.api import conditions, models, wellknown
from pyocm.api import kinds as ocm
from pyocm.api.models.cluster_v1beta1 import Placement, PlacementDecision
from pyocm.api.models.work_v1 import ManifestWork
from pyocm.api.models.work_v1alpha1 import ManifestWorkReplicaSet
from pyocm.base.clock import Clock
from pyocm.kube import names, timefmt
from pyocm.kube.status import ApiError
from pyocm.runtime.cache import by_label
from pyocm.runtime.client import Api
from pyocm.runtime.controller import Result
from pyocm.runtime.informer import Change, Informer
from pyocm.runtime.manager import Manager
from pyocm.work import rollout
from pyocm.work.hub import applier

Obj = dict[str, Any]
GATE = "ManifestWorkReplicaSet"
#: The label on every work a set made: ``<namespace>.<name>`` of the set.
REPLICA_SET_LABEL = "work.open-cluster-management.io/manifestworkreplicaset"
FINALIZER = "work.open-cluster-management.io/manifest-work-cleanup"
PLACEMENT_NAME_LABEL = "work.open-cluster-management.io/placementname"
PLACEMENT_VERIFIED = "PlacementVerified"
PLACEMENT_ROLLED_OUT = "PlacementRolledOut"
MANIFESTWORK_APPLIED = "ManifestworkApplied"
REASON_NOT_FOUND = "PlacementDecisionNotFound"
REASON_EMPTY = "PlacementDecisionEmpty"
REASON_AS_EXPECTED = "AsExpected"
REASON_PROCESSING = "Processing"
REASON_NOT_AS_EXPECTED = "NotAsExpected"
REASON_PROGRESSING = "Progressing"
REASON_COMPLETE = "Complete"
REASON_INVALID_NAME = "InvalidManifestWorkName"
#: Upstream's informer resync: the longest a rollout waits before another look.
MAX_REQUEUE = 30 * 60.0
#: How long a created work is awaited in the cache before it is taken for lost (a watch
#: that broke between its ADDED and DELETED), as client-go's ExpectationsTimeout.
EXPECTATION_TIMEOUT = timedelta(minutes=5)
_BY_OWNER = "manifestworkreplicaset"
_BY_PLACEMENT = "placement"
_TRUE_WHEN = {
    PLACEMENT_VERIFIED: REASON_AS_EXPECTED,
    MANIFESTWORK_APPLIED: REASON_AS_EXPECTED,
    PLACEMENT_ROLLED_OUT: REASON_COMPLETE,
}


def owner_value(namespace: str, name: str) -> str:
    """The owner label's value for the set ``namespace/name``."""
    return f"{namespace}.{name}"


def set_key_of_work(work: Obj) -> list[str]:
    """The set a work belongs to, from its owner label (``<ns>.<name>``, exactly one dot)."""
    value = (work.get("metadata", {}).get("labels") or {}).get(REPLICA_SET_LABEL)
    parts = value.split(".") if isinstance(value, str) else []
    return [f"{parts[0]}/{parts[1]}"] if len(parts) == 2 else []


def _placements_of(obj: Obj) -> list[str]:
    namespace = obj["metadata"].get("namespace", "")
    refs = obj.get("spec", {}).get("placementRefs") or []
    return [f"{namespace}/{ref['name']}" for ref in refs if isinstance(ref, dict) and "name" in ref]


def _decision_placement(obj: Obj) -> list[str]:
    placement = (obj["metadata"].get("labels") or {}).get(wellknown.PLACEMENT_LABEL)
    return [f"{obj['metadata'].get('namespace')}/{placement}"] if placement else []


def rollout_status(work: ManifestWork) -> rollout.ClusterStatus:
    """A work's rollout status, as upstream's clusterRolloutStatusFunc reads its
    conditions: ToApply until the agent applied this generation and reported Progressing
    for it (and Degraded, if any, caught up); then Failed (progressing and degraded),
    Progressing, or Succeeded (no longer progressing)."""
    cluster = work["metadata"].get("namespace", "")
    generation = work["metadata"].get("generation", 0)
    found = work.get("status", {}).get("conditions") or []
    applied = conditions.find(found, wellknown.WORK_APPLIED)
    progressing = conditions.find(found, wellknown.WORK_PROGRESSING)
    degraded = conditions.find(found, wellknown.WORK_DEGRADED)

    def caught_up(cond: Mapping[str, Any] | None) -> bool:
        return cond is not None and cond.get("observedGeneration", 0) == generation

    if (
        not caught_up(applied)
        or not conditions.is_true(found, wellknown.WORK_APPLIED)
        or progressing is None
        or not caught_up(progressing)
        or (degraded is not None and not caught_up(degraded))
    ):
        return rollout.ClusterStatus(cluster, rollout.Status.TO_APPLY)
    if progressing.get("status") == "True" and conditions.is_true(found, wellknown.WORK_DEGRADED):
        status, since = rollout.Status.FAILED, degraded
    elif progressing.get("status") == "False":
        status, since = rollout.Status.SUCCEEDED, progressing
    else:  # True, or unknown: still progressing
        status, since = rollout.Status.PROGRESSING, progressing
    return rollout.ClusterStatus(cluster, status, last_transition=_time(since))


def _time(cond: Mapping[str, Any] | None) -> datetime | None:
    try:
        return timefmt.parse_time(str((cond or {}).get("lastTransitionTime", "")))
    except ValueError:
        return None


def _template_matches(mwrs: ManifestWorkReplicaSet, work: ManifestWork) -> bool:
    """Whether the work's spec is the set's template, compared as upstream compares."""
    return applier.spec_equal(
        mwrs["spec"].get("manifestWorkTemplate") or {}, work.get("spec") or {}
    )


def _summary(total: int = 0) -> Obj:
    # Every field, as Go writes the struct (none is omitempty).
    return {
        "total": total,
        "progressing": 0,
        "available": 0,
        "degraded": 0,
        "applied": 0,
        "desiredTotal": 0,
        "updated": 0,
    }


@dataclass
class _Deployed:
    """What deploying one set found: per-placement summaries, clusters with a current
    work, how many succeeded, how many the placements selected, the soonest recheck."""

    summaries: list[Obj] = field(default_factory=list)
    count: int = 0
    succeeded: int = 0
    selected: int = 0
    requeue: float = MAX_REQUEUE
    errors: list[str] = field(default_factory=list)


class ReplicaSetController:
    def __init__(
        self,
        api: Api,
        *,
        sets: Informer,
        works: Informer,
        placements: Informer,
        decisions: Informer,
        clock: Clock,
    ) -> None:
        self.api, self.clock = api, clock
        self.sets, self.works, self.placements, self.decisions = sets, works, placements, decisions
        sets.add_index(_BY_PLACEMENT, _placements_of)
        works.add_index(_BY_OWNER, by_label(REPLICA_SET_LABEL))
        decisions.add_index(_BY_PLACEMENT, _decision_placement)
        # Expectations, as client-go's: works created by generateName that the cache has
        # not shown yet, by (set, placement, cluster) -> (name, when). Without them a second
        # reconcile in that window would create a second work. An entry goes once the
        # cache shows a work there, once the works informer sees that work added or
        # deleted, when its set goes, or after EXPECTATION_TIMEOUT.
        self._created: dict[tuple[str, str, str], tuple[str, datetime]] = {}
        works.add_handler(self._observe_work)

    def sets_of_placement(self, obj: Obj) -> list[str]:
        """Keys of the sets referring to a Placement."""
        key = f"{obj['metadata'].get('namespace')}/{obj['metadata']['name']}"
        return [_key(s) for s in self.sets.store.by_index(_BY_PLACEMENT, key)]

    def sets_of_decision(self, obj: Obj) -> list[str]:
        """Keys of the sets referring to the Placement a PlacementDecision belongs to."""
        keys = _decision_placement(obj)
        return [_key(s) for k in keys for s in self.sets.store.by_index(_BY_PLACEMENT, k)]

    async def reconcile(self, key: str) -> Result | None:
        stored = self.sets.store.get(key)
        if stored is None:
            self._forget_set(key)
            return None
        mwrs = models.view(ManifestWorkReplicaSet, copy.deepcopy(stored))
        old_status = copy.deepcopy(stored.get("status") or {})
        meta = mwrs["metadata"]
        requeue, errors = MAX_REQUEUE, list[str]()
        if meta.get("deletionTimestamp"):
            await self._finalize(mwrs)
        elif FINALIZER not in (meta.get("finalizers") or []):
            await self._add_finalizer(mwrs)
        else:
            requeue, errors = await self._deploy_and_count(mwrs)
        await self._patch_status(mwrs, old_status)
        if errors:
            raise RuntimeError("; ".join(errors))
        return Result(requeue_after=requeue) if requeue < MAX_REQUEUE else None

    # -- finalizer -------------------------------------------------------------------

    def _works(self, mwrs: ManifestWorkReplicaSet) -> list[ManifestWork]:
        value = owner_value(mwrs["metadata"].get("namespace", ""), mwrs["metadata"]["name"])
        return [models.view(ManifestWork, w) for w in self.works.store.by_index(_BY_OWNER, value)]

    async def _finalize(self, mwrs: ManifestWorkReplicaSet) -> None:
        self._forget_set(_set_key(mwrs))
        errors = []
        for work in self._works(mwrs):
            try:
                await self._delete(work)
            except ApiError as err:
                errors.append(err.message)
        if errors:
            raise RuntimeError("; ".join(errors))
        foreground = mwrs["spec"].get("cascadeDeletionPolicy") == "Foreground"
        if foreground and self._works(mwrs):
            return  # the finalizer stays until the works are gone
        finalizers = mwrs["metadata"].get("finalizers") or []
        if FINALIZER in finalizers:
            await self._set_finalizers(mwrs, [f for f in finalizers if f != FINALIZER])

    async def _add_finalizer(self, mwrs: ManifestWorkReplicaSet) -> None:
        await self._set_finalizers(mwrs, [*(mwrs["metadata"].get("finalizers") or []), FINALIZER])

    async def _set_finalizers(self, mwrs: ManifestWorkReplicaSet, finalizers: list[str]) -> None:
        meta = mwrs["metadata"]
        # The resourceVersion makes it conditional: a Conflict retries from a fresh cache.
        patch = {"metadata": {"finalizers": finalizers, "resourceVersion": meta["resourceVersion"]}}
        try:
            await self.api.patch(
                ocm.MANIFEST_WORK_REPLICA_SET, meta["name"], patch, namespace=meta.get("namespace")
            )
        except ApiError as err:
            if err.code != 404:
                raise

    async def _delete(self, work: ManifestWork) -> None:
        meta = work["metadata"]
        try:
            await self.api.delete(ocm.MANIFEST_WORK, meta["name"], namespace=meta.get("namespace"))
        except ApiError as err:
            if err.code != 404:
                raise

    # -- deploy ----------------------------------------------------------------------

    async def _deploy_and_count(self, mwrs: ManifestWorkReplicaSet) -> tuple[float, list[str]]:
        status: Obj = mwrs.setdefault("status", {})  # type: ignore[assignment]
        conds: list[Obj] = status.setdefault("conditions", [])
        meta = mwrs["metadata"]
        owner = owner_value(meta.get("namespace", ""), meta["name"])
        problems = names.is_valid_label_value(owner)
        if problems:
            self._condition(
                conds, MANIFESTWORK_APPLIED, REASON_INVALID_NAME, _bad_owner(owner, problems)
            )
            return MAX_REQUEUE, []
        deployed = await self._deploy(mwrs, conds)
        if deployed is None:
            return MAX_REQUEUE, []
        self._count(mwrs, conds)
        return deployed.requeue, deployed.errors

    async def _deploy(self, mwrs: ManifestWorkReplicaSet, conds: list[Obj]) -> _Deployed | None:
        """Create, update and delete the works; None when a placement is missing (the
        status stops at PlacementVerified, as upstream's)."""
        namespace = mwrs["metadata"].get("namespace", "")
        refs = mwrs["spec"].get("placementRefs") or []
        wanted = {ref["name"] for ref in refs}
        works = self._works(mwrs)
        result = _Deployed()
        for work in works:
            if _label(work, PLACEMENT_NAME_LABEL) not in wanted:
                await self._try(result, self._delete(work), "failed to delete manifestwork")
        for ref in refs:
            stored = self.placements.store.get(f"{namespace}/{ref['name']}")
            if stored is None:
                self._condition(conds, PLACEMENT_VERIFIED, REASON_NOT_FOUND, "")
                return None
            placement = models.view(Placement, stored)
            await self._deploy_placement(mwrs, ref, placement, works, conds, result)
        status = mwrs["status"]
        status["placementSummary"] = result.summaries  # type: ignore[typeddict-item]
        summary: Obj = {**_summary(), **dict(status.get("summary") or {}), "total": result.count}
        status["summary"] = summary  # type: ignore[typeddict-item]
        if result.count == 0:
            summary.update(applied=0, available=0, degraded=0, progressing=0)
            self._condition(conds, PLACEMENT_VERIFIED, REASON_EMPTY, "")
        else:
            self._condition(conds, PLACEMENT_VERIFIED, REASON_AS_EXPECTED, "")
        done = result.selected == result.succeeded
        self._condition(
            conds, PLACEMENT_ROLLED_OUT, REASON_COMPLETE if done else REASON_PROGRESSING, ""
        )
        return result

    async def _deploy_placement(
        self,
        mwrs: ManifestWorkReplicaSet,
        ref: Mapping[str, Any],
        placement: Placement,
        works: list[ManifestWork],
        conds: list[Obj],
        result: _Deployed,
    ) -> None:
        name = ref["name"]
        mine = [w for w in works if _label(w, PLACEMENT_NAME_LABEL) == name]
        current = [w for w in mine if _template_matches(mwrs, w)]
        statuses = [rollout_status(w) for w in current]
        existing = {s.cluster for s in statuses}
        succeeded = {s.cluster for s in statuses if s.status == rollout.Status.SUCCEEDED}
        key = f"{placement['metadata'].get('namespace')}/{name}"
        decisions = [
            models.view(PlacementDecision, d)
            for d in self.decisions.store.by_index(_BY_PLACEMENT, key)
        ]
        try:
            groups = rollout.decision_groups(decisions)
            plan = rollout.rollout(
                ref.get("rolloutStrategy") or {}, groups, statuses, now=self.clock.now()
            )
        except rollout.RolloutError as err:
            result.errors.append(str(err))
            self._condition(conds, PLACEMENT_VERIFIED, REASON_NOT_AS_EXPECTED, "")
            return
        if plan.recheck_after is not None:
            result.requeue = min(result.requeue, plan.recheck_after)
        by_cluster = {w["metadata"].get("namespace", ""): w for w in mine}
        set_key = _set_key(mwrs)
        for cluster in by_cluster:
            self._created.pop((set_key, name, cluster), None)  # the cache has caught up
        for target in plan.to_rollout:
            if target.status != rollout.Status.TO_APPLY:
                continue
            if await self._apply(
                mwrs, name, target.cluster, by_cluster.get(target.cluster), result
            ):
                existing.add(target.cluster)
        for gone in plan.removed:
            work = by_cluster.get(gone.cluster)
            if work is not None and await self._try(
                result, self._delete(work), "failed to delete manifestwork"
            ):
                existing.discard(gone.cluster)
        placement_status = placement.get("status", {})
        selected = placement_status.get("numberOfSelectedClusters", 0)
        groups_count = len(placement_status.get("decisionGroups") or [])
        result.summaries.append(
            {
                "name": name,
                "availableDecisionGroups": (
                    f"{groups_count} ({len(existing)} / {selected} clusters applied)"
                ),
                "summary": _summary(len(existing)),
            }
        )
        result.selected += selected
        result.count += len(existing)
        result.succeeded += len(succeeded)

    async def _apply(
        self,
        mwrs: ManifestWorkReplicaSet,
        placement: str,
        cluster: str,
        found: ManifestWork | None,
        result: _Deployed,
    ) -> bool:
        """Create the cluster's work, or bring its labels and spec to the template."""
        meta = mwrs["metadata"]
        expected = (_set_key(mwrs), placement, cluster)
        labels = {
            **(meta.get("labels") or {}),
            REPLICA_SET_LABEL: owner_value(meta.get("namespace", ""), meta["name"]),
            PLACEMENT_NAME_LABEL: placement,
        }
        wanted: Obj = {
            "metadata": {"namespace": cluster, "labels": labels},
            "spec": copy.deepcopy(dict(mwrs["spec"].get("manifestWorkTemplate") or {})),
        }
        if found is None and self._awaited(expected):
            return True  # made a moment ago; the cache will show it
        if found is None:
            wanted["metadata"]["generateName"] = meta["name"]
        try:
            made = await applier.apply(self.api, wanted, found)
            if found is None and made is not None:
                self._created[expected] = (made["metadata"]["name"], self.clock.now())
        except ApiError as err:
            result.errors.append(f"{cluster}: {err.message}")
            return False
        return True

    def _awaited(self, expected: tuple[str, str, str]) -> bool:
        """Whether a work created for (set, placement, cluster) is still awaited in the
        cache (an entry older than EXPECTATION_TIMEOUT is dropped: that work was lost)."""
        entry = self._created.get(expected)
        if entry is None:
            return False
        if self.clock.now() - entry[1] >= EXPECTATION_TIMEOUT:
            del self._created[expected]
            return False
        return True

    def _observe_work(self, change: Change) -> None:
        """Works informer handler: a created work seen added (the cache holds it now) or
        deleted (it will never show up again) is no longer awaited."""
        if change.old is not None and change.new is not None:
            return  # an update says nothing about creation
        meta = change.obj.get("metadata") or {}
        seen = (meta.get("namespace"), meta.get("name"))
        for expected, (name, _) in list(self._created.items()):
            if (expected[2], name) == seen:
                del self._created[expected]

    def _forget_set(self, set_key: str) -> None:
        for expected in [e for e in self._created if e[0] == set_key]:
            del self._created[expected]

    async def _try(self, result: _Deployed, call: Any, what: str) -> bool:
        try:
            await call
        except ApiError as err:
            result.errors.append(f"{what}: {err.message}")
            return False
        return True

    # -- status ----------------------------------------------------------------------

    def _count(self, mwrs: ManifestWorkReplicaSet, conds: list[Obj]) -> None:
        status = mwrs["status"]
        summary: Obj = status["summary"]  # type: ignore[assignment]
        if summary["total"] == 0:
            verified = conditions.find(conds, PLACEMENT_VERIFIED)
            empty = verified is not None and verified.get("reason") == REASON_EMPTY
            reason = REASON_EMPTY if empty else REASON_NOT_AS_EXPECTED
            self._condition(conds, MANIFESTWORK_APPLIED, reason, "")
            return
        works = self._works(mwrs)
        totals = dict.fromkeys(("applied", "progressing", "available", "degraded"), 0)
        for item in status.get("placementSummary") or []:
            counts = dict.fromkeys(totals, 0)
            for work in works:
                if _label(work, PLACEMENT_NAME_LABEL) != item.get("name"):
                    continue
                if work["metadata"].get("deletionTimestamp") or not _template_matches(mwrs, work):
                    continue
                found = work.get("status", {}).get("conditions")
                for field_name, cond in (
                    ("applied", wellknown.WORK_APPLIED),
                    ("progressing", wellknown.WORK_PROGRESSING),
                    ("available", wellknown.WORK_AVAILABLE),
                    ("degraded", wellknown.WORK_DEGRADED),
                ):
                    counts[field_name] += conditions.is_true(found, cond)
            item_summary: Obj = item["summary"]  # type: ignore[assignment]
            item_summary.update(counts)
            for field_name, n in counts.items():
                totals[field_name] += n
        summary.update(totals)
        if (
            summary["available"] == summary["total"]
            and summary["progressing"] == 0
            and summary["degraded"] == 0
        ):
            reason = REASON_AS_EXPECTED
        elif summary["progressing"] > 0 and summary["degraded"] == 0:
            reason = REASON_PROCESSING
        else:
            reason = REASON_NOT_AS_EXPECTED
        self._condition(conds, MANIFESTWORK_APPLIED, reason, "")

    def _condition(self, conds: list[Obj], type: str, reason: str, message: str) -> None:
        status = "True" if _TRUE_WHEN.get(type) == reason else "False"
        conditions.set_condition(
            conds, type=type, status=status, reason=reason, message=message, now=self.clock.now()
        )

    async def _patch_status(self, mwrs: ManifestWorkReplicaSet, old: Obj) -> None:
        new: Obj = dict(mwrs.get("status") or {})
        if not new.get("conditions"):
            new.pop("conditions", None)
        if new == old:
            return
        patch = {**dict.fromkeys(old), **new}  # keys gone from the status: null in the patch
        meta = mwrs["metadata"]
        try:
            await self.api.patch(
                ocm.MANIFEST_WORK_REPLICA_SET,
                meta["name"],
                {"status": patch},
                namespace=meta.get("namespace"),
                subresource="status",
            )
        except ApiError as err:
            if err.code != 404:
                raise


def _key(obj: Obj) -> str:
    return f"{obj['metadata'].get('namespace')}/{obj['metadata']['name']}"


def _set_key(mwrs: ManifestWorkReplicaSet) -> str:
    return f"{mwrs['metadata'].get('namespace')}/{mwrs['metadata']['name']}"


def _labels(work: ManifestWork) -> dict[str, str]:
    return dict(work["metadata"].get("labels") or {})


def _label(work: ManifestWork, name: str) -> str | None:
    return _labels(work).get(name)


def _bad_owner(owner: str, problems: list[str]) -> str:
    # Upstream's words; the value is a Go %q (a namespace and a name need no escapes).
    return (
        f'ManifestWork owner reference "{owner}" (namespace.name) is not a valid label value: '
        f"{'; '.join(problems)}; recreate the ManifestWorkReplicaSet with a shorter namespace "
        "and/or name so the combined length is at most 63 characters"
    )


def add_replicaset_controller(manager: Manager) -> ReplicaSetController:
    """The ManifestWorkReplicaSet controller over the manager's shared informers."""
    sets = manager.informer(ocm.MANIFEST_WORK_REPLICA_SET)
    works = manager.informer(ocm.MANIFEST_WORK)
    placements = manager.informer(ocm.PLACEMENT)
    decisions = manager.informer(ocm.PLACEMENT_DECISION)
    made = ReplicaSetController(
        manager.api,
        sets=sets,
        works=works,
        placements=placements,
        decisions=decisions,
        clock=manager.clock,
    )
    controller = manager.controller("ManifestWorkReplicaSetController", made.reconcile)
    controller.watch(sets)
    controller.watch(works, set_key_of_work)
    controller.watch(placements, made.sets_of_placement)
    controller.watch(decisions, made.sets_of_decision)
    return made


__all__ = [
    "FINALIZER",
    "GATE",
    "PLACEMENT_NAME_LABEL",
    "REPLICA_SET_LABEL",
    "ReplicaSetController",
    "add_replicaset_controller",
    "owner_value",
    "rollout_status",
]
