"""Watch: a chunked stream of newline-delimited JSON events.

Bookmarks are sent every ``BOOKMARK_INTERVAL`` seconds when the client allows them (kopf
reconnects a watch that is silent for 70 s; client-go uses them to advance its
resourceVersion). The stream ends cleanly at ``timeoutSeconds``, when the client goes
away, or when the server shuts down.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import orjson
from aiohttp import web

from pyocm.apiserver.endpoints import negotiation, options, responses
from pyocm.apiserver.registry import watch as watching
from pyocm.apiserver.state import ServerState

if TYPE_CHECKING:
    from pyocm.apiserver.endpoints.resources import Target

BOOKMARK_INTERVAL = 30.0
#: Without timeoutSeconds a watch still ends eventually, like kube-apiserver's
#: --min-request-timeout spread (clients re-watch from their last resourceVersion).
DEFAULT_TIMEOUT = 1800


async def serve(request: web.Request, state: ServerState, target: Target) -> web.StreamResponse:
    opts = options.list_options(request.query, target.info, watch=True)
    wreq = watching.WatchRequest(
        info=target.info,
        namespace=target.namespace,
        labels=opts.labels,
        fields=opts.fields,
        resource_version=opts.resource_version,
        send_initial_events=opts.send_initial_events,
    )
    after = await watching.start_revision(state.store, wreq)
    accept = negotiation.parse_accept(request.headers.get("Accept"))
    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    timeout = opts.timeout_seconds if opts.timeout_seconds is not None else DEFAULT_TIMEOUT
    events = watching.stream(state.store, wreq, after=after)
    try:
        await _pump(
            response,
            state,
            target,
            events,
            timeout=timeout,
            bookmarks=opts.allow_bookmarks,
            accept=accept,
        )
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        await _close(events)
    with contextlib.suppress(ConnectionResetError, RuntimeError):
        await response.write_eof()
    return response


_END = object()


async def _pump(
    response: web.StreamResponse,
    state: ServerState,
    target: Target,
    events: AsyncIterator[watching.WatchEvent],
    *,
    timeout: int,
    bookmarks: bool,
    accept: negotiation.Accept,
) -> None:
    """Write events as they come, bookmarks when the stream is quiet.

    One producer task per watch moves events into a queue; this loop waits on the queue
    under ``asyncio.timeout`` (cheap to cancel, unlike the event generator), so an event
    costs no new task and no ``asyncio.wait``: with a thousand watchers, that is most of
    the fan-out time saved.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout if timeout > 0 else None
    last_revision = str(state.store.backend.current_revision())
    queue: asyncio.Queue[object] = asyncio.Queue(maxsize=256)
    producer = asyncio.create_task(_produce(events, queue))
    stopper = asyncio.create_task(_stop_on(state, queue))
    try:
        while True:
            wait = BOOKMARK_INTERVAL
            if deadline is not None:
                wait = min(wait, deadline - loop.time())
                if wait <= 0:
                    return
            try:
                async with asyncio.timeout(wait):
                    item = await queue.get()
            except TimeoutError:
                if bookmarks and (deadline is None or loop.time() < deadline):
                    mark = watching.bookmark(target.info, int(last_revision))
                    await response.write(_line("BOOKMARK", mark))
                continue
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            assert isinstance(item, watching.WatchEvent)
            event = item
            if (
                event.type == "BOOKMARK"
                and not bookmarks
                and "annotations" not in event.object.get("metadata", {})
            ):
                continue
            obj = (
                event.object
                if event.type in ("ERROR", "BOOKMARK")
                else responses.shape_object(event.object, accept)
            )
            rv = event.object.get("metadata", {}).get("resourceVersion")
            if rv and event.type != "ERROR":
                last_revision = rv
            await response.write(_line(event.type, obj))
            if event.type == "ERROR":
                return
    finally:
        for task in (producer, stopper):
            task.cancel()
        for task in (producer, stopper):
            with contextlib.suppress(BaseException):
                await task


async def _produce(
    events: AsyncIterator[watching.WatchEvent], queue: asyncio.Queue[object]
) -> None:
    try:
        async for event in events:
            await queue.put(event)
    except asyncio.CancelledError:
        raise
    except Exception as err:  # surfaced by the pump, which ends the stream
        await queue.put(err)
        return
    await queue.put(_END)


async def _stop_on(state: ServerState, queue: asyncio.Queue[object]) -> None:
    await state.stopping.wait()
    await queue.put(_END)


_encoded: dict[tuple[str, int], tuple[object, bytes]] = {}


def _line(kind: str, obj: object) -> bytes:
    """One event line; watchers sharing an event object share its encoding too."""
    cache_key = (kind, id(obj))
    found = _encoded.get(cache_key)
    if found is not None and found[0] is obj:  # the held reference keeps the id unique
        return found[1]
    line = orjson.dumps({"type": kind, "object": obj}) + b"\n"
    if len(_encoded) >= 512:
        del _encoded[next(iter(_encoded))]
    _encoded[cache_key] = (obj, line)
    return line


async def _close(events: AsyncIterator[watching.WatchEvent]) -> None:
    aclose = getattr(events, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(BaseException):
            await aclose()
