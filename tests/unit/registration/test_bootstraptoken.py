from __future__ import annotations

import re
import subprocess
from datetime import UTC, datetime, timedelta

import pytest

from pyocm.pki.ca import CertificateAuthority
from pyocm.registration import bootstraptoken


def test_generated_tokens_have_kubeadm_format_and_differ() -> None:
    tokens = {str(bootstraptoken.generate()) for _ in range(50)}
    assert len(tokens) == 50
    assert all(re.fullmatch(r"[a-z0-9]{6}\.[a-z0-9]{16}", token) for token in tokens)


def test_parse_round_trips() -> None:
    token = bootstraptoken.parse(" abcdef.0123456789abcdef\n")
    assert (token.id, token.secret, token.secret_name) == ("abcdef", "0123456789abcdef", "bootstrap-token-abcdef")
    assert str(token) == "abcdef.0123456789abcdef"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("abcdef0123456789abcdef", id="no-dot"),
        pytest.param("ABCDEF.0123456789abcdef", id="uppercase"),
        pytest.param("abcde.0123456789abcdefg", id="wrong-lengths"),
        pytest.param("abcdef.0123456789abcde!", id="bad-char"),
    ],
)
def test_parse_rejects_malformed_tokens_without_echoing_them(text: str) -> None:
    with pytest.raises(ValueError) as err:
        bootstraptoken.parse(text)
    assert text not in str(err.value)
    assert "abcdef.0123456789abcdef" in str(err.value)


def test_token_secret_matches_the_bootstrap_token_format() -> None:
    token = bootstraptoken.BootstrapToken(id="abcdef", secret="0123456789abcdef")
    now = datetime(2026, 11, 22, 10, 0, tzinfo=UTC)
    secret = bootstraptoken.token_secret(token, now=now, ttl=timedelta(minutes=90))
    assert secret["metadata"] == {
        "name": "bootstrap-token-abcdef",
        "namespace": "kube-system",
        # upstream's chart label, which clusteradm get token --use-bootstrap-token lists by
        "labels": {"app": "cluster-manager"},
    }
    assert secret["type"] == "bootstrap.kubernetes.io/token"
    assert secret["stringData"] == {
        "description": "pyocm bootstrap token for joining managed clusters",
        "token-id": "abcdef",
        "token-secret": "0123456789abcdef",
        "expiration": "2026-11-22T11:30:00Z",
        "usage-bootstrap-authentication": "true",
        "usage-bootstrap-signing": "true",
        "auth-extra-groups": "system:bootstrappers:managedcluster",
    }


def test_ca_cert_hash_agrees_with_the_openssl_recipe_kubeadm_documents() -> None:
    ca = CertificateAuthority.create("test-ca", valid_for=timedelta(days=1))
    expected = subprocess.run(
        "openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -hex",
        shell=True, input=ca.cert_pem, capture_output=True, check=True,
    ).stdout.decode().split("= ")[-1].strip()
    assert bootstraptoken.ca_cert_hash(ca.cert_pem) == f"sha256:{expected}"
    assert bootstraptoken.ca_matches(ca.cert_pem, f"sha256:{expected.upper()}")
    assert bootstraptoken.ca_matches(ca.cert_pem, expected)
    other = CertificateAuthority.create("other-ca", valid_for=timedelta(days=1))
    assert not bootstraptoken.ca_matches(other.cert_pem, f"sha256:{expected}")
    assert bootstraptoken.ca_matches(other.cert_pem + ca.cert_pem, f"sha256:{expected}")
