"""The hub's CSR extension points, each with one real use: an approver for a test
add-on's CSRs, plugged in after the cluster-agent rules, and a custom signer that signs
them with the add-on's own CA. The add-on agent asks through the agent's CSR flow."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

from cryptography import x509

from pyocm.api import conditions
from pyocm.api import kinds as ocm
from pyocm.base.clock import RealClock
from pyocm.kube import kinds
from pyocm.pki.ca import CertificateAuthority
from pyocm.pki.keys import generate_private_key
from pyocm.registration.agent import certs
from pyocm.registration.agent.csrflow import request_certificate
from pyocm.registration.hub.approvers import Verdict, approve
from pyocm.registration.hub.csrapproval import CsrApprovalController
from pyocm.registration.hub.signers import CaSigner, CsrSigningController, SignerRegistry
from pyocm.runtime.client import Api
from pyocm.runtime.events import Recorder
from pyocm.runtime.manager import Manager

Obj = dict[str, Any]
ADDON = "hello"
SIGNER = "example.com/hello-signer"


class HelloApprover:
    """Approves the hello add-on's CSRs that carry its default agent subject."""

    async def review(self, csr: Obj) -> Verdict | None:
        labels = csr["metadata"].get("labels") or {}
        if labels.get(certs.ADDON_NAME_LABEL) != ADDON:
            return None
        return approve("AddonCSRAutoApproved", "Auto approving addon agent certificate.")


@contextlib.asynccontextmanager
async def hub_extensions(api: Api, ca: CertificateAuthority) -> AsyncIterator[None]:
    clock = RealClock()
    manager = Manager(api, clock=clock)
    csrs = manager.informer(kinds.CSR, fields=f"spec.signerName={SIGNER}")
    clusters = manager.informer(ocm.MANAGED_CLUSTER)
    recorder = Recorder(api, controller="test-addon", instance="test", clock=clock)
    approval = CsrApprovalController(
        api, csrs, clusters, clock=clock, recorder=recorder, approvers=[HelloApprover()]
    )
    manager.controller("addon-csr-approval", approval.reconcile).watch(csrs)
    registry = SignerRegistry()
    registry.register(SIGNER, CaSigner(ca=ca))
    signing = CsrSigningController(api, csrs, registry=registry, clock=clock)
    manager.controller("addon-csr-signing", signing.reconcile).watch(csrs)
    running = asyncio.create_task(manager.run())
    try:
        yield
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


async def test_an_addon_csr_is_approved_by_its_approver_and_signed_with_its_ca(
    api: Api, unique: str
) -> None:
    ca = CertificateAuthority.create("hello-addon-ca", valid_for=timedelta(days=1))
    request = certs.addon_request(cluster=unique, addon=ADDON, signer=SIGNER)
    key = generate_private_key()
    async with hub_extensions(api, ca):
        pem = await request_certificate(api, request, key, clock=RealClock(), poll=0.05)
    cert = certs.load_chain(pem)[0]
    assert cert.issuer == ca.certificate.subject
    cert.verify_directly_issued_by(ca.certificate)
    assert certs.matches(cert, request) and certs.key_matches(cert, key)
    assert cert.extensions.get_extension_for_class(
        x509.SubjectAlternativeName
    ).value.get_values_for_type(x509.DNSName) == [f"{ADDON}.addon.open-cluster-management.io"]
    csr = await api.get(kinds.CSR, request.csr_name(key))
    approved = conditions.find(csr["status"]["conditions"], "Approved")
    assert approved is not None and approved["message"] == "Auto approving addon agent certificate."
