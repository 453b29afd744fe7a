"""A template add-on joining the registry wakes what the framework's controllers passed
over before it existed: its MCAs, and its CSRs (the approval and signing controllers
have no resync, so a CSR left pending at a hub restart would wait for the agent's
timeout)."""

from __future__ import annotations

from typing import Any

from pyocm.addon.agent import KUBE_CLIENT_SIGNER
from pyocm.addon.hub.common import index_mcas
from pyocm.addon.manager import add_addon_controllers, addon_approver
from pyocm.addon.registry import AddonRegistry
from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.base.queue import WorkQueue
from pyocm.kube import kinds
from pyocm.runtime.manager import Manager
from tests.unit.addon.test_registry import Named


async def _noop(_key: str) -> None:
    return None


async def queued(queue: WorkQueue) -> set[str]:
    found = set()
    while len(queue):
        key = await queue.get()
        found.add(key)
        queue.done(key)
    return found


def csr(name: str, addon: str, signer: str) -> dict[str, Any]:
    labels = {wellknown.ADDON_NAME_LABEL: addon}
    return {"metadata": {"name": name, "labels": labels}, "spec": {"signerName": signer}}


async def test_joining_wakes_the_addons_mcas_and_csrs() -> None:
    manager = Manager(object())  # type: ignore[arg-type]  # nothing runs: no API call
    approval = manager.controller("csr-approval", _noop)
    registry = AddonRegistry()
    add_addon_controllers(manager, addons=registry, approver=addon_approver(registry), identity="t")
    client = manager.informer(kinds.CSR, fields=f"spec.signerName={KUBE_CLIENT_SIGNER}")
    custom = manager.informer(
        kinds.CSR,
        fields=f"spec.signerName!={KUBE_CLIENT_SIGNER}",
        labels=wellknown.ADDON_NAME_LABEL,
    )
    client.store.upsert(csr("addon-c1-tmpl-a", "tmpl", KUBE_CLIENT_SIGNER))
    client.store.upsert(csr("addon-c1-other-a", "other", KUBE_CLIENT_SIGNER))
    custom.store.upsert(csr("addon-c1-tmpl-b", "tmpl", "example.com/s"))
    mcas = index_mcas(manager.informer(ocm.MANAGED_CLUSTER_ADDON))
    mcas.store.upsert({"metadata": {"name": "tmpl", "namespace": "c1"}})

    registry.add(Named("tmpl"))

    mine = {"addon-c1-tmpl-a", "addon-c1-tmpl-b"}
    assert await queued(approval.queue) == mine
    for name in ("addon-custom-signer-csr-approval", "addon-csr-signing"):
        [controller] = manager.controllers_named(name)
        assert await queued(controller.queue) == mine
    for name in (
        "addon-registration-controller",
        "addon-deploy-controller",
        "addon-template-missing-controller",
    ):
        [controller] = manager.controllers_named(name)
        assert await queued(controller.queue) == {"c1/tmpl"}
