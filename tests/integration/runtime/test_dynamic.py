"""Discovery and the dynamic client against a real hub: built-in and OCM kinds map as
the static constants say, and a CRD created while the mapper runs is found and used
(get, list, apply, status, delete) without a restart."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.api import kinds as ocm
from pyocm.base.clock import FakeClock
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.restmapper import NoKindMatchError, RESTMapper

Obj = dict[str, Any]


def gadget_crd(group: str, *, scope: str) -> Obj:
    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


@pytest.mark.parametrize(
    "static",
    [kinds.NAMESPACE, kinds.CONFIGMAP, kinds.LEASE, kinds.CSR, ocm.MANAGED_CLUSTER],
    ids=str,
)
async def test_discovery_agrees_with_the_static_kinds(api: Api, static: kinds.Kind) -> None:
    mapper = RESTMapper(api)
    assert await mapper.kind_for(api_version=static.api_version, kind=static.kind) == static


async def test_verbs_subresources_and_preferred_versions(api: Api) -> None:
    mapper = RESTMapper(api)
    csr = await mapper.resource_for(api_version="certificates.k8s.io/v1", kind=kinds.CSR.kind)
    assert {"approval", "status"} <= csr.subresources
    assert {"create", "get", "list", "watch", "delete"} <= csr.verbs
    assert await mapper.preferred_version("certificates.k8s.io") == "v1"


async def test_a_crd_created_later_is_found_and_served(api: Api, unique: str) -> None:
    group = f"{unique}.example.com"
    clock = FakeClock()
    mapper = RESTMapper(api, clock=clock, min_refresh_interval=1.0)
    with pytest.raises(NoKindMatchError):
        await mapper.kind_for(api_version=f"{group}/v1", kind="Gadget")
    await api.create(kinds.CRD, gadget_crd(group, scope="Namespaced"))
    with pytest.raises(NoKindMatchError):  # a miss inside the interval reads nothing
        await mapper.kind_for(api_version=f"{group}/v1", kind="Gadget")
    clock.advance(1.0)
    gadget = await mapper.kind_for(api_version=f"{group}/v1", kind="Gadget")
    assert (gadget.plural, gadget.namespaced) == ("gadgets", True)

    intent = {
        "apiVersion": f"{group}/v1",
        "kind": "Gadget",
        "metadata": {"name": "g1", "namespace": "default"},
        "spec": {"size": 2},
    }
    made = await api.apply(gadget, intent, field_manager="work-agent")
    assert made["spec"] == {"size": 2}
    await api.patch(
        gadget, "g1", {"status": {"ready": True}}, namespace="default", subresource="status"
    )
    listed = await api.list(gadget, namespace="default")
    assert [(g["metadata"]["name"], g["status"]) for g in listed["items"]] == [
        ("g1", {"ready": True})
    ]
    await api.delete(gadget, "g1", namespace="default")
    with pytest.raises(ApiError) as gone:
        await api.get(gadget, "g1", namespace="default")
    assert gone.value.code == 404


async def test_a_cluster_scoped_crd(api: Api, unique: str) -> None:
    group = f"{unique}.example.com"
    await api.create(kinds.CRD, gadget_crd(group, scope="Cluster"))
    gadget = await RESTMapper(api).kind_for(api_version=f"{group}/v1", kind="Gadget")
    assert not gadget.namespaced
    await api.create(
        gadget, {"apiVersion": f"{group}/v1", "kind": "Gadget", "metadata": {"name": "c1"}}
    )
    assert (await api.get(gadget, "c1"))["metadata"]["name"] == "c1"
