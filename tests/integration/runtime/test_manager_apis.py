"""A manager over two APIs: one controller, one root kind (ConfigMaps on the "hub"),
watching its copies on a "managed cluster" too, so a copy changed or deleted there is
put right. Two clients to one server stand in for the two clusters (a second server
would cost seconds and prove nothing more: informers are told apart by client)."""

from __future__ import annotations

import asyncio
from typing import Any

from pyocm.kube import kinds
from pyocm.runtime.cache import split_key
from pyocm.runtime.client import Api
from pyocm.runtime.ensure import ensure
from pyocm.runtime.manager import Manager
from pyocm.testing import HubProcess
from tests.support import eventually

Obj = dict[str, Any]
COPY_OF = "example.com/copy-of"


async def test_a_controller_watches_two_apis_and_keeps_the_copy_right(
    api: Api, hub: HubProcess, unique: str
) -> None:
    hub_ns, spoke_ns = f"{unique}-hub", f"{unique}-spoke"
    for namespace in (hub_ns, spoke_ns):
        await api.create(kinds.NAMESPACE, {"metadata": {"name": namespace}})
    async with Api.from_kubeconfig(hub.kubeconfig) as spoke:
        manager = Manager(api)
        sources = manager.informer(kinds.CONFIGMAP, namespace=hub_ns)
        copies = manager.informer(kinds.CONFIGMAP, api=spoke, namespace=spoke_ns)
        assert copies is not sources and copies.api is spoke
        assert manager.informer(kinds.CONFIGMAP, api=spoke, namespace=spoke_ns) is copies

        async def reconcile(key: str) -> None:
            source = sources.store.get(key)
            if source is None:
                return
            _, name = split_key(key)
            desired: Obj = {
                "metadata": {"name": name, "namespace": spoke_ns, "labels": {COPY_OF: name}},
                "data": source.get("data") or {},
            }
            await ensure(spoke, kinds.CONFIGMAP, desired, cache=copies.store)

        controller = manager.controller("copy", reconcile)
        controller.watch(sources)
        controller.watch(
            copies,
            lambda copy: (
                [f"{hub_ns}/{name}"]
                if (name := (copy["metadata"].get("labels") or {}).get(COPY_OF))
                else []
            ),
        )
        run = asyncio.create_task(manager.run())
        try:
            await api.create(
                kinds.CONFIGMAP,
                {"metadata": {"name": "a", "namespace": hub_ns}, "data": {"k": "1"}},
            )

            async def copied() -> Obj:
                got = await spoke.get(kinds.CONFIGMAP, "a", namespace=spoke_ns)
                assert got.get("data") == {"k": "1"}
                return got

            first = await eventually(copied)
            # Changed on the managed cluster: the change there maps back to the root key.
            await spoke.patch(kinds.CONFIGMAP, "a", {"data": {"k": "drift"}}, namespace=spoke_ns)
            await eventually(copied)
            # Deleted there: made again.
            await spoke.delete(kinds.CONFIGMAP, "a", namespace=spoke_ns)
            again = await eventually(copied)
            assert again["metadata"]["uid"] != first["metadata"]["uid"]
        finally:
            run.cancel()
            await asyncio.gather(run, return_exceptions=True)
