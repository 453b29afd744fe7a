"""Cron schedules as a CronJob's ``spec.schedule`` takes them, with the error texts of
``robfig/cron/v3``'s standard parser (five fields or a ``@`` descriptor), which
Kubernetes puts into its validation message."""

from __future__ import annotations

import re

_DESCRIPTORS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTHS = {m: i + 1 for i, m in enumerate(_MONTH_NAMES)}
_DAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
#: (minimum, maximum, names) of minute, hour, day of month, month, day of week.
_BOUNDS: tuple[tuple[int, int, dict[str, int]], ...] = (
    (0, 59, {}),
    (0, 23, {}),
    (1, 31, {}),
    (1, 12, _MONTHS),
    (0, 6, _DAYS),
)
_DURATION = re.compile(r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$")


class ScheduleError(ValueError):
    """The parser's error text."""


def check(schedule: str) -> None:
    """Raise :class:`ScheduleError` for a schedule the standard parser refuses."""
    text = schedule.strip()
    if text.startswith(("TZ=", "CRON_TZ=")):
        text = text.partition(" ")[2].strip()  # the zone itself is judged elsewhere
    if text.startswith("@"):
        _descriptor(text)
        return
    fields = text.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    for field, bounds in zip(fields, _BOUNDS, strict=True):
        for part in field.split(","):
            _range(part, *bounds)


def _descriptor(text: str) -> None:
    if text in _DESCRIPTORS:
        return
    if text.startswith("@every "):
        value = text[len("@every ") :]
        if not _DURATION.match(value):
            raise ScheduleError(
                f'failed to parse duration {text}: time: invalid duration "{value}"'
            )
        return
    raise ScheduleError(f"unrecognized descriptor: {text}")


def _range(expr: str, low: int, high: int, names: dict[str, int]) -> None:
    range_and_step = expr.split("/")
    low_high = range_and_step[0].split("-")
    if low_high[0] in ("*", "?"):
        start, end = low, high
    else:
        start = _int_or_name(low_high[0], names)
        if len(low_high) == 1:
            end = start
        elif len(low_high) == 2:
            end = _int_or_name(low_high[1], names)
        else:
            raise ScheduleError(f"too many hyphens: {expr}")
    if len(range_and_step) > 2:
        raise ScheduleError(f"too many slashes: {expr}")
    step = 1
    if len(range_and_step) == 2:
        step = _int(range_and_step[1])
        if len(low_high) == 1:
            end = high  # "N/step" means "N-max/step"
    if start < low:
        raise ScheduleError(f"beginning of range ({start}) below minimum ({low}): {expr}")
    if end > high:
        raise ScheduleError(f"end of range ({end}) above maximum ({high}): {expr}")
    if start > end:
        raise ScheduleError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expr}")


def _int_or_name(expr: str, names: dict[str, int]) -> int:
    found = names.get(expr.lower())
    return found if found is not None else _int(expr)


def _int(expr: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]+", expr):
        raise ScheduleError(
            f'failed to parse int from {expr}: strconv.Atoi: parsing "{expr}": invalid syntax'
        )
    number = int(expr)
    if number < 0:
        raise ScheduleError(f"negative number ({number}) not allowed: {expr}")
    return number
