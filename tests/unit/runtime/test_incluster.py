"""In-cluster configuration: the pod's ServiceAccount mount and the Service's address,
read as client-go's InClusterConfig reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyocm.runtime import incluster
from pyocm.runtime.errors import ApiConnectionError


def mount(where: Path, *, token: str = "t0k3n") -> Path:
    where.mkdir()
    (where / "token").write_text(token)
    (where / "ca.crt").write_text("-----BEGIN CERTIFICATE-----\n")
    (where / "namespace").write_text("agents\n")
    return where


def test_the_service_and_the_mounted_account(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(incluster.DIR_ENV, str(mount(tmp_path / "sa")))
    monkeypatch.setenv(incluster.HOST_ENV, "10.96.0.1")
    monkeypatch.setenv(incluster.PORT_ENV, "443")
    assert incluster.available()
    picked = incluster.config()
    assert picked.cluster.server == "https://10.96.0.1:443"
    assert picked.cluster.certificate_auth == str(tmp_path / "sa" / "ca.crt")
    # The token is a file: a rotated one is read again when the server refuses the old.
    assert picked.user is not None and picked.user.token_file == str(tmp_path / "sa" / "token")
    assert incluster.namespace() == "agents"


def test_ipv6_service_addresses_are_bracketed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(incluster.DIR_ENV, str(mount(tmp_path / "sa")))
    monkeypatch.setenv(incluster.HOST_ENV, "fd00::1")
    monkeypatch.setenv(incluster.PORT_ENV, "6443")
    assert incluster.config().cluster.server == "https://[fd00::1]:6443"


def test_outside_a_cluster_or_without_the_mount_it_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(incluster.HOST_ENV, raising=False)
    monkeypatch.delenv(incluster.PORT_ENV, raising=False)
    assert not incluster.available()
    with pytest.raises(ApiConnectionError, match="KUBERNETES_SERVICE_HOST"):
        incluster.config()
    monkeypatch.setenv(incluster.HOST_ENV, "10.96.0.1")
    monkeypatch.setenv(incluster.PORT_ENV, "443")
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv(incluster.DIR_ENV, str(empty))
    with pytest.raises(ApiConnectionError, match=r"token does not exist"):
        incluster.config()
