"""metav1.Time and metav1.MicroTime wire forms."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import pytest

from pyocm.kube import timefmt


def test_now_rfc3339_has_whole_seconds_and_z() -> None:
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", timefmt.now_rfc3339())


def test_now_micro_has_exactly_six_fraction_digits() -> None:
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z", timefmt.now_micro())


@pytest.mark.parametrize(
    ("dt", "time_text", "micro_text"),
    [
        pytest.param(
            datetime(2026, 11, 22, 3, 22, 1, 123456, tzinfo=UTC),
            "2026-11-22T03:22:01Z",
            "2026-11-22T03:22:01.123456Z",
            id="utc",
        ),
        pytest.param(
            datetime(2026, 11, 22, 5, 22, 1, tzinfo=timezone(timedelta(hours=2))),
            "2026-11-22T03:22:01Z",
            "2026-11-22T03:22:01.000000Z",
            id="offset-converted",
        ),
        pytest.param(
            datetime(2026, 1, 2, 3, 4, 5),
            "2026-01-02T03:04:05Z",
            "2026-01-02T03:04:05.000000Z",
            id="naive-is-utc",
        ),
        pytest.param(
            datetime(999, 1, 1, tzinfo=UTC),
            "0999-01-01T00:00:00Z",
            "0999-01-01T00:00:00.000000Z",
            id="year-padded",
        ),
    ],
)
def test_format(dt: datetime, time_text: str, micro_text: str) -> None:
    assert timefmt.format_time(dt) == time_text
    assert timefmt.format_micro(dt) == micro_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("2026-11-22T03:40:29Z", datetime(2026, 11, 22, 3, 40, 29, tzinfo=UTC), id="z"),
        pytest.param(
            "2026-11-22T03:40:29.142139+00:00",
            datetime(2026, 11, 22, 3, 40, 29, 142139, tzinfo=UTC),
            id="kopf-offset",
        ),
        pytest.param(
            "2026-11-22T05:40:29.5+02:00",
            datetime(2026, 11, 22, 3, 40, 29, 500000, tzinfo=UTC),
            id="short-fraction",
        ),
        pytest.param(
            "2026-11-22T03:40:29.123456789Z",
            datetime(2026, 11, 22, 3, 40, 29, 123456, tzinfo=UTC),
            id="nanoseconds-truncated",
        ),
        pytest.param(
            "2026-11-21T22:40:29-05:00",
            datetime(2026, 11, 22, 3, 40, 29, tzinfo=UTC),
            id="negative-offset",
        ),
    ],
)
def test_parse_time(text: str, expected: datetime) -> None:
    parsed = timefmt.parse_time(text)
    assert parsed == expected
    assert parsed.tzinfo == UTC


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("2026-11-22 03:40:29Z", id="space-separator"),
        pytest.param("2026-11-22T03:40:29", id="no-zone"),
        pytest.param("2026-13-22T03:40:29Z", id="month-out-of-range"),
        pytest.param("2026-11-22T24:00:00Z", id="hour-out-of-range"),
        pytest.param("2026-11-22T03:40:29+25:00", id="offset-out-of-range"),
        pytest.param("yesterday", id="words"),
    ],
)
def test_parse_time_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="parsing time"):
        timefmt.parse_time(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "2026-11-22T03:40:29.142139+00:00", "2026-11-22T03:40:29Z", id="fraction-dropped"
        ),
        pytest.param("2026-11-22T04:40:29+01:00", "2026-11-22T03:40:29Z", id="offset"),
        pytest.param("2026-11-22T03:40:29Z", "2026-11-22T03:40:29Z", id="canonical"),
    ],
)
def test_normalize_time(text: str, expected: str) -> None:
    assert timefmt.normalize_time(text) == expected


def test_normalize_micro_converts_offset_to_z() -> None:
    assert (
        timefmt.normalize_micro("2026-11-22T03:40:29.142139+00:00") == "2026-11-22T03:40:29.142139Z"
    )
    assert (
        timefmt.normalize_micro("2026-11-22T04:40:29.000001+01:00") == "2026-11-22T03:40:29.000001Z"
    )


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("2026-11-22T03:40:29Z", id="no-fraction"),
        pytest.param("2026-11-22T03:40:29.123Z", id="three-digits"),
        pytest.param("2026-11-22T03:40:29.123456789Z", id="nine-digits"),
    ],
)
def test_normalize_micro_requires_six_digits_like_go(text: str) -> None:
    with pytest.raises(ValueError, match=r'as "2006-01-02T15:04:05\.000000Z07:00"'):
        timefmt.normalize_micro(text)
