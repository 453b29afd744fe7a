"""The hub's configuration refuses values the server cannot work with."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyocm.apiserver.config import ServerConfig


@pytest.mark.parametrize("interval", [0.0, -1.0, 61.0])
def test_a_bookmark_interval_outside_the_minute_is_refused(interval: float) -> None:
    with pytest.raises(ValueError, match="watch_bookmark_interval must be more than 0"):
        ServerConfig(data_dir=Path("/nonexistent"), watch_bookmark_interval=interval)


def test_the_default_bookmark_interval_is_under_a_minute() -> None:
    assert ServerConfig(data_dir=Path("/nonexistent")).watch_bookmark_interval == 55.0
