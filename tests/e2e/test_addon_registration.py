"""Add-on registration through a real hub: a test AgentAddon registered in-process with
the hub's controllers (its CSR approval chain and the add-on registration controllers)
against a hub process of this module's own, an MCA owned by its CMA, CSRs sent as the
cluster's registration agent sends them, approved and signed; the agent's RoleBinding
created and removed with the MCA; a broken CustomSigner CA failing the CSR once."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
from collections.abc import AsyncIterator, Iterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from pyocm.addon.agent import (
    KUBE_CLIENT_SIGNER,
    AgentAddon,
    AgentAddonOptions,
    RegistrationConfig,
    RegistrationOption,
    Subject,
    default_groups,
    default_user,
)
from pyocm.addon.registration import (
    AddonCsrApprover,
    CurrentCluster,
    add_addon_registration_controllers,
    ca_secret_signer,
    default_csr_approver,
    hub_permissions,
)
from pyocm.api import conditions
from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.pki import keys
from pyocm.pki.ca import CertificateAuthority
from pyocm.registration.agent.certs import addon_request
from pyocm.registration.hub.manager import build_hub_manager
from pyocm.runtime.client import Api
from pyocm.runtime.events import Recorder
from pyocm.testing import HubProcess
from tests.conftest import hub_process
from tests.support import eventually

Obj = dict[str, Any]
PREFIX = "system:open-cluster-management:"
MANAGED_CLUSTERS = "system:open-cluster-management:managed-clusters"


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """A hub of this module's own, without controllers: the test runs them in-process,
    with its add-ons registered."""
    yield from hub_process(tmp_path_factory, "addon-registration", ["--no-controllers"])


class Hello:
    """An add-on registering one KubeClient (default approver, ClusterRole ``<name>-role``
    in the cluster namespace) and, with ``signer``, one CustomSigner with its CA Secret."""

    def __init__(self, name: str, *, signer: str = "", ca_namespace: str = "") -> None:
        self.name, self.signer, self.ca_namespace = name, signer, ca_namespace

    def options(self) -> AgentAddonOptions:
        return AgentAddonOptions(
            name=self.name,
            registration=RegistrationOption(
                configurations=self.configurations,
                approve=self.approve,
                permissions=hub_permissions(CurrentCluster(f"{self.name}-role")),
                sign=ca_secret_signer(
                    signer_name=self.signer, secret="signer-ca", namespace=self.ca_namespace
                )
                if self.signer
                else None,
            ),
        )

    async def configurations(self, cluster: Obj, addon: Obj) -> list[RegistrationConfig]:
        name = cluster["metadata"]["name"]
        subject = Subject(default_user(name, self.name, self.name), default_groups(name, self.name))
        found = [RegistrationConfig(KUBE_CLIENT_SIGNER, subject)]
        if self.signer:
            found.append(RegistrationConfig(self.signer, subject))
        return found

    async def approve(self, cluster: Any, addon: Any, csr: Obj) -> bool:
        if csr["spec"]["signerName"] == self.signer:
            return True  # upstream's CustomerSignerCSRApprover
        return await default_csr_approver(self.name)(cluster, addon, csr)

    async def manifests(self, cluster: Any, addon: Any) -> list[Obj]:
        return []


@contextlib.asynccontextmanager
async def addon_manager(api: Api, addons: Mapping[str, AgentAddon]) -> AsyncIterator[None]:
    """The hub's registration controllers with the add-ons' approver in their chain, and
    the add-on registration controllers, as the hub manager wires them."""
    approver = AddonCsrApprover(addons)
    manager = build_hub_manager(api, approvers=[approver])
    recorder = Recorder(api, controller="addon-manager", instance="test", clock=manager.clock)
    add_addon_registration_controllers(manager, addons=addons, recorder=recorder, approver=approver)
    task = asyncio.create_task(manager.run())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def enable(api: Api, cluster: str, addon: str) -> Obj:
    """An accepted cluster (its namespace made by the hub), the CMA and the MCA it owns."""
    await api.create(
        ocm.MANAGED_CLUSTER, {"metadata": {"name": cluster}, "spec": {"hubAcceptsClient": True}}
    )
    await eventually(lambda: api.get(kinds.NAMESPACE, cluster))
    cma = await api.create(ocm.CLUSTER_MANAGEMENT_ADDON, {"metadata": {"name": addon}, "spec": {}})
    owner = {
        "apiVersion": "addon.open-cluster-management.io/v1beta1",
        "kind": "ClusterManagementAddOn",
        "name": addon,
        "uid": cma["metadata"]["uid"],
    }
    return await api.create(
        ocm.MANAGED_CLUSTER_ADDON,
        {"metadata": {"name": addon, "namespace": cluster, "ownerReferences": [owner]}, "spec": {}},
    )


def agent_api(hub: HubProcess, cluster: str, agent: str = "agent1") -> Api:
    """The hub as the cluster's registration agent, which sends add-on CSRs."""
    identity = hub.identity(f"{PREFIX}{cluster}:{agent}", (f"{PREFIX}{cluster}", MANAGED_CLUSTERS))
    return Api.from_kubeconfig(Path(identity.kubeconfig))


async def send_csr(api: Api, cluster: str, addon: str, *, signer: str = KUBE_CLIENT_SIGNER) -> str:
    request = addon_request(
        cluster=cluster, addon=addon, signer=signer, groups=default_groups(cluster, addon)
    )
    created = await api.create(kinds.CSR, dict(request.csr_object(keys.generate_private_key())))
    return str(created["metadata"]["name"])


async def issued(api: Api, name: str) -> x509.Certificate:
    async def check() -> x509.Certificate | None:
        csr = await api.get(kinds.CSR, name)
        certificate = (csr.get("status") or {}).get("certificate")
        return (
            x509.load_pem_x509_certificate(base64.b64decode(certificate)) if certificate else None
        )

    found: x509.Certificate = await eventually(check)
    return found


async def registration_applied(api: Api, cluster: str, addon: str) -> Obj:
    async def check() -> Obj | None:
        mca = await api.get(ocm.MANAGED_CLUSTER_ADDON, addon, namespace=cluster)
        found = conditions.find((mca.get("status") or {}).get("conditions"), "RegistrationApplied")
        return mca if found and found["reason"] == "SetPermissionApplied" else None

    found: Obj = await eventually(check)
    return found


async def test_a_kube_client_registration_is_written_approved_and_granted(
    api: Api, hub: HubProcess, unique: str
) -> None:
    cluster, addon, intruder = f"c-{unique}", f"hello-{unique}", f"x-{unique}"
    async with addon_manager(api, {addon: Hello(addon)}):
        created = await enable(api, cluster, addon)
        mca = await registration_applied(api, cluster, addon)
        status = mca["status"]
        assert status["namespace"] == "open-cluster-management-agent-addon"
        assert status["registrations"] == [
            {
                "type": "kubeClient",
                "kubeClient": {
                    "subject": {
                        "user": default_user(cluster, addon, addon),
                        "groups": list(default_groups(cluster, addon)),
                    }
                },
            }
        ]
        [applied] = [c for c in status["conditions"] if c["type"] == "RegistrationApplied"]
        assert (applied["status"], applied["message"]) == (
            "True",
            "Registration of the addon agent is configured",
        )
        binding = await api.get(
            kinds.ROLE_BINDING,
            f"open-cluster-management:{addon}:clusterrole:agent",
            namespace=cluster,
        )
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": f"{addon}-role",
        }
        assert [s["name"] for s in binding["subjects"]] == [
            default_user(cluster, addon, addon),
            *default_groups(cluster, addon),
        ]
        assert binding["metadata"]["labels"] == {
            "open-cluster-management.io/addon-name": addon,
            "open-cluster-management.io/addon-template-name": "",
        }
        [owner] = binding["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["uid"]) == ("ManagedClusterAddOn", created["metadata"]["uid"])

        # Another cluster's agent asking for this cluster's add-on subject is never
        # approved: sent first, it is reviewed before the rightful CSR sent after it.
        await api.create(
            ocm.MANAGED_CLUSTER,
            {"metadata": {"name": intruder}, "spec": {"hubAcceptsClient": True}},
        )
        async with agent_api(hub, intruder) as other:
            await eventually(lambda: other.list(kinds.CSR))
            refused = await send_csr(other, cluster, addon)
        async with agent_api(hub, cluster) as agent:
            name = await send_csr(agent, cluster, addon)
        certificate = await issued(api, name)
        assert certificate.subject.rfc4514_string().startswith(
            f"CN={default_user(cluster, addon, addon)}"
        )
        approved = conditions.find(
            (await api.get(kinds.CSR, name))["status"]["conditions"], "Approved"
        )
        assert approved is not None
        assert (approved["reason"], approved["message"]) == (
            "AutoApprovedByHubCSRApprovingController",
            "Auto approving addon agent certificate.",
        )
        assert not (await api.get(kinds.CSR, refused)).get("status", {}).get("conditions")

        # The cluster's agent may write the add-on's status, but not choose whom the hub
        # grants: a subject it writes into the registrations never reaches the binding.
        since = binding["metadata"]["resourceVersion"]
        mine = (await api.get(ocm.MANAGED_CLUSTER_ADDON, addon, namespace=cluster))["status"]
        decided = mine["registrations"]
        tampered = copy.deepcopy(decided)
        tampered[0]["kubeClient"]["subject"]["groups"] = ["system:masters"]
        async with agent_api(hub, cluster) as agent:
            await agent.patch(
                ocm.MANAGED_CLUSTER_ADDON,
                addon,
                {"status": {"registrations": tampered}},
                namespace=cluster,
                subresource="status",
            )

        async def rewritten() -> bool:
            found = await api.get(ocm.MANAGED_CLUSTER_ADDON, addon, namespace=cluster)
            return bool(found["status"]["registrations"] == decided)

        await eventually(rewritten)
        granted: list[list[str]] = []

        async def collect() -> None:
            async for _type, obj in api.watch(
                kinds.ROLE_BINDING, namespace=cluster, resource_version=since
            ):
                granted.append([str(s["name"]) for s in obj.get("subjects") or []])

        watching = asyncio.create_task(collect())
        await asyncio.sleep(1.0)
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)
        assert not [g for g in granted if "system:masters" in g], granted

        await api.delete(ocm.MANAGED_CLUSTER_ADDON, addon, namespace=cluster)

        async def binding_gone() -> bool:
            try:
                await api.get(kinds.ROLE_BINDING, binding["metadata"]["name"], namespace=cluster)
            except ApiError as err:
                return err.code == 404
            return False

        await eventually(binding_gone)


async def test_a_custom_signer_csr_is_signed_by_the_addon_and_a_broken_ca_fails_it(
    api: Api, hub: HubProcess, unique: str
) -> None:
    cluster, addon, signer = f"c-{unique}", f"signed-{unique}", f"example.com/{unique}"
    ca = CertificateAuthority.create("signer", valid_for=timedelta(days=1))
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    secret = {
        "metadata": {"name": "signer-ca", "namespace": unique},
        "type": "kubernetes.io/tls",
        "data": {
            "tls.crt": base64.b64encode(ca.cert_pem).decode(),
            "tls.key": base64.b64encode(ca.key_pem).decode(),
        },
    }
    await api.create(kinds.SECRET, secret)
    async with addon_manager(api, {addon: Hello(addon, signer=signer, ca_namespace=unique)}):
        await enable(api, cluster, addon)
        mca = await registration_applied(api, cluster, addon)
        assert mca["status"]["registrations"][1] == {
            "type": "customSigner",
            "customSigner": {
                "signerName": signer,
                "subject": {
                    "user": default_user(cluster, addon, addon),
                    "groups": list(default_groups(cluster, addon)),
                },
            },
        }
        async with agent_api(hub, cluster) as agent:
            name = await send_csr(agent, cluster, addon, signer=signer)
            certificate = await issued(api, name)
            ca.verify_client(certificate)
            eku = certificate.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
            assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]

            secret["data"]["tls.key"] = base64.b64encode(
                b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
            ).decode()
            await api.update(
                kinds.SECRET,
                {
                    **secret,
                    "metadata": (await api.get(kinds.SECRET, "signer-ca", namespace=unique))[
                        "metadata"
                    ],
                },
            )
            failing = await send_csr(agent, cluster, addon, signer=signer)

        async def failed() -> Obj | None:
            csr = await api.get(kinds.CSR, failing)
            return conditions.find((csr.get("status") or {}).get("conditions"), "Failed")

        condition = await eventually(failed)
        assert condition["reason"] == "SignerValidationFailure"
        assert condition["message"] == (
            f"failed to sign addon csr {failing}: get ca {unique}/signer-ca data failed: "
            "failed to parse ca key as PKCS#1, PKCS#8 or SEC1 PEM"
        )
        assert not (await api.get(kinds.CSR, failing))["status"].get("certificate")

        async def warned() -> list[Obj]:
            events = await api.list(kinds.EVENT, namespace="default")
            return [
                e
                for e in events["items"]
                if e["regarding"].get("name") == failing and e["reason"] == "AddonCSRSignFailed"
            ]

        [event] = await eventually(warned)
        assert (event["type"], event["note"]) == ("Warning", condition["message"])
