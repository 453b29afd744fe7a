from __future__ import annotations

import base64
import os
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped,unused-ignore]

from pyocm.pki import kubeconfig

CA = b"-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n"
CERT = b"-----BEGIN CERTIFICATE-----\nLEAF\n-----END CERTIFICATE-----\n"
KEY = b"-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n"
SERVER = "https://127.0.0.1:6443"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_build_with_client_certificate() -> None:
    config = kubeconfig.build_kubeconfig(server=SERVER, ca_pem=CA, cert_pem=CERT, key_pem=KEY)

    assert config == {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "default-cluster",
                "cluster": {"server": SERVER, "certificate-authority-data": _b64(CA)},
            }
        ],
        "contexts": [
            {
                "name": "default-context",
                "context": {"cluster": "default-cluster", "user": "default-auth"},
            }
        ],
        "current-context": "default-context",
        "preferences": {},
        "users": [
            {
                "name": "default-auth",
                "user": {"client-certificate-data": _b64(CERT), "client-key-data": _b64(KEY)},
            }
        ],
    }


def test_certificate_round_trip_through_yaml() -> None:
    config = kubeconfig.build_kubeconfig(
        server=SERVER, ca_pem=CA, cert_pem=CERT, key_pem=KEY, namespace="open-cluster-management"
    )

    text = kubeconfig.render_kubeconfig(config)

    assert yaml.safe_load(text) == config
    assert text == yaml.safe_dump(config, default_flow_style=False, sort_keys=False)
    assert text.startswith("apiVersion: v1\nkind: Config\n")
    assert kubeconfig.parse_kubeconfig(text) == kubeconfig.KubeconfigInfo(
        server=SERVER, ca_pem=CA, cert_pem=CERT, key_pem=KEY, token=None, insecure=False
    )


def test_token_round_trip() -> None:
    config = kubeconfig.build_kubeconfig(server=SERVER, ca_pem=CA, token="abc.def")

    assert config["users"][0]["user"] == {"token": "abc.def"}
    info = kubeconfig.parse_kubeconfig(kubeconfig.render_kubeconfig(config))
    assert info == kubeconfig.KubeconfigInfo(
        server=SERVER, ca_pem=CA, cert_pem=None, key_pem=None, token="abc.def", insecure=False
    )


def test_insecure_round_trip() -> None:
    config = kubeconfig.build_kubeconfig(server=SERVER, token="t", insecure=True)

    assert config["clusters"][0]["cluster"] == {"server": SERVER, "insecure-skip-tls-verify": True}
    info = kubeconfig.parse_kubeconfig(kubeconfig.render_kubeconfig(config))
    assert info.insecure is True
    assert info.ca_pem is None


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param({}, "exactly one of a client certificate or a token", id="no-credential"),
        pytest.param(
            {"cert_pem": CERT, "key_pem": KEY, "token": "t"},
            "exactly one of a client certificate or a token",
            id="two-credentials",
        ),
        pytest.param({"cert_pem": CERT}, "must be given together", id="cert-without-key"),
        pytest.param({"key_pem": KEY}, "must be given together", id="key-without-cert"),
        pytest.param(
            {"token": "t", "ca_pem": CA, "insecure": True},
            "specifying a root certificates file with the insecure flag is not allowed",
            id="insecure-with-ca",
        ),
    ],
)
def test_build_refuses(options: dict[str, Any], message: str) -> None:
    with pytest.raises(kubeconfig.KubeconfigError, match=message):
        kubeconfig.build_kubeconfig(server=SERVER, **options)


def test_write_uses_mode_0600_and_replaces_existing_files(tmp_path: Path) -> None:
    target = tmp_path / "nested" / "kubeconfig"
    target.parent.mkdir()
    target.write_text("old")
    os.chmod(target, 0o644)
    config = kubeconfig.build_kubeconfig(server=SERVER, ca_pem=CA, cert_pem=CERT, key_pem=KEY)

    kubeconfig.write_kubeconfig(target, config)

    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert kubeconfig.load_kubeconfig(target).cert_pem == CERT
    assert sorted(p.name for p in target.parent.iterdir()) == ["kubeconfig"]


def test_write_creates_missing_folders(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "hub-kubeconfig"

    kubeconfig.write_kubeconfig(target, kubeconfig.build_kubeconfig(server=SERVER, token="t"))

    assert kubeconfig.load_kubeconfig(target).token == "t"


def _write_yaml(path: Path, config: dict[str, Any]) -> None:
    path.write_text(yaml.safe_dump(config))


def _config(*, cluster: dict[str, Any], user: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "hub", "cluster": cluster}],
        "users": [{"name": "agent", "user": user}],
        "contexts": [{"name": "ctx", "context": {"cluster": "hub", "user": "agent"}}],
        "current-context": "ctx",
    }


def test_relative_file_paths_resolve_against_the_kubeconfig_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "config"
    (folder / "certs").mkdir(parents=True)
    (folder / "certs" / "ca.crt").write_bytes(CA)
    (folder / "certs" / "tls.crt").write_bytes(CERT)
    (tmp_path / "tls.key").write_bytes(KEY)
    config = _config(
        cluster={"server": SERVER, "certificate-authority": "certs/ca.crt"},
        user={"client-certificate": "certs/tls.crt", "client-key": str(tmp_path / "tls.key")},
    )
    _write_yaml(folder / "kubeconfig", config)
    monkeypatch.chdir(tmp_path)

    info = kubeconfig.load_kubeconfig(folder / "kubeconfig")

    assert (info.ca_pem, info.cert_pem, info.key_pem) == (CA, CERT, KEY)


def test_token_file_is_read_and_trimmed(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("  secret-token\n")
    _write_yaml(
        tmp_path / "kubeconfig",
        _config(cluster={"server": SERVER}, user={"tokenFile": "token"}),
    )

    assert kubeconfig.load_kubeconfig(tmp_path / "kubeconfig").token == "secret-token"


def test_token_wins_over_token_file() -> None:
    config = _config(cluster={"server": SERVER}, user={"token": "inline", "tokenFile": "/missing"})

    assert kubeconfig.parse_kubeconfig(yaml.safe_dump(config)).token == "inline"


def test_explicit_context_overrides_current_context() -> None:
    config = _config(cluster={"server": SERVER}, user={"token": "a"})
    config["clusters"].append({"name": "other", "cluster": {"server": "https://other:443"}})
    config["users"].append({"name": "other-user", "user": {"token": "b"}})
    config["contexts"].append(
        {"name": "second", "context": {"cluster": "other", "user": "other-user"}}
    )
    text = yaml.safe_dump(config)

    current = kubeconfig.parse_kubeconfig(text)
    chosen = kubeconfig.parse_kubeconfig(text, context="second")

    assert (current.server, current.token) == (SERVER, "a")
    assert (chosen.server, chosen.token) == ("https://other:443", "b")


def _broken(change: str) -> dict[str, Any]:
    config = _config(cluster={"server": SERVER}, user={"token": "t"})
    if change == "no-current-context":
        del config["current-context"]
    elif change == "unknown-context":
        config["current-context"] = "nope"
    elif change == "unknown-cluster":
        config["contexts"][0]["context"]["cluster"] = "gone"
    elif change == "unknown-user":
        config["contexts"][0]["context"]["user"] = "gone"
    elif change == "no-server":
        config["clusters"][0]["cluster"] = {}
    elif change == "cert-data-and-path":
        config["users"][0]["user"] = {
            "client-certificate-data": _b64(CERT),
            "client-certificate": "tls.crt",
            "client-key-data": _b64(KEY),
        }
    elif change == "cert-without-key":
        config["users"][0]["user"] = {"client-certificate-data": _b64(CERT)}
    elif change == "bad-base64":
        config["clusters"][0]["cluster"]["certificate-authority-data"] = "%%%"
    elif change == "insecure-with-ca":
        config["clusters"][0]["cluster"]["certificate-authority-data"] = _b64(CA)
        config["clusters"][0]["cluster"]["insecure-skip-tls-verify"] = True
    return config


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            "no-current-context",
            "invalid configuration: no context chosen",
            id="no-current-context",
        ),
        pytest.param(
            "unknown-context",
            "invalid configuration: context was not found for specified context: nope",
            id="unknown-context",
        ),
        pytest.param(
            "unknown-cluster",
            'invalid configuration: cluster "gone" was not found for context "ctx"',
            id="unknown-cluster",
        ),
        pytest.param(
            "unknown-user",
            'invalid configuration: user "gone" was not found for context "ctx"',
            id="unknown-user",
        ),
        pytest.param(
            "no-server",
            'invalid configuration: no server found for cluster "hub"',
            id="no-server",
        ),
        pytest.param(
            "cert-data-and-path",
            "client-certificate-data and client-certificate are both specified",
            id="cert-data-and-path",
        ),
        pytest.param(
            "cert-without-key",
            "client-key-data or client-key must be specified with a certificate",
            id="cert-without-key",
        ),
        pytest.param(
            "bad-base64", "certificate-authority-data is not valid base64", id="bad-base64"
        ),
        pytest.param(
            "insecure-with-ca",
            "specifying a root certificates file with the insecure flag is not allowed",
            id="insecure-with-ca",
        ),
    ],
)
def test_parse_refuses(change: str, message: str) -> None:
    with pytest.raises(kubeconfig.KubeconfigError) as caught:
        kubeconfig.parse_kubeconfig(yaml.safe_dump(_broken(change)))

    assert str(caught.value) == message


def test_invalid_yaml_does_not_echo_the_document() -> None:
    text = "users:\n- user:\n    token: super-secret\n  bad: [unclosed\n"

    with pytest.raises(kubeconfig.KubeconfigError) as caught:
        kubeconfig.parse_kubeconfig(text)

    assert str(caught.value) == "kubeconfig is not valid YAML"
    assert caught.value.__cause__ is None


def test_non_mapping_document_is_refused() -> None:
    with pytest.raises(kubeconfig.KubeconfigError, match="must be a YAML mapping"):
        kubeconfig.parse_kubeconfig("- just\n- a list\n")


def test_missing_files_are_reported(tmp_path: Path) -> None:
    with pytest.raises(kubeconfig.KubeconfigError, match="unable to read kubeconfig"):
        kubeconfig.load_kubeconfig(tmp_path / "absent")
    _write_yaml(
        tmp_path / "kubeconfig",
        _config(cluster={"server": SERVER, "certificate-authority": "ca.crt"}, user={}),
    )
    with pytest.raises(kubeconfig.KubeconfigError, match="unable to read certificate-authority"):
        kubeconfig.load_kubeconfig(tmp_path / "kubeconfig")
