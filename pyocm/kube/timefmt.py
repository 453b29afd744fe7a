"""The two wire forms of time in Kubernetes objects.

``metav1.Time`` is RFC 3339 in UTC with whole seconds (``2026-11-22T03:22:01Z``): any
RFC 3339 text is accepted on input and the fraction is dropped. ``metav1.MicroTime``
(Lease ``acquireTime``/``renewTime``, Event ``eventTime``) always carries exactly six
fractional digits, and Go parses it with that exact layout, so input with another number
of digits is refused. Both accept any UTC offset and are normalised to ``Z``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

_RFC3339 = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})T(?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d{2})"
    r"(?:\.(?P<frac>\d+))?(?P<tz>Z|[+-]\d{2}:\d{2})"
)
_MICRO_LAYOUT = "2006-01-02T15:04:05.000000Z07:00"


def now_rfc3339() -> str:
    """The current time as a ``metav1.Time`` string."""
    return format_time(datetime.now(UTC))


def now_micro() -> str:
    """The current time as a ``metav1.MicroTime`` string."""
    return format_micro(datetime.now(UTC))


def format_time(dt: datetime) -> str:
    """``dt`` in UTC with whole seconds; a naive ``dt`` is taken to be UTC already."""
    return _seconds(_utc(dt)) + "Z"


def format_micro(dt: datetime) -> str:
    """``dt`` in UTC with exactly six fractional digits; a naive ``dt`` is taken as UTC."""
    utc = _utc(dt)
    return f"{_seconds(utc)}.{utc.microsecond:06d}Z"


def parse_time(text: str) -> datetime:
    """Parse any RFC 3339 timestamp into an aware UTC datetime.

    Accepts ``Z`` or a numeric offset and a fraction of any length (digits past
    microseconds are truncated, as Python cannot hold them). Raises ``ValueError`` with
    Go's wording for text that is not RFC 3339.
    """
    match = _RFC3339.fullmatch(text)
    if match is None:
        raise ValueError(f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00": not RFC 3339')
    return _build(text, match)


def normalize_time(text: str) -> str:
    """The canonical ``metav1.Time`` form of ``text``; raises ``ValueError`` if unparsable."""
    return format_time(parse_time(text))


def normalize_micro(text: str) -> str:
    """The canonical ``metav1.MicroTime`` form of ``text``.

    Requires exactly six fractional digits, as ``time.Parse(RFC3339Micro, …)`` does in the
    apiserver; anything else raises ``ValueError``.
    """
    match = _RFC3339.fullmatch(text)
    if match is None or match.group("frac") is None or len(match.group("frac")) != 6:
        raise ValueError(f'parsing time "{text}" as "{_MICRO_LAYOUT}": cannot parse')
    return format_micro(_build(text, match))


def _build(text: str, match: re.Match[str]) -> datetime:
    frac = (match.group("frac") or "")[:6].ljust(6, "0")
    try:
        year, month, day = (int(p) for p in match.group("date").split("-"))
        parsed = datetime(
            year,
            month,
            day,
            int(match.group("h")),
            int(match.group("m")),
            int(match.group("s")),
            int(frac),
            tzinfo=_zone(match.group("tz")),
        )
    except ValueError as err:
        raise ValueError(f'parsing time "{text}": {err}') from None
    return parsed.astimezone(UTC)


def _zone(tz: str) -> timezone:
    if tz == "Z":
        return UTC
    sign = -1 if tz[0] == "-" else 1
    hours, minutes = int(tz[1:3]), int(tz[4:6])
    if hours > 23 or minutes > 59:
        raise ValueError("time zone offset out of range")
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def _seconds(dt: datetime) -> str:
    # Formatted by hand: strftime("%Y") does not zero-pad years below 1000 on glibc.
    return (
        f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}"
    )


def _utc(dt: datetime) -> datetime:
    if dt.tzinfo is None:
        return dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)
