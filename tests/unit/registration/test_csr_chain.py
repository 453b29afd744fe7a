"""The approver chain's order and the signer registry's reserved names."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from pyocm.base.clock import FakeClock
from pyocm.pki.ca import CertificateAuthority
from pyocm.registration.hub.approvers import DECLINE, Verdict, approve
from pyocm.registration.hub.csrapproval import CsrApprovalController
from pyocm.registration.hub.signers import CaSigner, SignerRegistry

Obj = dict[str, Any]
CSR: Obj = {"metadata": {"name": "addon-c1-x-1"}, "spec": {"signerName": "example.com/x"}}


class Store:
    def __init__(self, *objs: Obj) -> None:
        self.store = {obj["metadata"]["name"]: obj for obj in objs}


class Fixed:
    def __init__(self, verdict: Verdict | None) -> None:
        self.verdict, self.asked = verdict, 0

    async def review(self, csr: Obj) -> Verdict | None:
        self.asked += 1
        return self.verdict


class Hub:
    def __init__(self) -> None:
        self.approved: list[Obj] = []

    async def update(self, kind: object, obj: Obj, **_: Any) -> Obj:
        self.approved.append(obj)
        return obj


class Recorder:
    async def event(self, obj: Obj, **_: Any) -> None:
        return None


async def chain(*approvers: Fixed) -> Hub:
    hub = Hub()
    controller = CsrApprovalController(
        hub,  # type: ignore[arg-type]
        Store(CSR),  # type: ignore[arg-type]
        Store(),  # type: ignore[arg-type]
        clock=FakeClock(),
        recorder=Recorder(),  # type: ignore[arg-type]
        approvers=approvers,
    )
    await controller.reconcile("addon-c1-x-1")
    return hub


async def test_a_decline_ends_the_chain_and_a_pass_goes_on() -> None:
    passing, declining, approving = Fixed(None), Fixed(DECLINE), Fixed(approve("R", "ok"))
    assert (await chain(passing, declining, approving)).approved == []
    assert (passing.asked, declining.asked, approving.asked) == (1, 1, 0)
    hub = await chain(passing, approving)
    assert [c["status"]["conditions"][0]["message"] for c in hub.approved] == ["ok"]


def test_kubernetes_signers_stay_the_api_servers() -> None:
    registry = SignerRegistry()
    signer = CaSigner(ca=CertificateAuthority.create("x", valid_for=timedelta(days=1)))
    with pytest.raises(ValueError, match="API server"):
        registry.register("kubernetes.io/kube-apiserver-client", signer)
    registry.register("example.com/x", signer)
    with pytest.raises(ValueError, match="already"):
        registry.register("example.com/x", signer)
    assert registry.get("example.com/x") is signer and registry.names == {"example.com/x"}
