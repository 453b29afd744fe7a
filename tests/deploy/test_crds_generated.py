"""The CRDs checked into deploy/ are what pyocm renders (deploy/gencrds.py --check)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.deploy.manifests import DEPLOY

SCRIPT = DEPLOY / "gencrds.py"


def check(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_checked_in_crds_are_what_pyocm_generates() -> None:
    done = check(DEPLOY)
    assert done.returncode == 0, done.stderr


def test_a_hand_edit_or_a_stray_file_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "deploy"
    for side in ("hub", "klusterlet"):
        shutil.copytree(DEPLOY / side / "crds", root / side / "crds")
    edited = root / "hub" / "crds" / "managedclusters.cluster.open-cluster-management.io.yaml"
    edited.write_text(edited.read_text(encoding="utf-8").replace("mcl", "mc"), encoding="utf-8")
    (root / "klusterlet" / "crds" / "extra.yaml").write_text("{}\n", encoding="utf-8")
    done = check(root)
    assert done.returncode == 1
    assert f"{edited}: differs" in done.stderr
    assert "extra.yaml: not generated" in done.stderr
