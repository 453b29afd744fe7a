"""A new user's first minutes: reaching pyocm, its version, help and shell completion.

Everything runs as a person would: ``./dev setup`` in a checkout, ``pyocm`` processes,
and bash sourcing the completion script pyocm prints.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path

from tests.cli import PYOCM, Running, pyocm

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
# The console script pip installed beside the interpreter: what a shell runs as `pyocm`.
SCRIPT = VENV_BIN / "pyocm"

# Every command that takes --log-level, plus the root, an argument and a repeatable option.
LOG_LEVEL_COMMANDS = [
    ["hub"],
    ["up"],
    ["controller"],
    ["agent"],
    ["join"],
    ["work-agent"],
    ["webhook"],
    ["sim"],
    ["addon", "agent"],
]
HELP_COMMANDS = [[], ["clusterset", "set"], ["create", "work"], ["get", "works"]]
TYPE_METAVARS = re.compile(r"<(bool|str|int|float|path|text)\b[^>]*>|\{\w+\}")


def _path_without_venv() -> str:
    return os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if Path(p) != VENV_BIN
    )


def _help(args: list[str]) -> str:
    done = pyocm(*args, "--help")
    assert done.returncode == 0, done.stderr
    return done.stdout


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_version_flag_and_command_print_the_installed_version() -> None:
    expected = f"pyocm {version('pyocm')}"
    for args in (["--version"], ["version"]):
        done = pyocm(*args)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == expected


def test_dash_h_is_help_at_every_level() -> None:
    for args in ([], ["get"], ["clusterset", "set"], ["hub"]):
        short = pyocm(*args, "-h")
        assert short.returncode == 0, short.stderr
        assert short.stdout == _help(args)
        assert short.stdout.startswith(f"Usage: pyocm {' '.join(args)}".rstrip())


def test_help_names_values_not_python_types() -> None:
    with ThreadPoolExecutor(4) as pool:
        helps = dict(
            zip(
                map(tuple, LOG_LEVEL_COMMANDS + HELP_COMMANDS),
                pool.map(_help, LOG_LEVEL_COMMANDS + HELP_COMMANDS),
                strict=True,
            )
        )
    for args, text in helps.items():
        assert not TYPE_METAVARS.search(text), (args, TYPE_METAVARS.findall(text), text)
    assert "Usage: pyocm clusterset set [OPTIONS] NAME\n" in helps[("clusterset", "set")]
    assert "Usage: pyocm get works [OPTIONS] [NAME]\n" in helps[("get", "works")]
    assert "--data-dir DIR " in helps[("hub",)]
    assert "-h, --help " in helps[()]
    # A flag takes no value: shown bare, as its two spellings.
    assert "--controllers / --no-controllers\n" in helps[("hub",)]
    for args in LOG_LEVEL_COMMANDS:
        described = re.search(r"--log-level LEVEL\s+(\S[^\[]*)\[default", helps[tuple(args)])
        assert described, (args, helps[tuple(args)])
        assert _flat(described.group(1)).startswith("Least severe log messages to print:"), args


def test_hub_help_names_every_data_dir_fallback() -> None:
    flat = _flat(_help(["hub"]))
    assert (
        "(default: $PYOCM_DATA_DIR, else $XDG_DATA_HOME/pyocm/hub, else ~/.local/share/pyocm/hub)"
        in flat
    )


def _complete(setup: str, words: str, *, home: Path | None = None) -> list[str]:
    """What bash offers for ``words`` after running ``setup``, as a shell's Tab would."""
    script = (
        f"{setup}\n"
        f"COMP_WORDS=({words}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))\n"
        f"_pyocm_completion {SCRIPT}\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    env = {**os.environ, **({"HOME": str(home)} if home else {})}
    done = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_shown_completion_script_completes_commands_and_options() -> None:
    # Sourced from a bash, as `eval "$(pyocm --show-completion)"` in a .bashrc would be.
    show = f"source <({' '.join(PYOCM)} --show-completion)"
    assert _complete(show, "pyocm ge") == ["get"]
    assert _complete(show, "pyocm get cl") == ["clusters", "clustersets"]
    assert _complete(show, "pyocm hub --data-") == ["--data-dir"]


def test_install_completion_sets_up_bash(tmp_path: Path) -> None:
    command = f"{' '.join(PYOCM)} --install-completion; echo installed"
    done = subprocess.run(
        ["bash", "-c", command],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert "bash completion installed in" in done.stdout, done.stdout
    # A new interactive shell reads ~/.bashrc: Tab then completes pyocm's commands.
    assert _complete("source ~/.bashrc", "pyocm cluster", home=tmp_path) == ["clusterset"]


def _up_hint(tmp_path: Path, path: str) -> str:
    up = Running(
        "up",
        "--clusters",
        "0",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        str(tmp_path / "up"),
        "--addons",
        "",
        env={"PATH": path},
    )
    try:
        return up.wait_for(r"get clusters$", timeout=90).strip()
    finally:
        up.stop()


def test_up_hint_names_a_pyocm_the_user_can_run(tmp_path: Path) -> None:
    # Under ./dev up, .venv/bin is not on the PATH: the hint gives the script's path.
    hint = _up_hint(tmp_path, _path_without_venv())
    assert hint == f"{SCRIPT} get clusters"
    ran = subprocess.run(
        [*hint.split()[:1], "--version"], capture_output=True, text=True, timeout=60
    )
    assert ran.stdout.strip() == f"pyocm {version('pyocm')}"
    # With the venv activated (or pipx), plain `pyocm` is right.
    activated = os.pathsep.join([str(VENV_BIN), _path_without_venv()])
    assert _up_hint(tmp_path, activated) == "pyocm get clusters"


def _checkout(tmp_path: Path) -> Path:
    """A checkout's files that ./dev reads: the script and pyproject.toml."""
    tree = tmp_path / "checkout"
    tree.mkdir()
    shutil.copy(REPO / "dev", tree / "dev")
    shutil.copy(REPO / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_dev_setup_says_how_to_reach_pyocm(tmp_path: Path) -> None:
    tree = _checkout(tmp_path)
    # Installed already: .venv's bin is this test's environment, stamped after
    # pyproject.toml, so ./dev setup has nothing to install.
    (tree / ".venv").mkdir()
    (tree / ".venv" / "bin").symlink_to(VENV_BIN)
    (tree / ".venv" / ".installed").touch()
    os.utime(tree / "pyproject.toml", (1, 1))
    env = {**os.environ, "PATH": _path_without_venv()}
    done = subprocess.run(
        ["./dev", "setup"], cwd=tree, capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "==> installing" not in done.stdout
    said = _flat(done.stdout)
    assert "run it as .venv/bin/pyocm" in said, done.stdout
    assert ". .venv/bin/activate" in said, done.stdout
    # Both ways it names work from a shell whose PATH has no pyocm.
    expected = f"pyocm {version('pyocm')}"
    for way in (".venv/bin/pyocm --version", ". .venv/bin/activate && pyocm --version"):
        ran = subprocess.run(
            ["bash", "-c", way], cwd=tree, capture_output=True, text=True, timeout=60, env=env
        )
        assert ran.stdout.strip() == expected, (way, ran.stderr)


def test_dev_first_setup_says_what_it_installs(tmp_path: Path) -> None:
    tree = _checkout(tmp_path)
    # No package index, no pip configuration: the first install starts for real (a new
    # .venv, then pip on pyocm) and stops where it would download, within seconds.
    env = {
        **os.environ,
        "PATH": _path_without_venv(),
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": "",
    }
    env.pop("VIRTUAL_ENV", None)
    done = subprocess.run(
        ["./dev", "setup"], cwd=tree, capture_output=True, text=True, timeout=300, env=env
    )
    lines = done.stdout.splitlines()
    assert lines[0].startswith("==> creating .venv"), done.stdout
    assert lines[1].startswith("==> installing pyocm and its dependencies into .venv"), lines
    # pip speaks for itself (not --quiet): the project it is installing comes next.
    assert any(line.startswith("Obtaining file://") for line in lines[2:]), done.stdout
    assert done.returncode != 0  # nothing to download from
    assert not (tree / ".venv" / ".installed").exists()
