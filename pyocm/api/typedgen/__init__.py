"""Generate the typed models in ``pyocm/api/models``: one ``TypedDict`` per object type.

``python -m pyocm.api.typedgen`` rewrites the generated modules; ``--check`` only says
whether they are current (``tests/unit/api/test_models_current.py`` runs the same
comparison, so a descriptor changed without regenerating fails CI). Sources:

- the OCM kinds: the :mod:`pyocm.api` descriptors, the very schemas their CRDs are
  rendered from (:mod:`.ocm`), so a model and its CRD cannot disagree;
- the built-in kinds features use: Kubernetes' published OpenAPI definitions (:mod:`.kube`).

The models are for the type checker only: objects stay the plain dicts of the wire
format (see :mod:`pyocm.api.models` for the boundary helpers).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pyocm.api.typedgen import kube, ocm
from pyocm.api.typedgen.render import REGENERATE, render_module

#: Where the generated modules live, next to the hand-written ``__init__.py``.
MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
HAND_WRITTEN = frozenset({"__init__.py"})


def generate() -> dict[str, str]:
    """Every generated module's text, by file name."""
    modules = [*kube.kind_modules(), ocm.common_module(), *ocm.kind_modules()]
    names = [module.name for module in modules]
    if len(set(names)) != len(names):
        raise ValueError(f"two model modules share a name: {sorted(names)}")
    return {f"{module.name}.py": render_module(module) for module in modules}


def differences(directory: Path = MODELS_DIR) -> list[str]:
    """The generated files in ``directory`` that are missing, stale or no longer generated."""
    wanted = generate()
    present = {p.name for p in directory.glob("*.py")} - HAND_WRITTEN
    problems = [f"{name}: no longer generated" for name in sorted(present - set(wanted))]
    for name, text in sorted(wanted.items()):
        path = directory / name
        if not path.exists():
            problems.append(f"{name}: missing")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"{name}: out of date")
    return problems


def write(directory: Path = MODELS_DIR) -> list[Path]:
    """Write every generated module into ``directory`` and remove those no longer generated."""
    wanted = generate()
    for stale in directory.glob("*.py"):
        if stale.name not in wanted and stale.name not in HAND_WRITTEN:
            stale.unlink()
    written = []
    for name, text in wanted.items():
        path = directory / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=REGENERATE, description="Generate the typed models of pyocm.api.models."
    )
    parser.add_argument("--check", action="store_true", help="only report stale files")
    args = parser.parse_args(argv)
    if args.check:
        problems = differences()
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            print(f"regenerate with: {REGENERATE}", file=sys.stderr)
        return 1 if problems else 0
    for path in write():
        print(path)
    return 0
