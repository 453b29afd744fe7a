"""Every flag a Deployment of deploy/ passes is one its ``pyocm`` command accepts."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.deploy.manifests import DEPLOY, klusterlet_copy, render

DEPLOYMENTS = {
    "cluster-manager-controller": "hub",
    "cluster-manager-webhook": "hub",
    "klusterlet-agent": "klusterlet",
}


def container_args(name: str, tmp_path: Path) -> list[str]:
    side = DEPLOYMENTS[name]
    directory = DEPLOY / side if side == "hub" else klusterlet_copy(tmp_path, bootstrap="{}")
    deployment = next(
        o for o in render(directory) if o["kind"] == "Deployment" and o["metadata"]["name"] == name
    )
    args: list[str] = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    return args


def help_text(command: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "pyocm", command, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, f"pyocm {command} --help failed:\n{done.stdout}{done.stderr}"
    return done.stdout


@pytest.mark.parametrize("name", sorted(DEPLOYMENTS))
def test_deployment_flags_are_the_commands(name: str, tmp_path: Path) -> None:
    command, *rest = container_args(name, tmp_path)
    known = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", help_text(command)))
    flags = [arg.split("=", 1)[0] for arg in rest if arg.startswith("--")]
    assert flags, rest
    assert [flag for flag in flags if flag not in known] == []
