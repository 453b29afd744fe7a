"""OCM objects created without the fields upstream always stores, and malformed objects
other writers may have stored, do not break the hub (issue 17, items 6 and 8)."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.api import wellknown
from pyocm.runtime import kinds
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
    created = await api.create(kinds.MANAGED_CLUSTER, {"metadata": {"name": name}})
    # Upstream's webhook re-serialises the Go struct (hubAcceptsClient has no omitempty),
    # then the schema's default for leaseDurationSeconds applies.
    assert created["spec"] == {"hubAcceptsClient": False, "leaseDurationSeconds": 60}
    stored = await api.get(kinds.MANAGED_CLUSTER, name)
    assert stored["spec"]["hubAcceptsClient"] is False

    async def tainted() -> bool:
        cluster = await api.get(kinds.MANAGED_CLUSTER, name)
        keys = [t["key"] for t in cluster["spec"].get("taints") or []]
        return keys == [wellknown.TAINT_UNREACHABLE]

    await eventually(tainted)


async def test_managed_cluster_with_null_spec_gets_defaults(api: Api, unique: str) -> None:
    name = f"nullspec-{unique}"
    created = await api.create(kinds.MANAGED_CLUSTER, {"metadata": {"name": name}, "spec": None})
    assert created["spec"]["hubAcceptsClient"] is False
    assert created["spec"]["leaseDurationSeconds"] == 60


async def test_cluster_set_without_spec_selects_by_its_label(api: Api, unique: str) -> None:
    created = await api.create(kinds.MANAGED_CLUSTER_SET, {"metadata": {"name": f"s-{unique}"}})
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
