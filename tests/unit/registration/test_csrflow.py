"""How the agent waits for its certificate when it cannot hold a watch: reads that back
off, so thousands of renewing agents do not crowd out the renewals themselves."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from pyocm.pki.ca import CertificateAuthority
from pyocm.pki.keys import generate_private_key
from pyocm.pki.signer import sign_client_csr
from pyocm.registration.agent import certs, csrflow
from pyocm.registration.agent.csrflow import request_certificate

Obj = dict[str, Any]


class Clock:
    def __init__(self) -> None:
        self.sleeps: list[float] = []

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


class Hub:
    """Answers the CSR as pending until ``pending_reads`` reads have been made."""

    def __init__(self, pending_reads: int) -> None:
        self.pending_reads = pending_reads
        self.reads = 0
        self.csr: Obj = {}
        self.ca = CertificateAuthority.create("hub", valid_for=timedelta(days=1))

    async def create(self, kind: object, body: Obj) -> Obj:
        self.csr = {**body, "metadata": {**body["metadata"], "resourceVersion": "1"}}
        return self.csr

    async def get(self, kind: object, name: str) -> Obj:
        self.reads += 1
        if self.reads <= self.pending_reads:
            return self.csr
        cert = sign_client_csr(
            self.ca,
            csr_pem=base64.b64decode(self.csr["spec"]["request"]),
            usages=self.csr["spec"]["usages"],
            expiration_seconds=None,
            max_ttl=timedelta(hours=1),
            now=datetime.now(UTC),
        )
        status = {
            "conditions": [{"type": "Approved", "status": "True"}],
            "certificate": base64.b64encode(cert).decode(),
        }
        return {**self.csr, "status": status}


async def test_polling_backs_off_to_32_times_the_poll_interval_with_jitter(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    extremes = iter([0.8, 1.2] * 4)

    def uniform(low: float, high: float) -> float:
        assert (low, high) == pytest.approx((0.8, 1.2))  # ±20 %
        return next(extremes)  # each extreme in turn

    monkeypatch.setattr(csrflow.random, "uniform", uniform)
    hub, clock = Hub(pending_reads=7), Clock()
    key = generate_private_key()
    pem = await request_certificate(
        hub,  # type: ignore[arg-type]
        certs.Subject(cluster="c1", agent="abcde").request(),
        key,
        clock=clock,  # type: ignore[arg-type]
        poll=1.0,
    )
    assert certs.key_matches(certs.load_chain(pem)[0], key)
    # The create's answer is the first look: no read right after it.
    planned = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 32.0, 32.0]
    assert clock.sleeps == pytest.approx(
        [p * j for p, j in zip(planned, [0.8, 1.2] * 4, strict=True)]
    )
    assert hub.reads == 8


class EndingWatches(Hub):
    """A hub whose watches end at once, as every watch does while a hub shuts down."""

    def __init__(self, pending_reads: int) -> None:
        super().__init__(pending_reads)
        self.watches = 0

    async def watch(self, kind: object, **options: Any) -> AsyncIterator[tuple[str, Obj]]:
        self.watches += 1
        return
        yield  # an async generator that yields nothing


async def test_a_watch_that_ends_at_once_is_not_retried_in_a_tight_loop() -> None:
    hub, clock = EndingWatches(pending_reads=2), Clock()
    await request_certificate(
        hub,  # type: ignore[arg-type]
        certs.Subject(cluster="c1", agent="abcde").request(),
        generate_private_key(),
        clock=clock,  # type: ignore[arg-type]
        poll=1.0,
        watch=True,
    )
    assert hub.watches == 3 and clock.sleeps == [1.0, 1.0, 1.0]
