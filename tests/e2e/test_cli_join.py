"""``pyocm join``, ``pyocm unjoin`` and ``pyocm hub`` failing early and stopping as a
person expects: real processes, their output, exit codes and what they leave on disk."""

from __future__ import annotations

import signal
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyocm.registration import bootstraptoken
from pyocm.testing import HubProcess
from tests.cli import Running, pyocm


@pytest.fixture
def isolated(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An environment whose default data dirs are inside the test's folder."""
    yield {"XDG_DATA_HOME": str(tmp_path / "xdg"), "KUBECONFIG": ""}


def _join_args(hub: HubProcess, *, token: str, name: str) -> list[str]:
    return [
        "join",
        "--hub-token",
        token,
        "--hub-apiserver",
        hub.url,
        "--ca-cert-hash",
        bootstraptoken.ca_cert_hash(hub.ca_pem),
        "--cluster-name",
        name,
    ]


def _made_token(hub: HubProcess, env: dict[str, str]) -> str:
    made = pyocm("get", "token", "--kubeconfig", str(hub.kubeconfig), env=env)
    assert made.returncode == 0, made.stderr
    return made.stdout.split("--hub-token ")[1].split()[0]


def test_a_bad_cluster_name_or_token_form_fails_before_anything_is_created(
    ocm_hub: HubProcess, tmp_path: Path, isolated: dict[str, str]
) -> None:
    token = _made_token(ocm_hub, isolated)
    data = tmp_path / "managed"
    bad_name = pyocm(
        *_join_args(ocm_hub, token=token, name="Bad_Name"), "--data-dir", str(data), env=isolated
    )
    assert bad_name.returncode == 2, bad_name.stderr
    # upstream's agent message (pkg/common/options/agent.go), naming the flag
    assert bad_name.stderr.startswith(
        "error: --cluster-name: metadata.name format is not correct: a lowercase RFC 1123 label"
    ), bad_name.stderr
    assert len(bad_name.stderr.strip().splitlines()) == 1
    assert "started an embedded" not in bad_name.stdout and "identified" not in bad_name.stdout
    malformed = pyocm(
        *_join_args(ocm_hub, token="not-a-token", name="fine"),
        "--data-dir",
        str(data),
        env=isolated,
    )
    assert malformed.returncode == 2 and "--hub-token: the token must look like" in malformed.stderr
    assert not data.exists() and not (tmp_path / "xdg").exists()


def test_a_token_the_hub_refuses_fails_before_the_cluster_starts(
    ocm_hub: HubProcess, tmp_path: Path, isolated: dict[str, str], unique: str
) -> None:
    wrong = str(bootstraptoken.generate())  # well formed, never stored on the hub
    data = tmp_path / "managed"
    refused = pyocm(
        *_join_args(ocm_hub, token=wrong, name=f"wrong-{unique}"),
        "--data-dir",
        str(data),
        env=isolated,
    )
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "refused the bootstrap credential" in refused.stderr
    assert "get a new one with 'pyocm get token'" in refused.stderr
    assert refused.stdout == ""  # no "started an embedded managed cluster", no "identified"
    assert not data.exists() and not (tmp_path / "xdg").exists()


def test_join_says_it_stopped_and_unjoin_finds_its_data_dir(
    ocm_hub: HubProcess, tmp_path: Path, isolated: dict[str, str], unique: str
) -> None:
    name = f"dir-{unique}"
    token = _made_token(ocm_hub, isolated)
    data = tmp_path / "elsewhere"
    joined = Running(
        *_join_args(ocm_hub, token=token, name=name), "--data-dir", str(data), env=isolated
    )
    try:
        joined.wait_for(f"{name}: waiting for the hub admin to accept")
    finally:
        code = joined.stop(signal.SIGINT)
    assert code == 0, "\n".join(joined.lines[-20:])
    assert joined.lines[-1] == "pyocm join stopped"

    # No --data-dir: unjoin opens the cluster join kept in D, rather than looking in the
    # default directory only (the agent's secret there holds its names so far).
    found = pyocm("unjoin", "--cluster-name", name, env=isolated)
    assert found.returncode == 0, found.stderr
    assert f"{name} no longer holds a hub credential" in found.stdout
    assert not (tmp_path / "xdg" / "pyocm" / "clusters" / name).exists()
    missing = pyocm("unjoin", "--cluster-name", f"other-{unique}", env=isolated)
    assert missing.returncode == 1
    assert "pass --data-dir if it was joined with one" in missing.stderr, missing.stderr


def test_a_hub_that_cannot_bind_its_port_writes_nothing(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        data = tmp_path / "hub"
        busy = pyocm("hub", "--listen", f"127.0.0.1:{port}", "--data-dir", str(data))
    assert busy.returncode == 1, busy.stdout + busy.stderr
    lines = busy.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"error: cannot listen on 127.0.0.1:{port}: Address already in use"
    ), busy.stderr
    assert not (data / "pki").exists() and not (data / "state.db").exists()
    assert not data.exists()
