"""The REST mapper over fake discovery documents: mapping, scope, verbs, subresources,
preferred versions, and re-reads on a miss (at most once per interval, shared)."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from pyocm.base.clock import FakeClock
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.runtime.restmapper import NoKindMatchError, RESTMapper

APPS_V1 = {
    "kind": "APIResourceList",
    "groupVersion": "apps/v1",
    "resources": [
        {
            "name": "deployments",
            "kind": "Deployment",
            "namespaced": True,
            "verbs": ["get", "patch"],
        },
        {"name": "deployments/status", "kind": "Deployment", "namespaced": True, "verbs": ["get"]},
        {"name": "deployments/scale", "kind": "Scale", "namespaced": True, "verbs": ["get"]},
    ],
}
CORE_V1 = {
    "kind": "APIResourceList",
    "groupVersion": "v1",
    "resources": [{"name": "namespaces", "kind": "Namespace", "namespaced": False, "verbs": []}],
}
WIDGETS_V1 = {
    "kind": "APIResourceList",
    "groupVersion": "example.com/v1",
    "resources": [{"name": "widgets", "kind": "Widget", "namespaced": True, "verbs": ["get"]}],
}
EXAMPLE_GROUP = {
    "kind": "APIGroup",
    "name": "example.com",
    "versions": [{"groupVersion": "example.com/v2", "version": "v2"}],
    "preferredVersion": {"groupVersion": "example.com/v2", "version": "v2"},
}


class FakeServer:
    """Answers discovery GETs from ``documents``; counts what was asked."""

    def __init__(self, documents: dict[str, Any]) -> None:
        self.documents = documents
        self.asked: list[str] = []

    async def request(self, method: str, target: str) -> Any:
        assert method == "GET"
        self.asked.append(target)
        await asyncio.sleep(0)  # a real answer takes a turn of the loop
        if target not in self.documents:
            raise ApiError(code=404, reason="NotFound", message="the server could not find it")
        return self.documents[target]


async def test_a_kind_maps_to_its_resource_scope_verbs_and_subresources() -> None:
    server = FakeServer({"/apis/apps/v1": APPS_V1, "/api/v1": CORE_V1})
    mapper = RESTMapper(server, clock=FakeClock())
    found = await mapper.resource_for(api_version="apps/v1", kind="Deployment")
    assert found.kind == Kind("apps", "v1", "Deployment", "deployments", True)
    assert found.verbs == {"get", "patch"}
    assert found.subresources == {"status", "scale"}
    namespace = await mapper.kind_for(api_version="v1", kind="Namespace")
    assert namespace == Kind("", "v1", "Namespace", "namespaces", False)
    await mapper.kind_for(api_version="apps/v1", kind="Deployment")
    assert server.asked == ["/apis/apps/v1", "/api/v1"], "each group-version is read once"


async def test_the_preferred_version_of_a_group() -> None:
    server = FakeServer({"/apis/example.com": EXAMPLE_GROUP, "/apis/example.com/v2": WIDGETS_V1})
    mapper = RESTMapper(server, clock=FakeClock())
    assert await mapper.preferred_version("example.com") == "v2"
    assert await mapper.preferred_version("") == "v1"
    widget = await mapper.preferred_kind(group="example.com", kind="Widget")
    assert (widget.version, widget.plural) == ("v2", "widgets")


async def test_a_kind_added_later_is_found_after_one_reread_per_interval() -> None:
    server = FakeServer({})
    clock = FakeClock()
    mapper = RESTMapper(server, clock=clock, min_refresh_interval=5.0)
    with pytest.raises(NoKindMatchError, match=re.escape('"Widget" in version "example.com/v1"')):
        await mapper.kind_for(api_version="example.com/v1", kind="Widget")
    server.documents["/apis/example.com/v1"] = WIDGETS_V1  # the CRD is created
    with pytest.raises(NoKindMatchError):
        await mapper.kind_for(api_version="example.com/v1", kind="Widget")
    assert server.asked == ["/apis/example.com/v1"], "a miss within the interval reads nothing"
    clock.advance(5.0)
    widget = await mapper.kind_for(api_version="example.com/v1", kind="Widget")
    assert widget.plural == "widgets"
    assert len(server.asked) == 2


async def test_concurrent_misses_share_one_read() -> None:
    server = FakeServer({"/apis/apps/v1": APPS_V1})
    mapper = RESTMapper(server, clock=FakeClock())
    kinds = await asyncio.gather(
        *(mapper.kind_for(api_version="apps/v1", kind="Deployment") for _ in range(5))
    )
    assert len(set(kinds)) == 1
    assert server.asked == ["/apis/apps/v1"]


async def test_invalidate_reads_again() -> None:
    server = FakeServer({"/apis/apps/v1": APPS_V1, "/apis/example.com/v1": WIDGETS_V1})
    mapper = RESTMapper(server, clock=FakeClock())
    await mapper.kind_for(api_version="apps/v1", kind="Deployment")
    await mapper.kind_for(api_version="example.com/v1", kind="Widget")
    server.documents["/apis/example.com/v1"] = {"resources": []}  # the CRD is deleted
    mapper.invalidate(group="example.com")
    with pytest.raises(NoKindMatchError):
        await mapper.kind_for(api_version="example.com/v1", kind="Widget")
    await mapper.kind_for(api_version="apps/v1", kind="Deployment")
    assert server.asked.count("/apis/apps/v1") == 1, "other groups stay cached"
    mapper.invalidate()
    await mapper.kind_for(api_version="apps/v1", kind="Deployment")
    assert server.asked.count("/apis/apps/v1") == 2


async def test_other_failures_are_not_a_missing_kind() -> None:
    class Failing(FakeServer):
        async def request(self, method: str, target: str) -> Any:
            raise ApiError(code=503, reason="ServiceUnavailable", message="aggregated API down")

    mapper = RESTMapper(Failing({}), clock=FakeClock())
    with pytest.raises(ApiError) as caught:
        await mapper.kind_for(api_version="metrics.k8s.io/v1beta1", kind="PodMetrics")
    assert caught.value.code == 503
