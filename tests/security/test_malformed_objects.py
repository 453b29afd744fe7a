"""OCM objects created without the fields upstream always stores, and malformed objects
other writers may have stored, do not break the hub (issue 17, items 6 and 8)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.kube import kinds
from pyocm.runtime.cache import Store
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.support import eventually

Obj = dict[str, Any]


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """These tests need the hub's controllers."""
    return ocm_hub


async def test_managed_cluster_without_spec_gets_upstreams_defaults(api: Api, unique: str) -> None:
    name = f"nospec-{unique}"
    created = await api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": name}})
    # Upstream's webhook re-serialises the Go struct (hubAcceptsClient has no omitempty),
    # then the schema's default for leaseDurationSeconds applies.
    assert created["spec"] == {"hubAcceptsClient": False, "leaseDurationSeconds": 60}
    stored = await api.get(ocm.MANAGED_CLUSTER, name)
    assert stored["spec"]["hubAcceptsClient"] is False

    async def tainted() -> bool:
        cluster = await api.get(ocm.MANAGED_CLUSTER, name)
        keys = [t["key"] for t in cluster["spec"].get("taints") or []]
        return keys == [wellknown.TAINT_UNREACHABLE]

    await eventually(tainted)


async def test_managed_cluster_with_null_spec_gets_defaults(api: Api, unique: str) -> None:
    name = f"nullspec-{unique}"
    created = await api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": name}, "spec": None})
    assert created["spec"]["hubAcceptsClient"] is False
    assert created["spec"]["leaseDurationSeconds"] == 60


async def test_cluster_set_without_spec_selects_by_its_label(api: Api, unique: str) -> None:
    created = await api.create(ocm.MANAGED_CLUSTER_SET, {"metadata": {"name": f"s-{unique}"}})
    assert created["spec"]["clusterSelector"]["selectorType"] == "ExclusiveClusterSetLabel"


# --- objects another writer stored (before type checks, or on a kube without schemas) ---


class _Store:
    def __init__(self, objects: dict[str, Obj]) -> None:
        self.objects = objects

    def get(self, key: str) -> Obj | None:
        return self.objects.get(key)


class _Fakes:
    """Just enough of an informer, client and recorder for one reconcile."""

    def __init__(self, objects: dict[str, Obj]) -> None:
        self.store = _Store(objects)
        self.updates: list[Obj] = []
        self.events: list[str] = []

    async def update(self, kind: Any, obj: Obj) -> Obj:
        self.updates.append(obj)
        return obj

    async def event(self, obj: Obj, **kw: Any) -> None:
        self.events.append(str(kw.get("reason")))


@pytest.mark.parametrize("spec", [None, [], "x", {"taints": "x"}, {"taints": [1, "a"]}])
async def test_taint_controller_copes_with_a_malformed_spec(spec: Any) -> None:
    from typing import cast

    from pyocm.registration.hub.taint import TaintController

    cluster: Obj = {"metadata": {"name": "c1"}}
    if spec is not None:
        cluster["spec"] = spec
    fakes = _Fakes({"c1": cluster})
    controller = TaintController(cast(Any, fakes), cast(Any, fakes), recorder=cast(Any, fakes))
    await controller.reconcile("c1")
    [updated] = fakes.updates
    assert updated["spec"]["taints"] == [
        {"key": wellknown.TAINT_UNREACHABLE, "effect": wellknown.TAINT_NO_SELECT}
    ]


@pytest.mark.parametrize(
    "spec",
    [[1], {"renewTime": 5}, {"renewTime": "yesterday"}, "x", {"leaseDurationSeconds": "x"}],
)
def test_lease_readers_cope_with_a_malformed_lease(spec: Any) -> None:
    from datetime import timedelta

    from pyocm.registration.hub import lease

    malformed: Obj = {"metadata": {"namespace": "c1", "resourceVersion": "1"}, "spec": spec}
    assert lease.renew_time(malformed) is None
    assert lease.grace(malformed) == timedelta(seconds=lease.GRACE_RATIO * 60)


# --- controllers read malformed fields as absent, report once, keep running ---

_MALFORMED_STATUS: list[Any] = [
    "x",
    [1],
    {"conditions": "x"},
    {"conditions": [1, "a", None]},
    {"conditions": {"type": "x"}},
]


class _ListStore(Store):
    """A real store of the objects (the cluster-set controllers list and index them)."""

    def __init__(self, objects: dict[str, Obj]) -> None:
        super().__init__()
        for obj in objects.values():
            self.upsert(obj)


class _Hub(_Fakes):
    """Fakes for controllers that patch status and read several stores."""

    def __init__(self, objects: dict[str, Obj]) -> None:
        super().__init__(objects)
        self.patches: list[Obj] = []
        self.warnings: list[str] = []

    def add_index(self, name: str, func: Any) -> _Hub:
        if not self.store.has_index(name):  # type: ignore[attr-defined]
            self.store.add_index(name, func)  # type: ignore[attr-defined]
        return self

    async def patch(self, kind: Any, name: str, patch: Obj, **kw: Any) -> Obj:
        self.patches.append(patch)
        return patch

    async def event(self, obj: Obj, **kw: Any) -> None:
        await super().event(obj, **kw)
        if kw.get("type") == "Warning":
            self.warnings.append(str(kw.get("note")))


def _cluster(name: str, *, status: Any = None, spec: Any = None, rv: str = "1") -> Obj:
    cluster: Obj = {"metadata": {"name": name, "resourceVersion": rv}}
    if status is not None:
        cluster["status"] = status
    if spec is not None:
        cluster["spec"] = spec
    return cluster


@pytest.mark.parametrize("status", _MALFORMED_STATUS)
async def test_taint_controller_reads_a_malformed_status_as_unknown(
    status: Any, unique: str
) -> None:
    from typing import cast

    from pyocm.registration.hub.taint import TaintController

    fakes = _Hub({unique: _cluster(unique, status=status)})
    controller = TaintController(cast(Any, fakes), cast(Any, fakes), recorder=cast(Any, fakes))
    await controller.reconcile(unique)
    [updated] = fakes.updates
    assert updated["spec"]["taints"] == [
        {"key": wellknown.TAINT_UNREACHABLE, "effect": wellknown.TAINT_NO_SELECT}
    ]
    [warning] = fakes.warnings
    assert "status" in warning


async def test_a_malformed_revision_is_reported_once_then_again_at_the_next(
    unique: str, caplog: pytest.LogCaptureFixture
) -> None:
    from typing import cast

    from pyocm.registration.hub.taint import TaintController

    fakes = _Hub({unique: _cluster(unique, status="x")})
    controller = TaintController(cast(Any, fakes), cast(Any, fakes), recorder=cast(Any, fakes))
    for _ in range(3):
        await controller.reconcile(unique)
    assert len(fakes.warnings) == 1
    assert sum("wrong type" in r.message for r in caplog.records) == 1
    fakes.store.objects[unique] = _cluster(unique, status=[2], rv="2")
    await controller.reconcile(unique)
    assert len(fakes.warnings) == 2


@pytest.mark.parametrize("status", _MALFORMED_STATUS)
async def test_lease_controller_copes_with_a_malformed_status(status: Any, unique: str) -> None:
    from typing import cast

    from pyocm.base.clock import FakeClock
    from pyocm.registration.hub.lease import LeaseController

    fakes = _Hub({unique: _cluster(unique, status=status)})
    controller = LeaseController(
        cast(Any, fakes),
        cast(Any, fakes),
        cast(Any, fakes),
        clock=FakeClock(),
        recorder=cast(Any, fakes),
    )
    # Without a readable HubAccepted condition the cluster reads as never accepted.
    assert await controller.reconcile(unique) is None


@pytest.mark.parametrize("accepts", ["false", "true", 1, [True]])
async def test_managed_cluster_controller_accepts_only_a_real_true(
    accepts: Any, unique: str
) -> None:
    from typing import cast

    from pyocm.base.clock import FakeClock
    from pyocm.registration.hub.managedcluster import ManagedClusterController

    status = {"conditions": "x"}
    fakes = _Hub({unique: _cluster(unique, spec={"hubAcceptsClient": accepts}, status=status)})
    controller = ManagedClusterController(
        cast(Any, fakes), cast(Any, fakes), clock=FakeClock(), recorder=cast(Any, fakes)
    )
    assert await controller.reconcile(unique) is None
    assert fakes.updates == fakes.patches == []  # nothing granted, nothing denied
    [warning] = fakes.warnings
    assert "spec.hubAcceptsClient" in warning


@pytest.mark.parametrize(
    "spec",
    [
        "x",
        {"clusterSelector": "x"},
        {"clusterSelector": {"selectorType": 5}},
        {"clusterSelector": {"selectorType": "LabelSelector", "labelSelector": "x"}},
        {
            "clusterSelector": {
                "selectorType": "LabelSelector",
                "labelSelector": {"matchLabels": [1]},
            }
        },
        {
            "clusterSelector": {
                "selectorType": "LabelSelector",
                "labelSelector": {"matchExpressions": [{"key": "a", "operator": 5}]},
            }
        },
        {"clusterSelector": {"selectorType": "ExclusiveLabel", "exclusiveLabel": [1]}},
    ],
)
async def test_set_status_controller_copes_with_a_malformed_selector(
    spec: Any, unique: str
) -> None:
    from typing import cast

    from pyocm.base.clock import FakeClock
    from pyocm.clustersets.controllers import SetStatusController

    sets = _Hub({unique: {"metadata": {"name": unique, "resourceVersion": "1"}, "spec": spec}})
    sets.store = cast(Any, _ListStore(sets.store.objects))
    clusters = _Hub({"c": _cluster("c", status="x")})
    clusters.store = cast(Any, _ListStore(clusters.store.objects))
    controller = SetStatusController(
        cast(Any, sets), cast(Any, sets), cast(Any, clusters), clock=FakeClock()
    )
    await controller.reconcile(unique)  # a set it cannot read gets no status, as before


def _fake_set(name: str, spec: Any) -> Obj:
    return {"metadata": {"name": name, "resourceVersion": "1"}, "spec": spec}


def _listing(objects: dict[str, Obj]) -> _Hub:
    from typing import cast

    fakes = _Hub(objects)
    fakes.store = cast(Any, _ListStore(objects))
    return fakes


@pytest.mark.parametrize("spec", ["x", [1], {"clusterSet": 5}])
async def test_binding_controller_copes_with_a_malformed_spec(spec: Any, unique: str) -> None:
    from typing import cast

    from pyocm.base.clock import FakeClock
    from pyocm.clustersets.controllers import BindingController

    key = f"ns/{unique}"
    binding = {
        "metadata": {"name": unique, "namespace": "ns", "resourceVersion": "1"},
        "spec": spec,
        "status": {"conditions": "x"},
    }
    bindings, sets = _listing({key: binding}), _listing({})
    controller = BindingController(
        cast(Any, bindings), cast(Any, bindings), cast(Any, sets), clock=FakeClock()
    )
    await controller.reconcile(key)
    [patch] = bindings.patches
    [bound] = patch["status"]["conditions"]
    assert bound["status"] == "False"


async def test_default_sets_controller_repairs_a_malformed_default_set() -> None:
    from typing import cast

    from pyocm.clustersets.controllers import DEFAULT_SETS, DefaultSetsController

    sets = _listing({"default": _fake_set("default", [1]), "global": _fake_set("global", "x")})
    controller = DefaultSetsController(cast(Any, sets), cast(Any, sets))
    await controller.reconcile("default-sets")
    assert [u["spec"] for u in sets.updates] == list(DEFAULT_SETS.values())


@pytest.mark.parametrize("namespaces", ["x", [1, {"name": 5}, {"clusterSet": "s"}], {"name": "a"}])
async def test_managed_namespaces_controller_copes_with_malformed_entries(
    namespaces: Any, unique: str
) -> None:
    from typing import cast

    from pyocm.clustersets.namespaces import (
        ManagedNamespacesController,
        may_change,
        set_may_change,
    )
    from pyocm.runtime.informer import Change

    label = {wellknown.CLUSTER_SET_LABEL: unique}
    cluster = _cluster(unique, status={"managedNamespaces": namespaces})
    cluster["metadata"]["labels"] = label
    good = _fake_set(unique, {"managedNamespaces": [{"name": "ok"}]})
    bad = _fake_set(f"{unique}-bad", {"managedNamespaces": namespaces})
    clusters, sets = _listing({unique: cluster}), _listing({unique: good, "bad": bad})
    controller = ManagedNamespacesController(
        cast(Any, clusters), cast(Any, clusters), cast(Any, sets), recorder=cast(Any, clusters)
    )
    await controller.reconcile(unique)
    [patch] = clusters.patches
    assert patch["status"]["managedNamespaces"] == [{"name": "ok", "clusterSet": unique}]
    assert controller.clusters_of_set(bad) == []  # neither selected nor listed
    assert may_change(Change(old=cluster, new=_cluster(unique)))
    assert set_may_change(Change(old=bad, new=good))


async def test_gc_controller_copes_with_a_malformed_status(unique: str) -> None:
    from typing import cast

    from pyocm.base.clock import FakeClock
    from pyocm.registration.hub.gc import GcController

    cluster = _cluster(unique, status={"conditions": "x"})
    cluster["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    cluster["metadata"]["finalizers"] = [wellknown.RESOURCE_CLEANUP_FINALIZER]
    fakes = _Hub({unique: cluster})
    controller = GcController(
        cast(Any, fakes),
        cast(Any, fakes),
        clock=FakeClock(),
        recorder=cast(Any, fakes),
        resources=(),
    )
    await controller.reconcile(unique)
    [deleting, *_] = fakes.patches
    [condition] = deleting["status"]["conditions"]  # the list is written well formed
    assert condition["type"] == wellknown.CLUSTER_DELETING


def test_well_typed_objects_are_read_as_they_are() -> None:
    from pyocm.api import cluster_v1, shapes

    cluster = {
        "metadata": {"name": "c", "labels": {"a": "b"}},
        "spec": {"hubAcceptsClient": True, "taints": [{"key": "k", "effect": "NoSelect"}]},
        "status": {"conditions": [], "capacity": {"cpu": 4, "memory": "1Gi"}},
    }
    typed = shapes.well_typed(cluster, cluster_v1.MANAGED_CLUSTER.schema)
    assert typed.value is cluster
    assert typed.problems == []


def test_ill_typed_values_are_left_out_and_named() -> None:
    from pyocm.api import cluster_v1, shapes

    cluster = {
        "metadata": {"name": "c", "labels": {"a": 1, "b": "c"}},
        "spec": {"hubAcceptsClient": "true", "leaseDurationSeconds": True},
        "status": {"conditions": [1, {"type": "x"}], "version": "v1"},
    }
    typed = shapes.well_typed(cluster, cluster_v1.MANAGED_CLUSTER.schema)
    assert typed.value == {
        "metadata": {"name": "c", "labels": {"b": "c"}},
        "spec": {},
        "status": {"conditions": []},
    }
    assert typed.problems == [
        ".metadata.labels.a: expected string, got integer",
        ".spec.hubAcceptsClient: expected boolean, got string",
        ".spec.leaseDurationSeconds: expected integer, got boolean",
        ".status.conditions[0]: expected object, got integer",
        ".status.conditions[1]: missing required lastTransitionTime, message, reason, status",
        ".status.version: expected object, got string",
    ]
    assert cluster["spec"]["hubAcceptsClient"] == "true"  # the stored object is untouched


# --- the agent reads its hub objects, and the managed cluster's claims, the same way ---


@pytest.mark.parametrize("status", _MALFORMED_STATUS)
async def test_agent_status_of_a_malformed_cluster_is_not_reported(status: Any) -> None:
    from typing import cast

    from pyocm.base.clock import FakeClock
    from pyocm.registration.agent.status import ClaimOptions, StatusReporter
    from tests.unit.registration.test_agent_status import LABEL, MemorySide

    reporter = StatusReporter(
        cast(Any, MemorySide()), clock=FakeClock(), claims=ClaimOptions(), namespace_label=LABEL
    )
    # No readable HubAccepted: as for a cluster not accepted yet, nothing to report.
    assert await reporter.desired(_cluster("c", status=status)) is None


async def test_agent_status_replaces_malformed_fields_it_reports() -> None:
    from typing import cast

    from pyocm.api import conditions
    from pyocm.base.clock import FakeClock
    from pyocm.registration.agent.status import ClaimOptions, StatusReporter
    from tests.unit.registration.test_agent_status import LABEL, MemorySide, accepted_cluster

    side = MemorySide()
    side.claim_list = [
        {"metadata": {"name": "a"}, "spec": [1]},
        {"metadata": {"name": "b"}, "spec": {"value": 5}},
        {"metadata": {"name": "c", "labels": "x"}, "spec": {"value": "ok"}},
        "junk",
    ]
    side.node_list.append({"status": {"capacity": "x", "allocatable": {"cpu": "lots"}}})
    cluster = accepted_cluster()
    cluster["status"].update(capacity="x", managedNamespaces=[1], clusterClaims="x")
    reporter = StatusReporter(
        cast(Any, side), clock=FakeClock(), claims=ClaimOptions(), namespace_label=LABEL
    )
    status = await reporter.desired(cluster)
    assert status is not None
    assert conditions.is_true(status["conditions"], wellknown.CLUSTER_AVAILABLE)
    assert status["capacity"] == {"cpu": "6", "memory": "12Gi"}
    assert status["allocatable"] == {"cpu": "3900m", "memory": "7Gi"}
    assert status["clusterClaims"] == [{"name": "c", "value": "ok"}]
    assert status["managedNamespaces"] == []


@pytest.mark.parametrize(
    "spec",
    [None, [1], "x", {"holderIdentity": 5, "leaseDurationSeconds": "x", "renewTime": 3}],
)
def test_agent_renews_a_malformed_lease_as_a_well_formed_one(spec: Any, unique: str) -> None:
    from datetime import UTC, datetime

    from pyocm.registration.agent.running import renewed_lease

    lease: Obj = {"metadata": {"name": "managed-cluster-lease", "namespace": unique}}
    if spec is not None:
        lease["spec"] = spec
    now = datetime(2026, 1, 2, 3, 4, 5, 6000, tzinfo=UTC)
    renewed = renewed_lease(lease, now=now)
    assert renewed["spec"] == {"renewTime": "2026-01-02T03:04:05.006000Z"}
    assert renewed["metadata"] == lease["metadata"]


def test_agent_renewal_keeps_a_well_formed_lease_as_it_is(unique: str) -> None:
    from datetime import UTC, datetime

    from pyocm.registration.agent.running import renewed_lease

    spec = {"holderIdentity": "managed-cluster-lease", "leaseDurationSeconds": 60}
    lease: Obj = {"metadata": {"name": "managed-cluster-lease", "namespace": unique}, "spec": spec}
    renewed = renewed_lease(lease, now=datetime(2026, 1, 1, tzinfo=UTC))
    assert renewed["spec"] == {**spec, "renewTime": "2026-01-01T00:00:00.000000Z"}


@pytest.mark.parametrize("seconds", [None, "x", True, -5, 0, 30])
def test_agent_lease_period_of_a_malformed_duration_is_the_default(seconds: Any) -> None:
    from pyocm.registration.agent.running import lease_seconds

    spec = {} if seconds is None else {"leaseDurationSeconds": seconds}
    assert lease_seconds(_cluster("c", spec=spec)) == (30 if seconds == 30 else 60)
    assert lease_seconds(_cluster("c", spec="x")) == 60
    assert lease_seconds(None) == 60


# --- end to end: a hub restarted over a database holding the agent's objects malformed ---


def _corrupt(db: Path, suffix: str, change: Any) -> None:
    """Rewrite the stored object whose key ends with ``suffix``, at a new revision (so
    watchers see it), as another writer that went around the API could have."""
    conn = sqlite3.connect(db)
    try:
        [(key, value)] = conn.execute(
            "SELECT key, value FROM kv WHERE key LIKE ?", (f"%{suffix}",)
        ).fetchall()
        obj = json.loads(value)
        change(obj)
        [(revision,)] = conn.execute("SELECT value FROM meta WHERE name = 'revision'")
        conn.execute(
            "UPDATE kv SET value = ?, mod_revision = ? WHERE key = ?",
            (json.dumps(obj).encode(), revision + 1, key),
        )
        conn.commit()
    finally:
        conn.close()


async def test_an_agent_keeps_running_over_its_malformed_lease_and_cluster(
    tmp_path: Path, unique: str, caplog: pytest.LogCaptureFixture
) -> None:
    from pyocm.api import conditions
    from pyocm.kube import timefmt
    from pyocm.runtime.errors import ApiConnectionError
    from tests.agents import available, embedded, running_agent

    name = f"bad-{unique}"
    own = HubProcess(tmp_path / "hub")
    own.start()
    managed = await embedded(tmp_path, "m")
    try:
        async with (
            Api.from_kubeconfig(own.kubeconfig) as api,
            running_agent(api, own, managed, name) as agent,
        ):
            # Renewals every second, so the agent reads its lease within the test.
            await api.patch(ocm.MANAGED_CLUSTER, name, {"spec": {"leaseDurationSeconds": 1}})
            own.stop()
            db = own.data_dir / "state.db"
            _corrupt(db, f"/leases/{name}/managed-cluster-lease", _malformed_lease)
            _corrupt(db, f"/managedclusters/{name}", _malformed_status)
            own.start()

            async def repaired() -> Obj | None:
                try:
                    lease = await api.get(kinds.LEASE, "managed-cluster-lease", namespace=name)
                    cluster = await available(api, name)
                except ApiConnectionError:
                    return None
                spec = lease["spec"]
                if not isinstance(spec, dict) or not isinstance(spec.get("renewTime"), str):
                    return None
                timefmt.parse_time(spec["renewTime"])
                return cluster

            cluster = await eventually(repaired)
            assert not agent.done()
            assert isinstance(cluster["status"]["capacity"], dict)
            assert conditions.is_true(cluster["status"]["conditions"], wellknown.CLUSTER_JOINED)
    finally:
        await managed.stop()
        own.stop()
    reported = [r.message for r in caplog.records if "has fields of the wrong type" in r.message]
    assert any(m.startswith(f"Lease {name}/managed-cluster-lease") for m in reported)


def _malformed_lease(lease: Obj) -> None:
    lease["spec"] = {"holderIdentity": 5, "leaseDurationSeconds": "x", "renewTime": [1]}


def _malformed_status(cluster: Obj) -> None:
    cluster["status"]["capacity"] = "x"
    cluster["status"]["conditions"].append(7)


@pytest.mark.parametrize("status", ["x", {"clusterClaims": "x"}, {"clusterClaims": [1, None]}])
def test_joining_agent_reads_a_malformed_clusters_claims_as_none(status: Any) -> None:
    from pyocm.registration.agent.agent import ID_CLAIM, _claim

    assert _claim(_cluster("c", status=status), ID_CLAIM) is None
