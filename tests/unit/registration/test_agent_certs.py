"""The agent's certificate rules: deterministic CSR names, the rotation window, and
when a stored credential still serves (same hub, same subject, unexpired)."""

from __future__ import annotations

import base64
import random
from datetime import UTC, datetime, timedelta

from cryptography import x509

from pyocm.pki.ca import CertificateAuthority
from pyocm.pki.csr import load_csr, read_subject
from pyocm.pki.keys import generate_private_key, private_key_to_pem
from pyocm.registration.agent import certs, credentials

SUBJECT = certs.Subject(cluster="c1", agent="abcde")


def test_csr_name_depends_on_subject_and_key_only() -> None:
    key = generate_private_key()
    assert certs.csr_name(SUBJECT, key) == certs.csr_name(SUBJECT, key)
    assert certs.csr_name(SUBJECT, key).startswith("c1-")
    assert certs.csr_name(SUBJECT, key) != certs.csr_name(SUBJECT, generate_private_key())
    assert certs.csr_name(SUBJECT, key) != certs.csr_name(certs.Subject("c1", "other"), key)
    body = certs.csr_object(SUBJECT, key, expiration_seconds=3600)
    assert body["spec"]["expirationSeconds"] == 3600  # type: ignore[index]
    assert body["spec"]["usages"] == ["digital signature", "key encipherment", "client auth"]  # type: ignore[index]


def test_rotation_threshold_is_between_twenty_and_twenty_five_percent() -> None:
    rng = random.Random(7)
    values = [certs.rotation_threshold(rng) for _ in range(1000)]
    assert min(values) >= 0.2 and max(values) < 0.25


def issue(
    ca: CertificateAuthority, subject: certs.Subject, *, now: datetime, hours: int = 10
) -> bytes:
    cert, _ = ca.issue_client(
        common_name=subject.common_name,
        organizations=subject.organizations,
        valid_for=timedelta(hours=hours),
        now=now,
    )
    return cert


def test_rotation_is_due_when_a_fifth_of_life_is_left() -> None:
    ca = CertificateAuthority.create("hub", valid_for=timedelta(days=10))
    start = datetime.now(UTC)
    chain = certs.load_chain(issue(ca, SUBJECT, now=start))
    due = certs.rotation_due(chain, now=start, threshold=0.2)
    life = chain[0].not_valid_after_utc - chain[0].not_valid_before_utc
    assert due == chain[0].not_valid_after_utc - life * 0.2


def test_stored_credential_serves_only_its_hub_subject_and_lifetime() -> None:
    ca = CertificateAuthority.create("hub", valid_for=timedelta(days=10))
    now = datetime.now(UTC)
    key = generate_private_key()
    hub = credentials.Hub(server="https://hub.example.com:6443", ca_pem=ca.cert_pem)
    data = credentials.secret_data(
        hub, subject=SUBJECT, cert_pem=issue(ca, SUBJECT, now=now), key_pem=private_key_to_pem(key)
    )
    assert credentials.valid(data, hub=hub, subject=SUBJECT, now=now)
    assert not credentials.valid(
        data, hub=credentials.Hub("https://elsewhere:6443", ca.cert_pem), subject=SUBJECT, now=now
    )
    other_ca = CertificateAuthority.create("other", valid_for=timedelta(days=1))
    assert not credentials.valid(
        data, hub=credentials.Hub(hub.server, other_ca.cert_pem), subject=SUBJECT, now=now
    )
    assert not credentials.valid(data, hub=hub, subject=certs.Subject("c2", "abcde"), now=now)
    assert not credentials.valid(data, hub=hub, subject=SUBJECT, now=now + timedelta(hours=11))
    assert not credentials.valid({**data, "tls.crt": b"garbage"}, hub=hub, subject=SUBJECT, now=now)


def test_an_addon_request_carries_upstreams_subject_labels_and_signer() -> None:
    key = generate_private_key()
    request = certs.addon_request(
        cluster="c1", addon="helloworld", signer="example.com/signer1", expiration_seconds=600
    )
    body = request.csr_object(key)
    meta, spec = body["metadata"], body["spec"]
    assert meta["name"].startswith("addon-c1-helloworld-")  # type: ignore[index]
    assert meta["labels"] == {  # type: ignore[index]
        "open-cluster-management.io/cluster-name": "c1",
        "open-cluster-management.io/addon-name": "helloworld",
    }
    assert spec["signerName"] == "example.com/signer1"  # type: ignore[index]
    assert spec["expirationSeconds"] == 600  # type: ignore[index]
    name, groups = read_subject(base64.b64decode(spec["request"]))  # type: ignore[index]
    assert name == "system:open-cluster-management:cluster:c1:addon:helloworld:agent:helloworld"
    assert groups == ("system:open-cluster-management:cluster:c1:addon:helloworld",)
    assert load_csr(base64.b64decode(spec["request"])).extensions.get_extension_for_class(  # type: ignore[index]
        x509.SubjectAlternativeName
    ).value.get_values_for_type(x509.DNSName) == ["helloworld.addon.open-cluster-management.io"]


def test_the_cluster_request_keeps_its_csr_name_and_body() -> None:
    """Parametrising the request changed nothing for the cluster agent: a CSR pending
    from before is found again by name."""
    key = generate_private_key()
    request = SUBJECT.request(expiration_seconds=3600)
    assert request.csr_name(key) == certs.csr_name(SUBJECT, key)
    assert request.signer == "kubernetes.io/kube-apiserver-client"
    body = request.csr_object(key)
    assert body["metadata"]["labels"] == {"open-cluster-management.io/cluster-name": "c1"}  # type: ignore[index]
