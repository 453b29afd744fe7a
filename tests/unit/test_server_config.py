"""The hub's configuration refuses values the server cannot work with."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyocm.apiserver.config import ServerConfig
from pyocm.cli.hub import parse_interval


@pytest.mark.parametrize("interval", [0.0, -1.0, 61.0])
def test_a_bookmark_interval_outside_the_minute_is_refused(interval: float) -> None:
    with pytest.raises(ValueError, match="watch_bookmark_interval must be more than 0"):
        ServerConfig(data_dir=Path("/nonexistent"), watch_bookmark_interval=interval)


def test_the_default_bookmark_interval_is_under_a_minute() -> None:
    assert ServerConfig(data_dir=Path("/nonexistent")).watch_bookmark_interval == 55.0


@pytest.mark.parametrize(
    ("given", "error"),
    [
        ({"min_request_timeout": 0}, "min_request_timeout"),
        ({"compaction_interval": -1.0}, "compaction_interval"),
    ],
)
def test_watch_limits_out_of_range_are_refused(given: dict[str, float], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        ServerConfig(data_dir=Path("/tmp/x"), **given)  # type: ignore[arg-type]


def test_a_compaction_interval_of_0_keeps_history_by_count_only() -> None:
    assert ServerConfig(data_dir=Path("/tmp/x")).watch_history_seconds == 300.0
    assert ServerConfig(
        data_dir=Path("/tmp/x"), compaction_interval=0
    ).watch_history_seconds == float("inf")


@pytest.mark.parametrize(
    ("text", "seconds"), [("0", 0.0), ("0s", 0.0), ("90s", 90.0), ("5m", 300.0)]
)
def test_hub_compaction_interval_takes_go_durations_and_0(text: str, seconds: float) -> None:
    assert parse_interval(text) == seconds
