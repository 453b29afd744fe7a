"""A watch's answer, decoded: one JSON event per line, ``ERROR`` events raised.

The server streams ``{"type": ..., "object": ...}`` lines for as long as the watch runs;
an ``ERROR`` event (typically 410 Gone, the resourceVersion fell out of the window)
ends it as :class:`~pyocm.kube.status.ApiError`, so informers relist.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson

from pyocm.runtime.errors import ApiConnectionError, status_error


async def events(
    stream: aiohttp.StreamReader, *, name: str
) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """``(type, object)`` for each event until the stream ends, ``BOOKMARK`` included;
    a stream that breaks is :class:`ApiConnectionError` naming the watch (``name``)."""
    try:
        async for line in _lines(stream):
            event = orjson.loads(line)
            if event.get("type") == "ERROR":
                raise status_error(event.get("object") or {}, fallback_code=500)
            yield str(event.get("type")), event.get("object") or {}
    except (aiohttp.ClientError, TimeoutError) as err:
        raise ApiConnectionError(f"{name} broke: {err}") from err


async def _lines(stream: aiohttp.StreamReader) -> AsyncIterator[bytes]:
    """The non-empty lines of a watch stream, however long (``readline`` caps them)."""
    pending = bytearray()
    async for chunk in stream.iter_any():
        pending += chunk
        start = 0
        while (end := pending.find(b"\n", start)) >= 0:
            line = bytes(pending[start:end])
            if line.strip():
                yield line
            start = end + 1
        del pending[:start]
    if pending.strip():
        yield bytes(pending)
