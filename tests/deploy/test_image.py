"""What deploy/Containerfile relies on, checked without a container runtime (none runs in
CI): the sources it copies are all the package needs, and installed from them, outside this
checkout, ``pyocm`` runs with the entrypoint the image names."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.deploy.manifests import DEPLOY

CONTAINERFILE = DEPLOY / "Containerfile"
ROOT = DEPLOY.parent


def copied_sources() -> list[str]:
    """The build context paths the Containerfile's COPY lines take (not --from= stages)."""
    found = []
    for line in CONTAINERFILE.read_text(encoding="utf-8").splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and not any(w.startswith("--from=") for w in words):
            found.extend(words[1:-1])
    return found


def test_the_image_runs_pyocm_as_a_numeric_non_root_user() -> None:
    text = CONTAINERFILE.read_text(encoding="utf-8")
    assert re.search(r'^ENTRYPOINT \["pyocm"\]$', text, re.M)
    users = re.findall(r"^USER (\d+):(\d+)$", text, re.M)
    assert users and all(int(uid) != 0 for uid, _ in users)


def test_installed_from_the_copied_sources_pyocm_runs(tmp_path: Path) -> None:
    """The wheel built from only what the image copies, installed apart from the checkout
    (the dependencies are this venv's), imports every module and prints its version."""
    context = tmp_path / "context"
    for source in copied_sources():
        target = context / source
        if (ROOT / source).is_dir():
            shutil.copytree(ROOT / source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / source, target)
    installed = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    done = subprocess.run(
        [*pip, "--target", str(installed), str(context)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    env = {**os.environ, "PYTHONPATH": str(installed)}
    script = (
        "import pkgutil, pyocm\n"
        f"assert pyocm.__file__.startswith({str(installed)!r}), pyocm.__file__\n"
        "for m in pkgutil.walk_packages(pyocm.__path__, 'pyocm.'):\n"
        "    if not m.name.endswith('__main__'): __import__(m.name)\n"
    )
    imported = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert imported.returncode == 0, imported.stderr
    # the console script pip made: the image's ENTRYPOINT
    version = subprocess.run(
        [str(installed / "bin" / "pyocm"), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("pyocm 0.1.0")
