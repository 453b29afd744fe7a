"""An add-on's Secret: its keys, its kubeconfig, and when its certificate is replaced."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml

from pyocm.api import models
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.pki.ca import CertificateAuthority
from pyocm.pki.keys import generate_private_key, private_key_to_pem
from pyocm.pki.kubeconfig import parse_kubeconfig
from pyocm.pki.signer import sign_client_csr
from pyocm.registration.agent import credentials
from pyocm.registration.agent.addons import config, secrets

T0 = datetime(2026, 1, 1, tzinfo=UTC)
HUB = credentials.Hub(server="https://hub.example:6443", ca_pem=b"-----CA-----\n")


def registration(entry: dict[str, Any]) -> config.Registration:
    addon = models.view(
        ManagedClusterAddOn,
        {
            "metadata": {"name": "hello", "namespace": "c1"},
            "spec": {},
            "status": {"registrations": [entry]},
        },
    )
    [found] = config.registrations(addon, cluster="c1").values()
    return found


KUBE = registration({"type": "kubeClient", "kubeClient": {}})
CUSTOM = registration(
    {
        "type": "customSigner",
        "customSigner": {"signerName": "a.io/s", "subject": {"organizationUnits": ["ou"]}},
    }
)


def issued(reg: config.Registration, *, hours: int = 10) -> dict[str, bytes]:
    """A Secret's data with a certificate for ``reg``'s request, issued at T0."""
    key = generate_private_key()
    csr = reg.request.csr_object(key)
    cert = sign_client_csr(
        CertificateAuthority.create("ca", valid_for=timedelta(days=30), now=T0 - timedelta(days=1)),
        csr_pem=base64.b64decode(csr["spec"]["request"]),
        usages=csr["spec"]["usages"],
        expiration_seconds=hours * 3600,
        max_ttl=timedelta(hours=hours),
        now=T0,
    )
    return secrets.secret_data(
        cert_pem=cert,
        key_pem=private_key_to_pem(key),
        additional=secrets.additional_data(reg, cluster="c1", hub=HUB),
    )


def test_the_kubeconfig_is_upstreams_and_names_the_certificate_files_beside_it() -> None:
    data = secrets.additional_data(KUBE, cluster="c1", hub=HUB)
    assert set(data) == {"kubeconfig", "cluster-name"}
    config_ = yaml.safe_load(data["kubeconfig"])
    assert config_["current-context"] == "default-context"
    [context] = config_["contexts"]
    assert context["context"]["namespace"] == "configuration"
    assert context["context"]["user"] == "default-auth"
    [user] = config_["users"]
    assert user == {
        "name": "default-auth",
        "user": {"client-certificate": "tls.crt", "client-key": "tls.key"},
    }
    [cluster] = config_["clusters"]
    assert cluster["cluster"]["server"] == HUB.server
    assert base64.b64decode(cluster["cluster"]["certificate-authority-data"]) == HUB.ca_pem


def test_a_custom_signer_secret_has_no_kubeconfig() -> None:
    assert secrets.additional_data(CUSTOM, cluster="c1", hub=HUB) == {"cluster-name": b"c1"}


def test_the_kubeconfig_reads_the_secret_as_mounted(tmp_path: Any) -> None:
    data = issued(KUBE)
    for key, value in data.items():
        (tmp_path / key).write_bytes(value)
    info = parse_kubeconfig(data["kubeconfig"].decode(), base_dir=tmp_path)
    assert (info.cert_pem, info.key_pem) == (data["tls.crt"], data["tls.key"])


def reason(data: dict[str, bytes], reg: config.Registration, now: datetime) -> str | None:
    additional = secrets.additional_data(reg, cluster="c1", hub=HUB)
    return secrets.renewal_reason(data, reg, additional=additional, now=now, threshold=0.2)


def test_a_certificate_is_asked_for_in_upstreams_order() -> None:
    assert reason({}, KUBE, T0) == secrets.INVALID
    good = issued(KUBE)
    assert reason(good, KUBE, T0) is None
    # A certificate for another subject (here: without the custom signer's OU).
    assert reason(issued(KUBE), CUSTOM, T0) == secrets.NO_VALID
    assert reason(issued(CUSTOM), CUSTOM, T0) is None
    assert reason({**good, "cluster-name": b"other"}, KUBE, T0) == secrets.DATA_CHANGED
    without = {k: v for k, v in good.items() if k != "kubeconfig"}
    assert reason(without, KUBE, T0) == secrets.DATA_CHANGED
    assert reason(good, KUBE, T0 + timedelta(days=1)) == secrets.NO_VALID  # expired


def test_rotation_starts_when_the_threshold_of_the_life_is_left() -> None:
    data = issued(KUBE, hours=10)
    due = secrets.renewal_due(data, now=T0, threshold=0.2)
    assert reason(data, KUBE, due - timedelta(seconds=1)) is None
    assert reason(data, KUBE, due) == secrets.ROTATION
    assert secrets.renewal_due({}, now=T0, threshold=0.2) == T0
