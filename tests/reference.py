"""The reference data in ``shared/`` beside the repository (upstream CRDs, seed objects).

A clone lives anywhere with ``shared/`` next to it, so the folder is found from this
file's place, never from an absolute path. Missing data is an error, not an empty
parametrisation: a test that silently compared nothing could not fail.
"""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"


def shared(*parts: str) -> Path:
    """A path under ``shared/``; raises at once (at collection) when it is not there."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        raise FileNotFoundError(
            f"{path} is missing: these tests read the reference data in shared/ "
            f"beside the repository ({SHARED.parent})"
        )
    return path


def shared_files(*parts: str, pattern: str = "*.yaml") -> list[Path]:
    """The files matching ``pattern`` in a folder under ``shared/``; never empty."""
    found = sorted(shared(*parts).glob(pattern))
    if not found:
        raise FileNotFoundError(f"no {pattern} in {shared(*parts)}")
    return found
