"""How a person reaches this pyocm from their shell, for the commands pyocm suggests."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

#: How much of a found ``pyocm`` is read to tell whether it launches this one.
HEAD = 4096


def pyocm_command() -> str:
    """``pyocm`` when the PATH leads to this installation, else the path of its script.

    ``./dev up`` runs pyocm from ``.venv`` without changing anyone's PATH, so a hint
    saying ``pyocm get clusters`` would fail in the user's shell; the script's own path
    works from anywhere. The script lives beside the interpreter (a venv's or pipx's
    ``bin``); the interpreter itself is not resolved, as a venv's python is a symlink
    out of the venv. What the PATH finds may be that script through a symlink (pipx's
    ``~/.local/bin/pyocm``), a copy of it, or a launcher naming it: each runs this
    installation, and the plain name reads better than pipx's internal path.
    """
    script = Path(sys.executable).parent / "pyocm"
    found = _on_path("pyocm")
    if found is not None and _runs(found, script):
        return "pyocm"
    if script.exists():
        return str(script.absolute())
    return "pyocm"


def _on_path(name: str) -> Path | None:
    """What the shell runs for ``name``. Shells expand ``~`` in PATH entries (a profile
    may say ``PATH="$PATH:~/.local/bin"`` in quotes); ``shutil.which`` alone does not."""
    entries = os.environ.get("PATH", os.defpath).split(os.pathsep)
    found = shutil.which(name, path=os.pathsep.join(os.path.expanduser(e) for e in entries))
    return Path(found) if found is not None else None


def _runs(found: Path, script: Path) -> bool:
    """Whether running ``found`` runs ``script``: the same file, a console script for this
    interpreter (a copy of ``script``: its ``#!`` names a python in this interpreter's
    directory), or a launcher script naming ``script``."""
    if found.resolve() == script.resolve():
        return True
    try:
        with found.open("rb") as file:
            head = file.read(HEAD).decode()
    except (OSError, UnicodeDecodeError):
        return False  # unreadable, or a binary: nothing says it is this one
    if not head.startswith("#!"):
        return False
    words = head[2:].partition("\n")[0].split()
    if words:
        interpreter = Path(words[0])
        here = Path(sys.executable).parent
        if interpreter.name.startswith("python") and interpreter.parent.resolve() == here.resolve():
            return True
    return str(script) in head
