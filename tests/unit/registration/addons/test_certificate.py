"""One registration's worker: a certificate got is kept until its Secret can be written,
and no CSR is created while the hub holds 10 of the add-on's."""

from __future__ import annotations

import base64
from datetime import timedelta
from typing import Any

import pytest

from pyocm.api import models
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.api.models.coordination_v1 import Lease
from pyocm.base.clock import FakeClock
from pyocm.kube.status import ApiError
from pyocm.pki.ca import CertificateAuthority
from pyocm.pki.signer import sign_client_csr
from pyocm.registration.agent import credentials
from pyocm.registration.agent.addons import config
from pyocm.registration.agent.addons.certificate import AddOnCertificate, Context

Obj = dict[str, Any]
CA = CertificateAuthority.create("hub", valid_for=timedelta(days=400))


def registration() -> config.Registration:
    addon = models.view(
        ManagedClusterAddOn,
        {
            "metadata": {"name": "hello", "namespace": "c1"},
            "spec": {},
            "status": {"registrations": [{"type": "kubeClient", "kubeClient": {}}]},
        },
    )
    [found] = config.registrations(addon, cluster="c1").values()
    return found


class Hub:
    """CSRs approved and issued at once; ``existing`` others of the add-on listed."""

    def __init__(self, clock: FakeClock, existing: int = 0) -> None:
        self.clock = clock
        self.created: list[Obj] = []
        self.existing = existing

    async def create(self, kind: object, body: Obj) -> Obj:
        self.created.append(body)
        return self._issued(body)

    async def get(self, kind: object, name: str) -> Obj:
        [body] = [c for c in self.created if c["metadata"]["name"] == name]
        return self._issued(body)

    async def list_all(self, kind: object, *, labels: str) -> Obj:
        assert (
            labels
            == "open-cluster-management.io/cluster-name=c1,open-cluster-management.io/addon-name=hello"
        )
        return {"items": [{}] * (self.existing + len(self.created))}

    def _issued(self, body: Obj) -> Obj:
        cert = sign_client_csr(
            CA,
            csr_pem=base64.b64decode(body["spec"]["request"]),
            usages=body["spec"]["usages"],
            expiration_seconds=None,
            max_ttl=timedelta(hours=1),
            now=self.clock.now(),
        )
        status = {
            "conditions": [{"type": "Approved", "status": "True"}],
            "certificate": base64.b64encode(cert).decode(),
        }
        return {**body, "status": status}


class Host:
    def __init__(self) -> None:
        self.namespaces: set[str] = set()
        self.secrets: dict[tuple[str, str], dict[str, bytes]] = {}
        self.creatable = False

    async def ensure_namespace(self, name: str) -> None:
        if not self.creatable:
            raise ApiError(code=403, reason="Forbidden", message="no namespaces yet")
        self.namespaces.add(name)

    async def load_secret(self, namespace: str, name: str) -> dict[str, bytes] | None:
        return self.secrets.get((namespace, name))

    async def save_secret(self, namespace: str, name: str, data: dict[str, bytes]) -> None:
        assert namespace in self.namespaces
        self.secrets[(namespace, name)] = data

    async def delete_secret(self, namespace: str, name: str) -> None:
        self.secrets.pop((namespace, name), None)

    async def lease(self, namespace: str, name: str) -> Lease | None:
        return None


def worker(clock: FakeClock, host: Host, reports: list[tuple[str, str, str]]) -> AddOnCertificate:
    async def report(status: str, reason: str, message: str) -> None:
        reports.append((status, reason, message))

    hub = credentials.Hub(server="https://hub:6443", ca_pem=CA.cert_pem)
    context = Context(cluster="c1", hub=hub, host=host, clock=clock)
    return AddOnCertificate(registration(), context=context, report=report)


async def test_a_certificate_waits_for_its_namespace_without_a_new_csr() -> None:
    clock, host = FakeClock(), Host()
    reports: list[tuple[str, str, str]] = []
    hub = Hub(clock)
    cert = worker(clock, host, reports)
    with pytest.raises(ApiError):  # the namespace cannot be made yet
        await cert.sync(hub)  # type: ignore[arg-type]
    assert len(hub.created) == 1
    assert host.secrets == {}
    host.creatable = True
    assert await cert.sync(hub) == 0.0  # type: ignore[arg-type]
    assert len(hub.created) == 1, "the certificate got before is stored, not asked for again"
    data = host.secrets[("open-cluster-management-agent-addon", "hello-hub-kubeconfig")]
    assert set(data) == {"kubeconfig", "tls.crt", "tls.key", "cluster-name"}
    [(status, reason, message)] = reports
    assert (status, reason) == ("True", "ClientCertificateUpdated")
    # The signer backdates by 5 minutes; Go's time format, as upstream's message prints it.
    assert message == (
        "client certificate rotated starting from 2025-12-31 23:55:00 +0000 UTC "
        "to 2026-01-01 01:00:00 +0000 UTC"
    )
    # The next pass finds a good certificate and waits, at most upstream's 5 min resync.
    assert await cert.sync(hub) == 300.0  # type: ignore[arg-type]
    assert len(hub.created) == 1


async def test_rotation_is_due_at_the_threshold_and_asks_again() -> None:
    clock, host = FakeClock(), Host()
    reports: list[tuple[str, str, str]] = []
    host.creatable = True
    hub = Hub(clock)
    cert = worker(clock, host, reports)
    await cert.sync(hub)  # type: ignore[arg-type]
    clock.advance(3600 * 0.8)  # 20 % of the hour left: at or past every jittered threshold
    await cert.sync(hub)  # type: ignore[arg-type]
    assert len(hub.created) == 2
    assert [r[1] for r in reports] == ["ClientCertificateUpdated"] * 2


async def test_no_csr_is_created_while_ten_of_the_addons_exist() -> None:
    clock, host = FakeClock(), Host()
    reports: list[tuple[str, str, str]] = []
    hub = Hub(clock, existing=10)
    cert = worker(clock, host, reports)
    assert await cert.sync(hub) == 300.0  # type: ignore[arg-type]
    assert hub.created == []
    assert reports == [
        (
            "False",
            "ClientCertificateUpdateFailed",
            "Stop creating csr since there are too many csr created already on hub",
        )
    ]
