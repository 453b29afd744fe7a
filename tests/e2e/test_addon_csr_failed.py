"""A custom signer's CSR that the hub fails does not hold the add-on: a real
registration agent, joined to a hub whose add-on registration controllers run in-process
with a test add-on, sends its CustomSigner CSR; the add-on's CA Secret is broken, so the
hub fails the CSR; the agent asks again with new CSRs, and once the CA is fixed the next
one is signed and the agent writes the add-on's Secret."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from pyocm.api import conditions, wellknown
from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.pki.ca import CertificateAuthority
from pyocm.registration.agent.addons.options import AddOnOptions
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.agents import embedded, running_agent
from tests.conftest import hub_process
from tests.e2e.test_addon_registration import Hello, addon_manager
from tests.support import eventually

Obj = dict[str, Any]
INSTALL_NS = "open-cluster-management-agent-addon"
BROKEN_KEY = b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """A hub of this module's own, without controllers: the test runs them in-process,
    with its add-on registered."""
    yield from hub_process(tmp_path_factory, "addon-csr-failed", ["--no-controllers"])


def ca_secret(namespace: str, ca: CertificateAuthority, *, key: bytes) -> Obj:
    return {
        "metadata": {"name": "signer-ca", "namespace": namespace},
        "type": "kubernetes.io/tls",
        "data": {
            "tls.crt": base64.b64encode(ca.cert_pem).decode(),
            "tls.key": base64.b64encode(key).decode(),
        },
    }


async def signer_csrs(api: Api, cluster: str, addon: str, signer: str) -> list[Obj]:
    labels = f"{wellknown.CLUSTER_NAME_LABEL}={cluster},{wellknown.ADDON_NAME_LABEL}={addon}"
    found = (await api.list(kinds.CSR, labels=labels))["items"]
    return [c for c in found if c["spec"]["signerName"] == signer]


def failed(csr: Obj) -> bool:
    return conditions.find((csr.get("status") or {}).get("conditions"), "Failed") is not None


async def test_failed_csrs_are_asked_again_until_the_fixed_ca_signs_one(
    api: Api, hub: HubProcess, tmp_path: Path, unique: str
) -> None:
    cluster, addon, signer = f"c-{unique}", f"signed-{unique}", f"example.com/{unique}"
    ca = CertificateAuthority.create("signer", valid_for=timedelta(days=1))
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    await api.create(kinds.SECRET, ca_secret(unique, ca, key=BROKEN_KEY))
    managed = await embedded(tmp_path, "m")
    addons = {addon: Hello(addon, signer=signer, ca_namespace=unique)}
    try:
        async with (
            addon_manager(api, addons),
            running_agent(api, hub, managed, cluster, addons=AddOnOptions(health_period=0.5)),
        ):
            cma = await api.create(
                ocm.CLUSTER_MANAGEMENT_ADDON, {"metadata": {"name": addon}, "spec": {}}
            )
            owner = {
                "apiVersion": "addon.open-cluster-management.io/v1beta1",
                "kind": "ClusterManagementAddOn",
                "name": addon,
                "uid": cma["metadata"]["uid"],
            }
            await api.create(
                ocm.MANAGED_CLUSTER_ADDON,
                {
                    "metadata": {"name": addon, "namespace": cluster, "ownerReferences": [owner]},
                    "spec": {},
                },
            )

            async def two_failed() -> list[Obj] | None:
                found = await signer_csrs(api, cluster, addon, signer)
                return found if sum(failed(c) for c in found) >= 2 else None

            # A new CSR after the first failed: the agent did not wait on it.
            before = await eventually(two_failed)
            assert len({c["metadata"]["name"] for c in before}) == len(before)

            fixed = ca_secret(unique, ca, key=ca.key_pem)
            current = await api.get(kinds.SECRET, "signer-ca", namespace=unique)
            await api.update(kinds.SECRET, {**fixed, "metadata": current["metadata"]})

            name = f"{addon}-{signer.replace('/', '-')}-client-cert"

            async def stored() -> Obj:
                return await managed.api.get(kinds.SECRET, name, namespace=INSTALL_NS)

            data = (await eventually(stored))["data"]
            certificate = base64.b64decode(data["tls.crt"])
            ca.verify_client(x509.load_pem_x509_certificate(certificate))
            signed = [
                c
                for c in await signer_csrs(api, cluster, addon, signer)
                if (c.get("status") or {}).get("certificate")
            ]
            assert len(signed) == 1 and not failed(signed[0])
            assert signed[0]["metadata"]["name"] not in {c["metadata"]["name"] for c in before}
    finally:
        await managed.stop()
