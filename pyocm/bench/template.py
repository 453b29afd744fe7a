"""The ``template`` scenario of ``pyocm bench fleet``: seed 003's template add-on on
every simulated cluster, then its upgrade group by group (issue 22's figures).

The hub runs with its default settings: a template add-on starts with its
ClusterManagementAddOn. After the fleet's window without add-ons:

1. The AddOnTemplate ``hello-template`` (:mod:`pyocm.bench.templateobjects`: the seed's
   agent Deployment, KubeClient registration with two hub permissions, and a
   CustomSigner registration signed with a CA Secret), its roles, CA Secret and
   AddOnDeploymentConfig, and a placement of every cluster in decision groups are
   created; then the CMA, naming the template as its default config and installing the
   add-on on the placement's clusters (rollout All). The hub renders the template per
   cluster and deploys it by ManifestWork; each simulated cluster's real work agent
   applies it in the cluster's memory, where the Deployment's status is **simulated**
   (ready and available, as on ``pyocm up``'s embedded clusters) and reported back as
   WellKnownStatus feedback, which is the add-on's health (WorkloadAvailability). The
   cluster's real registration agent asks for both certificates by CSR and writes their
   Secrets. Timed from the CMA's creation to the last MCA seen Available by the hub.
2. The template ``hello-template-v2`` (the Deployment labelled
   ``addon-template-version: v2``) is created and the install strategy points the
   placement at it with a ProgressivePerGroup rollout. For each decision group: when
   the first of its MCAs was given v2, when the last had v2 applied
   (``lastAppliedConfig``), and the hub's CPU between the two.

No add-on agent runs: the Deployment is applied and given a simulated status, and
nothing renews an add-on Lease (a template add-on's health is its workloads').
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pyocm.addon.agent import ADDON_TEMPLATE
from pyocm.addon.hub.hashes import config_kind
from pyocm.addon.registration.namespace import ADDON_DEPLOYMENT_CONFIG
from pyocm.api import conditions, wellknown
from pyocm.api import kinds as ocm
from pyocm.bench import templateobjects as objects
from pyocm.bench.simulation import Simulation
from pyocm.bench.stats import latencies
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Change, Informer

#: Issue 22's goal for the add-on to be Available everywhere.
GOAL_SECONDS = 120.0
#: Decision groups of a quarter of the fleet each.
PER_GROUP = "25%"
Add = Callable[[str, str], None]


@dataclass
class TemplateWatch:
    """What the hub's MCAs of the add-on say, by cluster: when each was first Available
    (seconds after ``since``), when each was first given v2 and had it applied
    (monotonic), and how often one stopped being Available."""

    informer: Informer
    since: float = 0.0
    available: dict[str, float] = field(default_factory=dict)
    now_available: set[str] = field(default_factory=set)
    lost: int = 0
    desired_v2: dict[str, float] = field(default_factory=dict)
    applied_v2: dict[str, float] = field(default_factory=dict)

    @classmethod
    def on(cls, api: Api) -> TemplateWatch:
        watch = cls(Informer(api, ocm.MANAGED_CLUSTER_ADDON))
        watch.informer.add_handler(watch._changed)
        return watch

    def _changed(self, change: Change) -> None:
        meta = change.obj["metadata"]
        if meta["name"] != objects.ADDON or change.new is None:
            return
        cluster, status = meta["namespace"], change.new.get("status") or {}
        found = conditions.find(status.get("conditions"), wellknown.ADDON_AVAILABLE)
        if found is not None and found.get("status") == "True":
            self.available.setdefault(cluster, time.monotonic() - self.since)
            self.now_available.add(cluster)
        elif cluster in self.now_available:
            self.now_available.discard(cluster)
            self.lost += 1
        for ref in status.get("configReferences") or []:
            if ref.get("resource") != objects.TEMPLATES_GR["resource"]:
                continue
            if (ref.get("desiredConfig") or {}).get("name") == objects.V2:
                self.desired_v2.setdefault(cluster, time.monotonic())
            if (ref.get("lastAppliedConfig") or {}).get("name") == objects.V2:
                self.applied_v2.setdefault(cluster, time.monotonic())


@dataclass(frozen=True)
class Mark:
    """A moment of a group: when the hub's MCA said so (``at``), and when the bench
    noticed it (``polled``, at most 0.5 s later) with the hub's CPU seconds then."""

    at: float
    polled: float
    cpu: float


@dataclass
class Group:
    """One decision group's clusters, and its marks: the first of its clusters given
    v2, and the last to have v2 applied."""

    index: int
    clusters: list[str]
    started: Mark | None = None
    done: Mark | None = None


async def prepare(admin: Api) -> None:
    """Everything but the CMA: namespaces, roles, CA Secret, deployment config, the
    ``global`` set's binding, the placement, and both templates' first version."""
    for namespace in (objects.NAMESPACE, objects.PERMISSION_NAMESPACE, objects.CA_NAMESPACE):
        try:
            await admin.create(kinds.NAMESPACE, {"metadata": {"name": namespace}})
        except ApiError as err:
            if err.code != 409:  # the hub makes open-cluster-management* itself
                raise
    reader, admin_role = objects.roles()
    await admin.create(kinds.ROLE, reader)
    await admin.create(kinds.CLUSTER_ROLE, admin_role)
    await admin.create(kinds.SECRET, objects.ca_secret())
    role, binding = objects.ca_access()
    await admin.create(kinds.ROLE, role)
    await admin.create(kinds.ROLE_BINDING, binding)
    await admin.create(ADDON_DEPLOYMENT_CONFIG, objects.deployment_config())
    global_set = wellknown.GLOBAL_CLUSTER_SET
    binding = {
        "metadata": {"name": global_set, "namespace": objects.NAMESPACE},
        "spec": {"clusterSet": global_set},
    }
    await admin.create(ocm.MANAGED_CLUSTER_SET_BINDING, binding)
    await admin.create(ocm.PLACEMENT, objects.placement(per_group=PER_GROUP))
    template = objects.template(objects.ADDON, version=None)
    await admin.create(config_kind(ADDON_TEMPLATE), template)


async def measure(
    admin: Api,
    fleet: Simulation,
    *,
    clusters: int,
    cpu_seconds: Callable[[], float],
    rss_mib: Callable[[], float],
    add: Add,
) -> None:
    """Steps 1 and 2 of the module's docstring; each figure through ``add``."""
    add("template registrations", "KubeClient (2 hub permissions), CustomSigner")
    watch = TemplateWatch.on(admin)
    watching = asyncio.create_task(watch.informer.run())
    try:
        await watch.informer.wait_synced()
        await prepare(admin)
        if not await _enable(
            admin, fleet, watch, clusters=clusters, cpu_seconds=cpu_seconds, add=add
        ):
            add("upgrade", "not measured: the add-on was not Available everywhere")
            return
        add("hub RSS with the add-on", f"{rss_mib():.0f} MiB")
        await asyncio.sleep(5.0)  # let the last status writes settle
        await _upgrade(
            admin,
            fleet,
            watch,
            clusters=clusters,
            cpu_seconds=cpu_seconds,
            add=add,
        )
    finally:
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)


async def _enable(
    admin: Api,
    fleet: Simulation,
    watch: TemplateWatch,
    *,
    clusters: int,
    cpu_seconds: Callable[[], float],
    add: Add,
) -> bool:
    """Create the CMA; True once every cluster's MCA is Available."""
    cpu0, watch.since = cpu_seconds(), time.monotonic()
    await admin.create(ocm.CLUSTER_MANAGEMENT_ADDON, objects.cma())
    timeout = max(300.0, clusters / 3)
    deadline = watch.since + timeout
    while len(watch.available) < clusters and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
    took = time.monotonic() - watch.since
    done = len(watch.available) >= clusters
    verdict = "met" if done and took <= GOAL_SECONDS else "MISSED"
    add(
        "Available on all after" if done else "NOT Available on all after",
        f"{took:.1f} s ({len(watch.available)} of {clusters};"
        f" goal {GOAL_SECONDS:.0f} s: {verdict})",
    )
    add("hub CPU while enabling", f"{(cpu_seconds() - cpu0) / took:.2f} cores")
    add("enable to Available, per cluster", latencies(watch.available.values()))
    add("certificates signed", await _certificates(admin))
    add("hub permission RoleBindings", await _bindings(admin))
    seen = await fleet.snapshot()
    deployed = seen.deployment_labels.get(f"{objects.AGENT} app={objects.AGENT}", 0)
    add("agent Deployments on the clusters", f"{deployed} (status simulated, nothing runs)")
    return done


async def _certificates(admin: Api) -> str:
    """The add-on's signed CSRs by signer, and the clusters they were for."""
    listed = await admin.list_all(kinds.CSR, labels=f"{wellknown.ADDON_NAME_LABEL}={objects.ADDON}")
    by_signer: dict[str, set[str]] = {}
    for csr in listed.get("items") or []:
        if not (csr.get("status") or {}).get("certificate"):
            continue
        cluster = csr["metadata"]["labels"].get(wellknown.CLUSTER_NAME_LABEL, "")
        by_signer.setdefault(csr["spec"]["signerName"], set()).add(cluster)
    if not by_signer:
        return "none"
    return ", ".join(
        f"{signer}: {len(found)} clusters" for signer, found in sorted(by_signer.items())
    )


async def _bindings(admin: Api) -> str:
    """The add-on's RoleBindings: CurrentCluster's, one in each cluster namespace, and
    SingleNamespace's, one name in its namespace that every cluster's pass rewrites with
    its own subjects (upstream's ``open-cluster-management:<addon>:<kind>:agent``)."""
    listed = await admin.list_all(
        kinds.ROLE_BINDING, labels=f"{wellknown.ADDON_NAME_LABEL}={objects.ADDON}"
    )
    namespaces = [b["metadata"]["namespace"] for b in listed.get("items") or []]
    single = namespaces.count(objects.PERMISSION_NAMESPACE)
    return (
        f"{len(namespaces) - single} CurrentCluster (cluster namespaces),"
        f" {single} SingleNamespace in {objects.PERMISSION_NAMESPACE} (one name, as upstream)"
    )


async def decision_groups(admin: Api) -> list[Group]:
    """The placement's decision groups, from its PlacementDecisions' labels."""
    listed = await admin.list_all(
        ocm.PLACEMENT_DECISION,
        namespace=objects.NAMESPACE,
        labels=f"{wellknown.PLACEMENT_LABEL}={objects.PLACEMENT}",
    )
    groups: dict[int, list[str]] = {}
    for decision in listed.get("items") or []:
        index = int(decision["metadata"]["labels"][wellknown.DECISION_GROUP_INDEX_LABEL])
        names = [d["clusterName"] for d in (decision.get("status") or {}).get("decisions") or []]
        groups.setdefault(index, []).extend(names)
    return [Group(index, sorted(names)) for index, names in sorted(groups.items())]


async def _upgrade(
    admin: Api,
    fleet: Simulation,
    watch: TemplateWatch,
    *,
    clusters: int,
    cpu_seconds: Callable[[], float],
    add: Add,
) -> None:
    """The v2 template rolled out group by group; per group, its time and hub CPU."""
    groups = await decision_groups(admin)
    sizes = "/".join(str(len(g.clusters)) for g in groups)
    add(
        "decision groups", f"{len(groups)} ({sizes} clusters; clustersPerDecisionGroup {PER_GROUP})"
    )
    # The same registrations as the first version: only the Deployment changes.
    v2 = objects.template(objects.V2, version="v2")
    await admin.create(config_kind(ADDON_TEMPLATE), v2)
    lost_before = watch.lost
    rollout = {"type": "ProgressivePerGroup"}
    strategy = objects.install_strategy(rollout=rollout, template=objects.V2)
    cpu0, t0 = cpu_seconds(), time.monotonic()
    await admin.patch(
        ocm.CLUSTER_MANAGEMENT_ADDON, objects.ADDON, {"spec": {"installStrategy": strategy}}
    )
    deadline = t0 + max(600.0, clusters / 2)
    while any(g.done is None for g in groups) and time.monotonic() < deadline:
        _mark(groups, watch, cpu=cpu_seconds())
        await asyncio.sleep(0.5)
    took, cores = time.monotonic() - t0, (cpu_seconds() - cpu0) / (time.monotonic() - t0)
    for group in groups:
        add(f"group {group.index} ({len(group.clusters)} clusters)", _group_figures(group, t0))
    applied = len(watch.applied_v2)
    finished = all(g.done is not None for g in groups)
    add(
        "v2 applied on all after" if finished else "v2 NOT applied on all after",
        f"{took:.1f} s ({applied} of {clusters}), hub CPU {cores:.2f} cores",
    )
    add("Available lost during the rollout", str(watch.lost - lost_before))
    add("CMA install progression", await _progression(admin))
    seen = await fleet.snapshot()
    upgraded = seen.deployment_labels.get(f"{objects.AGENT} {objects.VERSION_LABEL}=v2", 0)
    add("agent Deployments at v2", f"{upgraded} of {clusters} clusters")


def _mark(groups: list[Group], watch: TemplateWatch, *, cpu: float) -> None:
    """Mark the groups started or done since the last look."""
    now = time.monotonic()
    for group in groups:
        desired = [watch.desired_v2[c] for c in group.clusters if c in watch.desired_v2]
        if group.started is None and desired:
            group.started = Mark(min(desired), now, cpu)
        applied = [watch.applied_v2[c] for c in group.clusters if c in watch.applied_v2]
        if group.done is None and len(applied) == len(group.clusters):
            group.done = Mark(max(applied), now, cpu)


def _group_figures(group: Group, t0: float) -> str:
    """The group's time (from the hub's MCAs) and the hub's CPU over the polls that
    saw it start and end ("-" when one poll saw both)."""
    start, end = group.started, group.done
    if start is None:
        return "never given v2"
    if end is None:
        return f"given v2 at +{start.at - t0:.1f} s, NOT all applied"
    polled = end.polled - start.polled
    cores = f"{(end.cpu - start.cpu) / polled:.2f} cores" if polled > 0 else "-"
    return (
        f"{end.at - start.at:.1f} s (v2 desired at +{start.at - t0:.1f} s,"
        f" all applied at +{end.at - t0:.1f} s), hub CPU {cores}"
    )


async def _progression(admin: Api) -> str:
    """The CMA's installProgressions Progressing condition, as the hub wrote it."""
    try:
        cma = await admin.get(ocm.CLUSTER_MANAGEMENT_ADDON, objects.ADDON)
    except ApiError as err:
        return f"unreadable: {err}"
    for progression in (cma.get("status") or {}).get("installProgressions") or []:
        found = conditions.find(progression.get("conditions"), "Progressing")
        if found is not None:
            return f"{found.get('reason')}: {found.get('message')}"
    return "none"
