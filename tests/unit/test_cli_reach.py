"""The ``pyocm`` that ``pyocm up``'s "Try:" hint names: plain ``pyocm`` when the PATH
leads to this installation (pipx's symlink, a copy of the console script, a launcher),
else this installation's script by its path. The running interpreter is this venv's,
so its ``pyocm`` script is the one these tests install on a PATH of their own."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from pyocm.cli.reach import pyocm_command

SCRIPT = Path(sys.executable).parent / "pyocm"


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty directory that is the whole PATH."""
    found = tmp_path / "bin"
    found.mkdir()
    monkeypatch.setenv("PATH", str(found))
    return found


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_the_script_itself_is_named_by_its_path_when_the_path_has_no_pyocm(bin_dir: Path) -> None:
    assert SCRIPT.exists()
    assert pyocm_command() == str(SCRIPT.absolute())


def test_a_symlink_on_the_path_to_this_script_is_plain_pyocm(bin_dir: Path) -> None:
    (bin_dir / "pyocm").symlink_to(SCRIPT)  # as pipx exposes ~/.local/bin/pyocm
    assert pyocm_command() == "pyocm"


def test_a_copy_of_the_console_script_is_plain_pyocm(bin_dir: Path) -> None:
    shutil.copy2(SCRIPT, bin_dir / "pyocm")  # its #! names this venv's python
    assert pyocm_command() == "pyocm"


def test_a_launcher_naming_this_script_is_plain_pyocm(bin_dir: Path) -> None:
    executable(bin_dir / "pyocm", f'#!/bin/sh\nexec "{SCRIPT}" "$@"\n')
    assert pyocm_command() == "pyocm"


def test_a_tilde_in_a_path_entry_is_expanded_as_shells_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "pyocm").symlink_to(SCRIPT)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path / "none"), "~/.local/bin"]))
    assert pyocm_command() == "pyocm"


def test_another_pyocm_first_on_the_path_is_not_this_one(bin_dir: Path, tmp_path: Path) -> None:
    # Another installation: its own interpreter, a launcher of something else.
    other = tmp_path / "other" / "bin"
    other.mkdir(parents=True)
    executable(other / "pyocm", f"#!{other / 'python'}\nimport sys\n")
    (bin_dir / "pyocm").symlink_to(other / "pyocm")
    assert pyocm_command() == str(SCRIPT.absolute())
    (bin_dir / "pyocm").unlink()
    executable(bin_dir / "pyocm", '#!/bin/sh\nexec /opt/elsewhere/pyocm "$@"\n')
    assert pyocm_command() == str(SCRIPT.absolute())
