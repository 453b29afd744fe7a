"""The hub's CSR extension points, each with one real use: an approver for a test
add-on's CSRs, plugged in after the cluster-agent rules, and a custom signer that signs
them with the add-on's own CA, both given to the composed hub manager
(``hubmanager.build(approvers=..., signers=...)``) that ``pyocm hub`` runs. The add-on
agent asks through the agent's CSR flow."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from typing import Any

import pytest
import pytest_asyncio
from cryptography import x509

from pyocm import hubmanager
from pyocm.api import conditions, wellknown
from pyocm.base.clock import RealClock
from pyocm.kube import kinds
from pyocm.pki.ca import CertificateAuthority
from pyocm.pki.keys import generate_private_key
from pyocm.registration.agent import certs
from pyocm.registration.agent.csrflow import request_certificate
from pyocm.registration.hub.approvers import Verdict, approve
from pyocm.registration.hub.csrapproval import CLIENT_SIGNER
from pyocm.registration.hub.signers import CaSigner, SignerRegistry
from pyocm.runtime.client import Api
from pyocm.runtime.manager import Manager
from pyocm.testing import HubProcess

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


@pytest.fixture(scope="module")
def extended_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """An API server of this module's own: the composed hub manager runs against it, and
    its controllers (default sets, bootstrap RBAC) must not touch the session's bare hub."""
    process = HubProcess(tmp_path_factory.mktemp("extended-hub"), extra_args=["--no-controllers"])
    process.start()
    yield process
    assert process.stop() == 0, process.log()[-4000:]


@pytest_asyncio.fixture
async def hub_api(extended_hub: HubProcess) -> AsyncIterator[Api]:
    async with Api.from_kubeconfig(extended_hub.kubeconfig) as client:
        yield client


@contextlib.asynccontextmanager
async def hub_extensions(
    api: Api, ca: CertificateAuthority, *, also: tuple[str, ...] = ()
) -> AsyncIterator[Manager]:
    """The real composed hub manager (``pyocm hub``'s), built with the add-on's approver
    and its custom signer (and the signers ``also`` names, with CAs of their own)."""
    registry = SignerRegistry()
    registry.register(SIGNER, CaSigner(ca=ca))
    for name in also:
        other = CertificateAuthority.create(name.replace("/", "-"), valid_for=timedelta(days=1))
        registry.register(name, CaSigner(ca=other))
    manager = hubmanager.build(api, approvers=[HelloApprover()], signers=registry)
    running = asyncio.create_task(manager.run())
    try:
        yield manager
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


@pytest.mark.parametrize(
    "also",
    [(), ("example.com/other-signer",)],
    ids=["one signer: its own informer", "two signers: one informer for both"],
)
async def test_an_addon_csr_is_approved_by_its_approver_and_signed_with_its_ca(
    hub_api: Api, unique: str, also: tuple[str, ...]
) -> None:
    api = hub_api
    ca = CertificateAuthority.create("hello-addon-ca", valid_for=timedelta(days=1))
    request = certs.addon_request(cluster=unique, addon=ADDON, signer=SIGNER)
    key = generate_private_key()
    async with hub_extensions(api, ca, also=also):
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


async def test_an_addon_csr_for_the_client_signer_is_approved_by_the_added_approver(
    hub_api: Api, unique: str
) -> None:
    """Upstream's default add-on registration: the kube-apiserver-client signer, whose
    CSRs the cluster-agent approver passes on (no cluster agent's subject) to the add-on's."""
    ca = CertificateAuthority.create("unused-ca", valid_for=timedelta(days=1))
    request = certs.addon_request(cluster=unique, addon=ADDON, signer=CLIENT_SIGNER)
    key = generate_private_key()
    async with hub_extensions(hub_api, ca):
        pem = await request_certificate(hub_api, request, key, clock=RealClock(), poll=0.05)
    cert = certs.load_chain(pem)[0]
    assert cert.issuer != ca.certificate.subject, "the API server's own signer signed it"
    assert certs.matches(cert, request) and certs.key_matches(cert, key)
    csr = await hub_api.get(kinds.CSR, request.csr_name(key))
    approved = conditions.find(csr["status"]["conditions"], "Approved")
    assert approved is not None and approved["message"] == "Auto approving addon agent certificate."


async def test_a_cluster_agent_csr_is_still_the_cluster_agent_approvers(
    hub_api: Api, unique: str
) -> None:
    """The added approver comes after the cluster-agent rules: a join request carrying the
    add-on's label is theirs (the admin's to approve), never the add-on approver's."""
    ca = CertificateAuthority.create("unused-ca", valid_for=timedelta(days=1))
    request = certs.CertificateRequest(
        common_name=f"system:open-cluster-management:{unique}:agent1",
        organizations=(f"system:open-cluster-management:{unique}",),
        name_prefix=f"{unique}-",
        signer=CLIENT_SIGNER,
        labels=((wellknown.CLUSTER_NAME_LABEL, unique), (certs.ADDON_NAME_LABEL, ADDON)),
    )
    key = generate_private_key()
    async with hub_extensions(hub_api, ca) as manager:
        await manager.wait_synced()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(
                request_certificate(hub_api, request, key, clock=RealClock(), poll=0.05), 2
            )
    csr = await hub_api.get(kinds.CSR, request.csr_name(key))
    assert conditions.find((csr.get("status") or {}).get("conditions") or [], "Approved") is None
