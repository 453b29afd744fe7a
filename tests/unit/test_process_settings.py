"""Process-wide settings the hub makes at start (the project runs on glibc Linux)."""

from __future__ import annotations

from pyocm.cli.common import fix_mmap_threshold


def test_the_mmap_threshold_is_fixed() -> None:
    assert fix_mmap_threshold() is True
