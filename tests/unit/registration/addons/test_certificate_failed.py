"""A CSR its signer failed (pyocm's hub fails add-on CSRs its CA cannot sign) is given up
by the add-on's worker: the key is dropped, ClusterCertificateRotated says why, and the
next pass, after a growing backoff, asks with a new CSR that can be signed."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.base.clock import FakeClock
from pyocm.kube.status import ApiError
from pyocm.pki import keys
from pyocm.pki.keys import generate_private_key
from pyocm.registration.agent import certs
from pyocm.registration.agent.csrflow import CsrFailed, request_certificate
from tests.unit.registration.addons.test_certificate import Host, Hub, worker

Obj = dict[str, Any]
SIGN_FAILED = "failed to sign addon csr {name}: the CA key does not match its certificate"


class FailingHub(Hub):
    """Fails the first ``failures`` CSRs created as pyocm's custom-signer signing does,
    then issues. A failed CSR stays on the hub until ``clean`` (the CSR cleaner) removes
    it; a CSR asked again after that is a new request."""

    def __init__(self, clock: FakeClock, *, failures: int) -> None:
        super().__init__(clock)
        self.failures = failures
        self.failed: set[str] = set()
        self.cleaned: set[str] = set()

    async def create(self, kind: object, body: Obj) -> Obj:
        name = body["metadata"]["name"]
        known = {c["metadata"]["name"] for c in self.created}
        if name in known and name not in self.cleaned:
            raise ApiError(code=409, reason="AlreadyExists", message=f"csr {name} exists")
        self.cleaned.discard(name)
        if len(self.created) < self.failures:
            self.failed.add(name)
        else:
            self.failed.discard(name)
        return await super().create(kind, body)

    async def get(self, kind: object, name: str) -> Obj:
        if name in self.cleaned:
            raise ApiError(code=404, reason="NotFound", message=f"csr {name} not found")
        body = [c for c in self.created if c["metadata"]["name"] == name][-1]
        return self._issued(body)

    def clean(self, name: str) -> None:
        self.cleaned.add(name)

    def _issued(self, body: Obj) -> Obj:
        name = body["metadata"]["name"]
        if name in self.failed:
            conditions = [
                {"type": "Approved", "status": "True"},
                {
                    "type": "Failed",
                    "status": "True",
                    "reason": "SignerFailure",
                    "message": SIGN_FAILED.format(name=name),
                },
            ]
            return {**body, "status": {"conditions": conditions}}
        return super()._issued(body)


class Clock(FakeClock):
    """Time moves by each pause the waiting agent takes, so nothing really waits; the
    hub's cleaner takes the failed CSR after the third pause."""

    def __init__(self, hub_clean: list[FailingHub]) -> None:
        super().__init__()
        self.pauses = 0
        self.hub_clean = hub_clean

    async def sleep(self, seconds: float) -> None:
        self.pauses += 1
        self.advance(seconds)
        if self.pauses == 3:
            [hub] = self.hub_clean
            hub.clean(hub.created[0]["metadata"]["name"])


async def test_a_failed_csr_is_given_up_only_when_asked() -> None:
    clean: list[FailingHub] = []
    clock = Clock(clean)
    hub = FailingHub(clock, failures=1)
    clean.append(hub)
    request = certs.Subject(cluster="c1", agent="abcde").request()
    key = generate_private_key()
    with pytest.raises(CsrFailed) as failed:
        await request_certificate(
            hub,  # type: ignore[arg-type]
            request,
            key,
            clock=clock,
            stop_on_failed=True,
        )
    name = request.csr_name(key)
    assert (failed.value.name, failed.value.message) == (name, SIGN_FAILED.format(name=name))
    assert clock.pauses == 0, "given up at once"

    # By default (the cluster agent's flow) a failed CSR is waited on, as upstream's
    # agent waits, until it is gone; asked again then, it is issued.
    pem = await request_certificate(hub, request, key, clock=clock)  # type: ignore[arg-type]
    assert certs.key_matches(certs.load_chain(pem)[0], key)
    assert clock.pauses == 3
    assert [c["metadata"]["name"] for c in hub.created] == [name, name]


async def test_the_worker_asks_again_with_a_new_csr_after_a_growing_backoff() -> None:
    clock, host = FakeClock(), Host()
    host.creatable = True
    reports: list[tuple[str, str, str]] = []
    hub = FailingHub(clock, failures=2)
    cert = worker(clock, host, reports)
    assert await cert.sync(hub) == 2.0  # type: ignore[arg-type]
    assert await cert.sync(hub) == 4.0  # type: ignore[arg-type]
    first, second = (body["metadata"]["name"] for body in hub.created)
    assert first != second, "each try is a new CSR with a new key"
    assert reports == [
        (
            "False",
            "ClientCertificateUpdateFailed",
            f"Failed to rotated client certificate csr {name} failed: "
            + SIGN_FAILED.format(name=name),
        )
        for name in (first, second)
    ]
    assert host.secrets == {}
    # The signer works again: the third CSR is issued and its Secret written.
    assert await cert.sync(hub) == 0.0  # type: ignore[arg-type]
    assert len(hub.created) == 3
    assert reports[-1][:2] == ("True", "ClientCertificateUpdated")
    data = host.secrets[("open-cluster-management-agent-addon", "hello-hub-kubeconfig")]
    [issued] = certs.load_chain(data["tls.crt"])
    assert certs.key_matches(issued, keys.load_private_key(data["tls.key"]))
    # The backoff starts over after a success.
    assert cert.failed_csrs == 0
