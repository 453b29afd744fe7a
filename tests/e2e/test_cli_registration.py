"""The registration commands as a person runs them: real processes, real TLS, kubectl."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyocm.testing import HubProcess
from tests.cli import Running, pyocm


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    """These tests need the hub's controllers."""
    return ocm_hub


@pytest.fixture
def isolated(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An environment whose default data dirs are inside the test's folder."""
    yield {"XDG_DATA_HOME": str(tmp_path / "xdg"), "KUBECONFIG": ""}


def test_up_starts_a_fleet_that_kubectl_sees(tmp_path: Path, isolated: dict[str, str]) -> None:
    up = Running(
        "up",
        "--clusters",
        "2",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        str(tmp_path / "up"),
        env=isolated,
    )
    try:
        up.wait_for("Press Ctrl-C to stop", timeout=90)
        kubeconfig = tmp_path / "up" / "hub" / "admin.kubeconfig"
        got = subprocess.run(
            ["kubectl", "--kubeconfig", str(kubeconfig), "get", "managedclusters", "-o", "json"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        items = json.loads(got.stdout)["items"]
        assert sorted(item["metadata"]["name"] for item in items) == ["cluster1", "cluster2"]
        for item in items:
            available = [
                c
                for c in item["status"]["conditions"]
                if c["type"] == "ManagedClusterConditionAvailable"
            ]
            assert available[0]["status"] == "True"
        listed = pyocm("get", "clusters", "--kubeconfig", str(kubeconfig), env=isolated)
        assert listed.returncode == 0, listed.stderr
        assert re.search(
            r"cluster1\s+true\s+True\s+True\s+\S+\s+\S+\s+2\s+simulated", listed.stdout
        ), listed.stdout
    finally:
        code = up.stop()
    assert code == 0, "\n".join(up.lines[-20:])
    assert "pyocm up stopped" in up.lines


def test_token_join_accept_deny_unjoin(
    hub: HubProcess, tmp_path: Path, isolated: dict[str, str], unique: str
) -> None:
    name = f"cli-{unique}"
    kubeconfig = str(hub.kubeconfig)
    token = pyocm("get", "token", "--kubeconfig", kubeconfig, env=isolated)
    assert token.returncode == 0, token.stderr
    command = next(
        line.strip() for line in token.stdout.splitlines() if line.strip().startswith("pyocm join")
    )
    args = command.split()[2:]
    assert args[-1] == "<cluster_name>"
    args[-1] = name

    wrong_hash = [a if not a.startswith("sha256:") else "sha256:" + "0" * 64 for a in args]
    refused = pyocm("join", *wrong_hash, "--data-dir", str(tmp_path / "wrong"), env=isolated)
    assert refused.returncode == 1
    assert "does not match --ca-cert-hash" in refused.stderr

    not_yet = pyocm("accept", "--clusters", name, "--kubeconfig", kubeconfig, env=isolated)
    assert not_yet.returncode == 1 and "has not asked to join this hub" in not_yet.stderr

    joined = Running("join", *args, "--data-dir", str(tmp_path / "managed"), env=isolated)
    try:
        joined.wait_for(f"{name}: waiting for the hub admin to accept")
        accepted = pyocm(
            "accept", "--clusters", name, "--wait", "--kubeconfig", kubeconfig, env=isolated
        )
        assert accepted.returncode == 0, accepted.stderr
        assert f"accepted {name} (approved {name}-" in accepted.stdout
        joined.wait_for(f"{name}: available")
        listed = pyocm("get", "clusters", "--kubeconfig", kubeconfig, env=isolated)
        # Two claims: the cluster's id and its simulated workloads (an embedded cluster).
        pattern = rf"{name}\s+true\s+True\s+True\s+\S+\s+v1\.30\.0\s+2\s+simulated"
        assert re.search(pattern, listed.stdout), listed.stdout
        denied = pyocm("deny", "--clusters", name, "--kubeconfig", kubeconfig, env=isolated)
        assert denied.returncode == 0, denied.stderr
        joined.wait_for(f"{name}: stopped: denied")
        assert joined.process.wait(timeout=20) == 0
    finally:
        joined.stop()
    gone = pyocm(
        "unjoin", "--cluster-name", name, "--data-dir", str(tmp_path / "managed"), env=isolated
    )
    assert gone.returncode == 0, gone.stderr
    again = pyocm(
        "unjoin", "--cluster-name", name, "--data-dir", str(tmp_path / "managed"), env=isolated
    )
    assert again.returncode == 1 and "holds no hub credential" in again.stderr


def test_accept_wait_shows_what_it_waits_for_on_stderr(
    hub: HubProcess, tmp_path: Path, isolated: dict[str, str], unique: str
) -> None:
    name = f"wait-{unique}"
    kubeconfig = str(hub.kubeconfig)
    token = pyocm("get", "token", "--kubeconfig", kubeconfig, env=isolated)
    command = next(
        line.strip() for line in token.stdout.splitlines() if line.strip().startswith("pyocm join")
    )
    args = [*command.split()[2:-1], name]
    accepting = Running(
        "accept", "--clusters", name, "--wait", "--timeout", "90", "--kubeconfig", kubeconfig,
        env=isolated, split=True,
    )  # fmt: skip
    joined: Running | None = None
    try:
        accepting.wait_for(rf"^waiting for cluster {name} to ask to join \(0s of 90s\)$")
        joined = Running("join", *args, "--data-dir", str(tmp_path / "managed"), env=isolated)
        accepting.wait_for(rf"^cluster {name} asked to join \({name}-\w+\); accepting$")
        assert accepting.process.wait(timeout=60) == 0, accepting.lines
        joined.wait_for(f"{name}: available")
    finally:
        accepting.stop()
        if joined is not None:
            joined.stop()
    # Progress went to stderr; stdout holds only the result, as without --wait.
    assert len(accepting.out) == 1, accepting.out
    assert re.fullmatch(rf"accepted {name} \(approved {name}-\w+\)", accepting.out[0])
    assert accepting.err[0].startswith(f"waiting for cluster {name}"), accepting.err


def test_accept_wait_says_it_still_waits_in_a_log(hub: HubProcess, unique: str) -> None:
    """Without a terminal, a line every interval (10 s; PYOCM_PROGRESS_INTERVAL sets it)."""
    name = f"never-{unique}"
    done = pyocm(
        "accept", "--clusters", name, "--wait", "--timeout", "3.5",
        "--kubeconfig", str(hub.kubeconfig), env={"PYOCM_PROGRESS_INTERVAL": "1"},
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    what = f"waiting for cluster {name} to ask to join"
    assert lines[:4] == [
        f"{what} (0s of 4s)",
        f"still {what} (1s of 4s)",
        f"still {what} (2s of 4s)",
        f"still {what} (3s of 4s)",
    ], lines
    assert lines[-1].startswith("error: "), lines


def test_bad_input_gets_clear_errors(isolated: dict[str, str], tmp_path: Path) -> None:
    bad_token = pyocm(
        "join",
        "--hub-token",
        "not-a-token",
        "--hub-apiserver",
        "https://127.0.0.1:1",
        "--cluster-name",
        "x",
        "--ca-cert-hash",
        "sha256:00",
        env=isolated,
    )
    assert bad_token.returncode == 2 and "--hub-token: the token must look like" in bad_token.stderr
    assert "not-a-token" not in bad_token.stderr, "a token is never echoed"
    unreachable = pyocm(
        "join",
        "--hub-token",
        "abcdef.0123456789abcdef",
        "--hub-apiserver",
        "https://127.0.0.1:9",
        "--cluster-name",
        "x",
        "--ca-cert-hash",
        "sha256:00",
        "--data-dir",
        str(tmp_path / "m"),
        env=isolated,
    )
    assert (
        unreachable.returncode == 1
        and "cannot connect to https://127.0.0.1:9" in unreachable.stderr
    )
    no_hub = pyocm("get", "clusters", env=isolated)
    assert no_hub.returncode == 1 and "no kubeconfig at" in no_hub.stderr


def test_up_on_a_port_in_use_is_one_clear_line(
    tmp_path: Path, isolated: dict[str, str], hub: HubProcess
) -> None:
    taken = pyocm(
        "up",
        "--clusters",
        "1",
        "--listen",
        f"127.0.0.1:{hub.port}",
        "--data-dir",
        str(tmp_path / "up"),
        env=isolated,
    )
    assert taken.returncode == 1
    assert (
        taken.stderr.strip()
        == f"error: cannot listen on 127.0.0.1:{hub.port}: Address already in use"
    )


def test_controller_runs_against_a_hub_without_controllers(
    tmp_path: Path, isolated: dict[str, str]
) -> None:
    bare = HubProcess(tmp_path / "bare", extra_args=["--no-controllers"]).start()
    controller = Running("controller", "--kubeconfig", str(bare.kubeconfig), env=isolated)
    try:
        created = subprocess.run(
            ["kubectl", "--kubeconfig", str(bare.kubeconfig), "create", "-f", "-"],
            input=json.dumps(
                {
                    "apiVersion": "cluster.open-cluster-management.io/v1",
                    "kind": "ManagedCluster",
                    "metadata": {"name": "remote"},
                    "spec": {"hubAcceptsClient": True},
                }
            ),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert created.returncode == 0, created.stderr
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            got = subprocess.run(
                [
                    "kubectl",
                    "--kubeconfig",
                    str(bare.kubeconfig),
                    "get",
                    "namespace",
                    "remote",
                    "-o",
                    "name",
                ],
                capture_output=True,
                text=True,
                timeout=60,
            )
            if got.returncode == 0:
                break
            time.sleep(0.2)
        assert got.stdout.strip() == "namespace/remote", (
            "the external controllers accepted the cluster"
        )
        lease = subprocess.run(
            [
                "kubectl",
                "--kubeconfig",
                str(bare.kubeconfig),
                "get",
                "lease",
                "pyocm-hub-controllers",
                "-n",
                "open-cluster-management-hub",
                "-o",
                "jsonpath={.spec.holderIdentity}",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert lease.returncode == 0 and lease.stdout, "the controllers hold the leader lease"
    finally:
        code = controller.stop(signal.SIGTERM)
        bare.stop()
    assert code == 0, "\n".join(controller.lines[-20:])
