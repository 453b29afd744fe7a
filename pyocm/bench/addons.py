"""The ``addons`` scenario of ``pyocm bench fleet``: add-ons on every simulated cluster.

The hub runs ``--addons helloworld,helloworld-b,helloworld-c``: pyocm's helloworld
add-on and two test copies of it under other names (:mod:`pyocm.addon.builtin`), each
with its own ClusterManagementAddOn, registration, hub permissions and deploy work. The
fleet's window without add-ons is measured first (the CMAs exist, Manual, no add-on
enabled). Then:

1. ``helloworld`` is enabled on every cluster by a Placements install strategy (a
   placement selecting every cluster of the bound ``global`` set, rollout All): the hub
   makes an MCA per cluster, its registration, RoleBinding and deploy ManifestWork; each
   simulated cluster's agent asks for the add-on's certificate by CSR, the hub approves
   and signs it, the agent writes the Secret into the cluster's memory, a simulated
   add-on agent renews the add-on's Lease there, and the agent reports Available from
   it. Timed from the CMA's update to the last MCA seen Available by the hub.
2. ``helloworld-b`` and ``helloworld-c`` likewise, until all 3 x N are Available.
3. The same window again, with the three add-ons: the hub's CPU against the first.

The add-on agents are simulated (a Lease renewal a minute each, in the cluster's memory):
they never connect to the hub, so the figures are the cost of managing, registering and
watching over add-ons, not of what their agents would do there.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pyocm.api import conditions, wellknown
from pyocm.api import kinds as ocm
from pyocm.bench.simulation import Simulation
from pyocm.bench.stats import latencies
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.registration.hub.csrapproval import APPROVE_REASON
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Change, Informer

#: pyocm's add-on and two test copies of it (the hub runs all three).
ADDONS = ("helloworld", "helloworld-b", "helloworld-c")
HUB_ARGS = ["--addons", ",".join(ADDONS)]
NAMESPACE = "pyocm-bench-addons"
PLACEMENT = "all-clusters"
#: Issue 21's goals.
GOAL_SECONDS = 90.0
GOAL_CORES = 0.1

Add = Callable[[str, str], None]


@dataclass
class AvailableWatch:
    """When the hub saw each MCA's Available condition turn True, by add-on."""

    informer: Informer
    since: float = 0.0
    seen: dict[str, dict[str, float]] = field(default_factory=dict)

    @classmethod
    def on(cls, api: Api) -> AvailableWatch:
        watch = cls(Informer(api, ocm.MANAGED_CLUSTER_ADDON))
        watch.informer.add_handler(watch._changed)
        return watch

    def _changed(self, change: Change) -> None:
        meta = change.obj["metadata"]
        found = conditions.find(
            (change.new or {}).get("status", {}).get("conditions"), wellknown.ADDON_AVAILABLE
        )
        if found is not None and found.get("status") == "True":
            clusters = self.seen.setdefault(meta["name"], {})
            clusters.setdefault(meta["namespace"], time.monotonic() - self.since)

    def count(self, addon: str) -> int:
        return len(self.seen.get(addon, {}))


async def prepare(admin: Api) -> None:
    """The namespace, the binding of the ``global`` set and a placement of every cluster."""
    await admin.create(kinds.NAMESPACE, {"metadata": {"name": NAMESPACE}})
    global_set = wellknown.GLOBAL_CLUSTER_SET
    await admin.create(
        ocm.MANAGED_CLUSTER_SET_BINDING,
        {
            "metadata": {"name": global_set, "namespace": NAMESPACE},
            "spec": {"clusterSet": global_set},
        },
    )
    # No predicates and no numberOfClusters: every cluster of the bound sets.
    await admin.create(
        ocm.PLACEMENT, {"metadata": {"name": PLACEMENT, "namespace": NAMESPACE}, "spec": {}}
    )


async def enable(admin: Api, addon: str) -> None:
    """Install ``addon`` on every cluster the placement selects, all at once."""
    strategy = {
        "type": "Placements",
        "placements": [
            {"name": PLACEMENT, "namespace": NAMESPACE, "rolloutStrategy": {"type": "All"}}
        ],
    }
    await admin.patch(ocm.CLUSTER_MANAGEMENT_ADDON, addon, {"spec": {"installStrategy": strategy}})


async def until_available(
    watch: AvailableWatch, addons: tuple[str, ...], clusters: int, *, timeout: float
) -> bool:
    deadline = time.monotonic() + timeout
    while any(watch.count(addon) < clusters for addon in addons):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.5)
    return True


async def certificates(admin: Api, addon: str) -> tuple[int, int]:
    """The add-on's CSRs approved by the hub, and the clusters they were for."""
    listed = await admin.list_all(kinds.CSR, labels=f"{wellknown.ADDON_NAME_LABEL}={addon}")
    approved = [
        csr
        for csr in listed.get("items") or []
        if any(
            c.get("reason") == APPROVE_REASON
            for c in (csr.get("status") or {}).get("conditions") or []
        )
        and (csr.get("status") or {}).get("certificate")
    ]
    clusters = {csr["metadata"]["labels"].get(wellknown.CLUSTER_NAME_LABEL) for csr in approved}
    return len(approved), len(clusters)


async def wait_for_hub(admin: Api, *, timeout: float = 60.0) -> None:
    """Until the hub has made every add-on's ClusterManagementAddOn (it does at start)."""
    deadline = time.monotonic() + timeout
    for addon in ADDONS:
        while True:
            try:
                await admin.get(ocm.CLUSTER_MANAGEMENT_ADDON, addon)
                break
            except ApiError as err:
                if err.code != 404 or time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.5)


async def measure(
    admin: Api,
    fleet: Simulation,
    *,
    clusters: int,
    duration: float,
    cpu_seconds: Callable[[], float],
    rss_mib: Callable[[], float],
    baseline: float,
    add: Add,
) -> None:
    """Steps 1 to 3 of the module's docstring, after the window without add-ons (whose
    hub CPU was ``baseline`` cores); each figure through ``add``."""
    await wait_for_hub(admin)
    watch = AvailableWatch.on(admin)
    watching = asyncio.create_task(watch.informer.run())
    try:
        await watch.informer.wait_synced()
        await prepare(admin)
        if not await _enable_all(admin, fleet, watch, clusters=clusters, add=add):
            add("window with add-ons", "not measured: the add-ons were not all Available")
            return
        await asyncio.sleep(10.0)  # let the last status writes settle
        cpu0, t0 = cpu_seconds(), time.monotonic()
        await asyncio.sleep(duration)
        window = time.monotonic() - t0
        cores = (cpu_seconds() - cpu0) / window
        more = cores - baseline
        verdict = "met" if more <= GOAL_CORES else "MISSED"
        add(
            "hub CPU in the window, 3 add-ons",
            f"{cores:.2f} cores ({more:+.2f} against the window without;"
            f" goal +{GOAL_CORES}: {verdict})",
        )
        add("hub RSS with 3 add-ons", f"{rss_mib():.0f} MiB")
        seen = await fleet.snapshot()
        add(
            "simulated add-on agents",
            f"{seen.addon_agents} ({seen.addon_leases} with a Lease): Lease renewals only,"
            " never connected to the hub",
        )
    finally:
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)


async def _enable_all(
    admin: Api, fleet: Simulation, watch: AvailableWatch, *, clusters: int, add: Add
) -> bool:
    """Enable helloworld, then the two copies; True once all are Available everywhere."""
    first, *others = ADDONS
    timeout = max(300.0, clusters / 3)
    watch.since = time.monotonic()
    await enable(admin, first)
    done = await until_available(watch, (first,), clusters, timeout=timeout)
    took = time.monotonic() - watch.since
    verdict = "met" if done and took <= GOAL_SECONDS else "MISSED"
    add(
        f"{first} Available on all after" if done else f"{first} NOT all Available after",
        f"{took:.1f} s ({watch.count(first)} of {clusters}; goal {GOAL_SECONDS:.0f} s: {verdict})",
    )
    add("enable to Available, per cluster", latencies(watch.seen.get(first, {}).values()))
    approved, for_clusters = await certificates(admin, first)
    seen = await fleet.snapshot()
    add(
        f"{first} certificates and Leases",
        f"{approved} CSRs approved and signed for {for_clusters} clusters;"
        f" {seen.addon_leases} Leases renewed by simulated agents",
    )
    t1 = time.monotonic()
    for addon in others:
        await enable(admin, addon)
    done = await until_available(watch, ADDONS, clusters, timeout=timeout) and done
    total = sum(watch.count(addon) for addon in ADDONS)
    add(
        "3 add-ons Available on all after" if done else "3 add-ons NOT all Available after",
        f"{time.monotonic() - t1:.1f} s more ({total} of {len(ADDONS) * clusters} MCAs)",
    )
    return done
