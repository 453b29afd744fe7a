"""Process-wide client metrics, as client-go keeps ``rest_client_request_duration``:
every API client (pyocm.runtime) reports each request's duration to the
observers registered here (none by default, so nothing is kept unless asked)."""

from __future__ import annotations

from collections.abc import Callable

#: ``(method, path, status, seconds)``; status 0 means the request got no answer.
Observer = Callable[[str, str, int, float], None]

_observers: list[Observer] = []


def add_observer(observer: Observer) -> None:
    _observers.append(observer)


def remove_observer(observer: Observer) -> None:
    if observer in _observers:
        _observers.remove(observer)


def observe(method: str, path: str, status: int, seconds: float) -> None:
    for observer in _observers:
        observer(method, path, status, seconds)


def observing() -> bool:
    return bool(_observers)
