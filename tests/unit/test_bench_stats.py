"""Reading the hub's request-duration histogram and certificates for the fleet report."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta

import pytest

from pyocm.bench.fleet import issued_at
from pyocm.bench.stats import bucketed, request_buckets
from pyocm.pki import keys, signer
from pyocm.pki.ca import CertificateAuthority
from pyocm.pki.csr import build_csr

SERIES = (
    'apiserver_request_duration_seconds_bucket{{resource="leases",verb="{verb}",le="{le}"}} {n}'
)


def exposition(verb: str, counts: dict[str, int]) -> str:
    return "\n".join(SERIES.format(verb=verb, le=le, n=n) for le, n in counts.items())


def test_buckets_sum_the_matching_series_only() -> None:
    text = "\n".join(
        [
            "# TYPE apiserver_request_duration_seconds histogram",
            exposition("PUT", {"0.005": 3, "0.05": 4, "+Inf": 5}),
            exposition("GET", {"0.005": 100, "0.05": 100, "+Inf": 100}),
            'apiserver_request_total{resource="leases",verb="PUT",code="200"} 5',
        ]
    )
    assert request_buckets(text, verb="PUT") == {"0.005": 3, "0.05": 4, "+Inf": 5}
    assert request_buckets(text, resource="leases")["+Inf"] == 105
    assert request_buckets(text, verb="DELETE") == {}


def test_quantiles_are_the_buckets_they_fall_in_between_two_readings() -> None:
    before = {"0.005": 50.0, "0.025": 50.0, "0.05": 50.0, "+Inf": 50.0}
    after = {"0.005": 140.0, "0.025": 148.0, "0.05": 149.0, "+Inf": 150.0}
    # 100 requests in between: 90 within 5 ms, 98 within 25, 99 within 50, one slower.
    assert (
        bucketed(before, after, within=0.05) == "n=100 p50 ≤ 5 ms, p99 ≤ 50 ms; 99.0 % within 50 ms"
    )
    slow = {"0.005": 50.0, "0.025": 50.0, "0.05": 50.0, "+Inf": 150.0}
    assert (
        bucketed(before, slow, within=0.05) == "n=100 p50 > 50 ms, p99 > 50 ms; 0.0 % within 50 ms"
    )
    assert bucketed(before, before, within=0.05) == "n=0"
    with pytest.raises(ValueError, match="not a bucket bound"):
        bucketed(before, after, within=0.04)


def test_a_certificate_tells_when_the_hub_signed_it() -> None:
    moment = datetime(2026, 11, 25, 7, 30, 12, 654321, tzinfo=UTC)
    ca = CertificateAuthority.create("hub", valid_for=timedelta(days=1), now=moment)
    key = keys.generate_private_key()
    pem = signer.sign_client_csr(
        ca,
        csr_pem=build_csr(key, common_name="agent"),
        usages=["client auth"],
        expiration_seconds=None,
        max_ttl=timedelta(hours=1),
        now=moment,
    )
    assert issued_at(base64.b64encode(pem).decode()) == moment.replace(microsecond=0)
