"""How build_hub_manager wires add-on approvers and custom signers: the cluster agents'
CSR informer and controller are the same with or without them; custom signers get an
informer of their own, filtered to what is registered."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from pyocm.base.clock import FakeClock
from pyocm.kube import kinds
from pyocm.pki.ca import CertificateAuthority
from pyocm.registration.hub.approvers import Verdict
from pyocm.registration.hub.csrapproval import CLIENT_SIGNER
from pyocm.registration.hub.manager import build_hub_manager, custom_signer_selector
from pyocm.registration.hub.signers import CaSigner, SignerRegistry
from pyocm.runtime.manager import Manager

Obj = dict[str, Any]


class Nobody:
    async def review(self, csr: Obj) -> Verdict | None:
        return None


@pytest.fixture(scope="module")
def ca() -> CertificateAuthority:
    return CertificateAuthority.create("wiring", valid_for=timedelta(days=1))


def registry(ca: CertificateAuthority, *names: str) -> SignerRegistry:
    made = SignerRegistry()
    for name in names:
        made.register(name, CaSigner(ca=ca))
    return made


def build(**extensions: Any) -> Manager:
    return build_hub_manager(object(), clock=FakeClock(), **extensions)  # type: ignore[arg-type]


def csr_selectors(manager: Manager) -> list[str]:
    return sorted(
        str(informer.fields)
        for informer in manager._informers.values()
        if informer.kind == kinds.CSR
    )


def controllers(manager: Manager) -> list[str]:
    return [controller.name for controller in manager._controllers]


def test_without_signers_the_hub_has_only_the_cluster_agents_csr_informer(
    ca: CertificateAuthority,
) -> None:
    plain = build()
    for extended in (build(approvers=[Nobody()]), build(signers=registry(ca))):
        assert csr_selectors(extended) == csr_selectors(plain)
        assert controllers(extended) == controllers(plain)
    assert csr_selectors(plain) == [f"spec.signerName={CLIENT_SIGNER}"]


def test_one_signer_gets_an_informer_of_exactly_its_csrs(ca: CertificateAuthority) -> None:
    manager = build(approvers=[Nobody()], signers=registry(ca, "example.com/hello"))
    assert csr_selectors(manager) == [
        "spec.signerName=example.com/hello",
        f"spec.signerName={CLIENT_SIGNER}",
    ]
    assert controllers(manager) == [
        *controllers(build()),
        "custom-signer-csr-approval",
        "csr-signing",
    ]


def test_several_signers_share_one_informer_of_all_but_the_api_servers_signer() -> None:
    assert custom_signer_selector(frozenset({"a.io/x", "b.io/y"})) == (
        f"spec.signerName!={CLIENT_SIGNER}"
    )
    assert custom_signer_selector(frozenset({"a.io/x=1"})) == r"spec.signerName=a.io/x\=1"
