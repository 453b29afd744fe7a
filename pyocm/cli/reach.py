"""How a person reaches this pyocm from their shell, for the commands pyocm suggests."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def pyocm_command() -> str:
    """``pyocm`` when the PATH leads to this installation, else the path of its script.

    ``./dev up`` runs pyocm from ``.venv`` without changing anyone's PATH, so a hint
    saying ``pyocm get clusters`` would fail in the user's shell; the script's own path
    works from anywhere. The script lives beside the interpreter (a venv's or pipx's
    ``bin``); the interpreter itself is not resolved, as a venv's python is a symlink
    out of the venv.
    """
    script = Path(sys.executable).parent / "pyocm"
    found = shutil.which("pyocm")
    if found is not None and Path(found).resolve() == script.resolve():
        return "pyocm"
    if script.exists():
        return str(script.absolute())
    return "pyocm"
