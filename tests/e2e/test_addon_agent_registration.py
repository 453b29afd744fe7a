"""The registration agent's add-on side against a real hub (issue 21, items 2 and 7).

The hub's add-on manager would write each ManagedClusterAddOn's ``status.registrations``
and approve its CSRs; here the admin does both, so these tests prove the agent alone:
the CSR it asks with, the install namespace it creates, the Secret with a hub kubeconfig
that works, its removal, and ``Available`` from the add-on's Lease.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pyocm.api import kinds as ocm
from pyocm.api import wellknown
from pyocm.kube import kinds, timefmt
from pyocm.kube.status import ApiError
from pyocm.local.embedded import EmbeddedCluster
from pyocm.pki.ca import CertificateAuthority
from pyocm.pki.csr import common_name, load_csr, organizational_units, organizations
from pyocm.pki.signer import sign_client_csr
from pyocm.registration.agent.addons.options import AddOnOptions
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.agents import condition, embedded, running_agent
from tests.support import eventually

Obj = dict[str, Any]
INSTALL_NS = "open-cluster-management-agent-addon"
FAST = AddOnOptions(health_period=0.5, lease_grace=3.0)


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """These tests need the hub's controllers (cluster acceptance, RBAC)."""
    return ocm_hub


def scope(cluster: str, addon: str) -> str:
    return f"system:open-cluster-management:cluster:{cluster}:addon:{addon}"


async def create_addon(api: Api, cluster: str, addon: str, status: Obj) -> None:
    """An MCA with ``status`` written as the hub's add-on manager would write it."""
    await api.create(
        ocm.MANAGED_CLUSTER_ADDON,
        {"metadata": {"name": addon, "namespace": cluster}, "spec": {}},
    )
    await api.patch(
        ocm.MANAGED_CLUSTER_ADDON,
        addon,
        {"status": status},
        namespace=cluster,
        subresource="status",
    )


async def addon_csrs(api: Api, cluster: str, addon: str) -> list[Obj]:
    labels = f"{wellknown.CLUSTER_NAME_LABEL}={cluster},{wellknown.ADDON_NAME_LABEL}={addon}"
    return list((await api.list(kinds.CSR, labels=labels))["items"])


async def approve(api: Api, csr: Obj) -> None:
    csr.setdefault("status", {})["conditions"] = [
        {"type": "Approved", "status": "True", "reason": "AcceptedByTest", "message": "test"}
    ]
    await api.update(kinds.CSR, csr, subresource="approval")


async def secret(
    managed: EmbeddedCluster, name: str, namespace: str = INSTALL_NS
) -> dict[str, bytes]:
    found = await managed.api.get(kinds.SECRET, name, namespace=namespace)
    return {key: base64.b64decode(value) for key, value in found["data"].items()}


async def addon_condition(api: Api, cluster: str, addon: str, type: str) -> Obj:
    found = await api.get(ocm.MANAGED_CLUSTER_ADDON, addon, namespace=cluster)
    return condition(found, type)


async def gone(managed: EmbeddedCluster, name: str) -> bool:
    try:
        await managed.api.get(kinds.SECRET, name, namespace=INSTALL_NS)
    except ApiError as err:
        return err.code == 404
    return False


async def test_a_kubeclient_registration_gets_a_working_hub_kubeconfig_then_loses_it(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster, addon = f"reg-{unique}", "helloworld"
    user = f"{scope(cluster, addon)}:agent:{addon}-agent"
    groups = [scope(cluster, addon), f"system:open-cluster-management:addon:{addon}"]
    managed = await embedded(tmp_path, "m")
    try:
        async with running_agent(api, hub, managed, cluster, addons=FAST):
            await create_addon(
                api,
                cluster,
                addon,
                {
                    "registrations": [
                        {
                            "type": "kubeClient",
                            "kubeClient": {"subject": {"user": user, "groups": groups}},
                        }
                    ]
                },
            )

            # The agent tells the hub its kubeClient driver first (upstream's ensureDriver).
            async def driver() -> str:
                found = await api.get(ocm.MANAGED_CLUSTER_ADDON, addon, namespace=cluster)
                return str(found["status"]["registrations"][0]["kubeClient"].get("driver", ""))

            assert await eventually(driver) == "csr"

            [csr] = await eventually(lambda: addon_csrs(api, cluster, addon))
            assert csr["metadata"]["name"].startswith(f"addon-{cluster}-{addon}-")
            assert csr["spec"]["signerName"] == "kubernetes.io/kube-apiserver-client"
            request = load_csr(base64.b64decode(csr["spec"]["request"]))
            assert common_name(request.subject) == user
            assert sorted(organizations(request.subject)) == sorted(groups)
            assert csr["spec"]["username"].startswith(f"system:open-cluster-management:{cluster}:")
            await approve(api, csr)

            data = await eventually(lambda: secret(managed, f"{addon}-hub-kubeconfig"))
            assert set(data) == {"kubeconfig", "tls.crt", "tls.key", "cluster-name"}
            assert data["cluster-name"] == cluster.encode()
            namespace = await managed.api.get(kinds.NAMESPACE, INSTALL_NS)
            assert (
                namespace["metadata"]["labels"]["open-cluster-management.io/created-by-klusterlet"]
                == "klusterlet"
            )

            rotated = await eventually(
                lambda: addon_condition(api, cluster, addon, wellknown.CLUSTER_CERTIFICATE_ROTATED)
            )
            assert (rotated["status"], rotated["reason"]) == ("True", "ClientCertificateUpdated")
            assert rotated["message"].startswith("client certificate rotated starting from ")

            # The kubeconfig works as a pod mounting the Secret would use it: files side by side.
            folder = tmp_path / "hub"
            folder.mkdir()
            for key, value in data.items():
                (folder / key).write_bytes(value)
            # What the hub's add-on manager would grant the add-on agent (here: reading its MCA).
            await api.create(
                kinds.ROLE,
                {
                    "metadata": {"name": f"{addon}-agent", "namespace": cluster},
                    "rules": [
                        {
                            "apiGroups": [wellknown.ADDON_GROUP],
                            "resources": ["managedclusteraddons"],
                            "verbs": ["get"],
                        }
                    ],
                },
            )
            await api.create(
                kinds.ROLE_BINDING,
                {
                    "metadata": {"name": f"{addon}-agent", "namespace": cluster},
                    "roleRef": {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "Role",
                        "name": f"{addon}-agent",
                    },
                    "subjects": [
                        {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}
                    ],
                },
            )
            async with Api.from_kubeconfig(folder / "kubeconfig") as as_addon:
                found = await eventually(
                    lambda: as_addon.get(ocm.MANAGED_CLUSTER_ADDON, addon, namespace=cluster)
                )
                assert found["metadata"]["name"] == addon

            # The registration goes: so does its Secret.
            await api.patch(
                ocm.MANAGED_CLUSTER_ADDON,
                addon,
                {"status": {"registrations": []}},
                namespace=cluster,
                subresource="status",
            )
            assert await eventually(lambda: gone(managed, f"{addon}-hub-kubeconfig"))
    finally:
        await managed.stop()


async def test_a_custom_signer_secret_and_its_removal_with_the_addon(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster, addon, signer = f"sig-{unique}", "signed", "example.com/signer1"
    managed = await embedded(tmp_path, "m")
    try:
        async with running_agent(api, hub, managed, cluster, addons=FAST):
            await create_addon(
                api,
                cluster,
                addon,
                {
                    "namespace": "addon-home",
                    "registrations": [
                        {
                            "type": "customSigner",
                            "customSigner": {
                                "signerName": signer,
                                "subject": {"groups": ["g1"], "organizationUnits": ["ou1"]},
                            },
                        }
                    ],
                },
            )
            [csr] = await eventually(lambda: addon_csrs(api, cluster, addon))
            assert csr["spec"]["signerName"] == signer
            request = load_csr(base64.b64decode(csr["spec"]["request"]))
            # The default user, the groups and units as given (no default group for a custom signer).
            assert common_name(request.subject) == f"{scope(cluster, addon)}:agent:{addon}"
            assert organizations(request.subject) == ("g1",)
            assert organizational_units(request.subject) == ("ou1",)
            # The hub's add-on manager signs custom-signer CSRs; the admin stands in for it.
            await approve(api, csr)
            certificate = _signed_for(csr)
            csr = await api.get(kinds.CSR, csr["metadata"]["name"])
            csr["status"]["certificate"] = base64.b64encode(certificate).decode()
            await api.update(kinds.CSR, csr, subresource="status")

            name = f"{addon}-example.com-signer1-client-cert"
            data = await eventually(lambda: secret(managed, name, "addon-home"))
            assert set(data) == {"tls.crt", "tls.key", "cluster-name"}
            home = await managed.api.get(kinds.NAMESPACE, "addon-home")
            assert home["metadata"]["annotations"]["workload.openshift.io/allowed"] == "management"

            await api.delete(ocm.MANAGED_CLUSTER_ADDON, addon, namespace=cluster)

            async def removed() -> bool:
                try:
                    await managed.api.get(kinds.SECRET, name, namespace="addon-home")
                except ApiError as err:
                    return err.code == 404
                return False

            assert await eventually(removed)
    finally:
        await managed.stop()


def _signed_for(csr: Obj) -> bytes:
    """A certificate for the CSR's key and subject, from a throwaway CA."""
    return sign_client_csr(
        CertificateAuthority.create("test-signer", valid_for=timedelta(days=1)),
        csr_pem=base64.b64decode(csr["spec"]["request"]),
        usages=csr["spec"]["usages"],
        expiration_seconds=None,
        max_ttl=timedelta(hours=24),
        now=datetime.now(UTC),
    )


async def test_available_follows_the_addons_lease_and_customized_is_left_alone(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster, addon = f"health-{unique}", "leased"
    managed = await embedded(tmp_path, "m")
    try:
        async with running_agent(api, hub, managed, cluster, addons=FAST):
            await create_addon(api, cluster, addon, {"healthCheck": {"mode": "Lease"}})

            async def available(status: str) -> Obj | None:
                found = await addon_condition(api, cluster, addon, wellknown.ADDON_AVAILABLE)
                return found if found.get("status") == status else None

            unknown = await eventually(lambda: available("Unknown"))
            assert unknown["reason"] == "ManagedClusterAddOnLeaseNotFound"
            assert unknown["message"] == f"The status of {addon} add-on is unknown."

            # The add-on agent renews its Lease in the install namespace (which the
            # agent creates only for a registration: here the test does).
            await managed.api.create(kinds.NAMESPACE, {"metadata": {"name": INSTALL_NS}})
            now = timefmt.format_micro(datetime.now(UTC))
            await managed.api.create(
                kinds.LEASE,
                {
                    "metadata": {"name": addon, "namespace": INSTALL_NS},
                    "spec": {"holderIdentity": addon, "renewTime": now},
                },
            )
            up = await eventually(lambda: available("True"))
            assert (up["reason"], up["message"]) == (
                "ManagedClusterAddOnLeaseUpdated",
                f"{addon} add-on is available.",
            )
            # Renewals stop: after the grace period (3 s here, 5 x 60 s upstream) it is not.
            down = await eventually(lambda: available("False"), timeout=20)
            assert (down["reason"], down["message"]) == (
                "ManagedClusterAddOnLeaseUpdateStopped",
                f"{addon} add-on is not available.",
            )

            # Customized: the add-on's manager reports; the agent's next passes leave it be.
            mine = {
                "type": "Available",
                "status": "True",
                "reason": "ProbeAvailable",
                "message": "by the manager",
                "lastTransitionTime": timefmt.format_time(datetime.now(UTC)),
            }
            current = await api.get(ocm.MANAGED_CLUSTER_ADDON, addon, namespace=cluster)
            others = [c for c in current["status"]["conditions"] if c["type"] != "Available"]
            await api.patch(
                ocm.MANAGED_CLUSTER_ADDON,
                addon,
                {"status": {"healthCheck": {"mode": "Customized"}, "conditions": [*others, mine]}},
                namespace=cluster,
                subresource="status",
            )
            # A second add-on in Lease mode: once the agent reported it, a pass over both ran
            # after the first one's change reached the agent (the watch keeps the order).
            await create_addon(api, cluster, "second", {})
            await eventually(
                lambda: addon_condition(api, cluster, "second", wellknown.ADDON_AVAILABLE)
            )
            assert await addon_condition(api, cluster, addon, wellknown.ADDON_AVAILABLE) == mine
    finally:
        await managed.stop()
