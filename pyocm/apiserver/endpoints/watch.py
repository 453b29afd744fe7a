"""Watch: a chunked stream of newline-delimited JSON events.

A bookmark is sent ``watch_bookmark_interval`` seconds (server config) after the last
line when the client allows them (kopf reconnects a watch that is silent for 70 s;
client-go uses them to advance its resourceVersion). A bookmark carries the revision up
to which everything was sent or filtered out, which the store's progress notifications
keep current for quiet watches.
The stream ends cleanly at ``timeoutSeconds``, when the client goes away, or when the
server shuts down.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import orjson
from aiohttp import web

from pyocm.apiserver.endpoints import options, responses
from pyocm.apiserver.registry import watch as watching
from pyocm.apiserver.state import ServerState

if TYPE_CHECKING:
    from pyocm.apiserver.endpoints.resources import Target


def watch_timeout(requested: int | None, *, least: int) -> float:
    """Seconds the watch lasts: kube's ``timeout == 0`` rule, and a negative timeout ends
    it at once (its deadline has passed). Without timeoutSeconds (or with 0) a watch
    still ends eventually: kube-apiserver picks a random time between
    --min-request-timeout (``least``, 1800 s by default) and twice that, so re-watches
    (from the last resourceVersion) spread out."""
    if not requested:
        return least * (1.0 + random.random())
    return float(max(requested, 0))


async def serve(request: web.Request, state: ServerState, target: Target) -> web.StreamResponse:
    opts = options.list_options(
        request.query, target.info, watch=True, required_labels=target.label_scope
    )
    wreq = watching.WatchRequest(
        info=target.info,
        namespace=target.namespace,
        labels=opts.labels,
        fields=opts.fields,
        resource_version=opts.resource_version,
        send_initial_events=opts.send_initial_events,
    )
    after = await watching.start_revision(state.store, wreq)
    shape = responses.Shape.of(request, target.info)
    response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    timeout = watch_timeout(opts.timeout_seconds, least=state.config.min_request_timeout)
    # A bookmark carries how far the store went, not the last revision sent: an agent
    # watching its own cluster resumes from a recent revision, and the store replays
    # seconds of history for it rather than the whole window.
    progress = _Progress(asyncio.get_running_loop().time())
    events = watching.stream(
        state.store,
        wreq,
        after=after,
        progress=progress.advance,
        progress_interval=state.config.watch_bookmark_interval / 2
        if opts.allow_bookmarks
        else None,
    )
    try:
        await _pump(
            response,
            state,
            target,
            events,
            progress,
            timeout=timeout,
            bookmarks=opts.allow_bookmarks,
            shape=shape,
        )
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        await _close(events)
    with contextlib.suppress(ConnectionResetError, RuntimeError):
        await response.write_eof()
    return response


async def _pump(
    response: web.StreamResponse,
    state: ServerState,
    target: Target,
    events: AsyncIterator[watching.WatchEvent],
    progress: _Progress,
    *,
    timeout: float,
    bookmarks: bool,
    shape: responses.Shape,
) -> None:
    """Write events as they come, bookmarks when the stream is quiet.

    A forwarder task iterates the events and writes each at once; this coroutine only
    wakes for the bookmark interval, the deadline and server shutdown. So an event costs
    one task wake-up per watcher, which is what a thousand watchers pay for. Writes from
    both are whole chunks (one ``writelines`` each), so they never interleave inside a line.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    forwarder = asyncio.create_task(
        _forward(response, events, progress, bookmarks=bookmarks, shape=shape)
    )
    stopping = state.stop_signal()
    interval = state.config.watch_bookmark_interval
    try:
        while True:
            now = loop.time()
            # A bookmark is due an interval after the last line of any kind, so a quiet
            # watch is never silent for longer than that.
            wait = progress.written_at + interval - now
            if deadline <= now:
                return
            wait = min(wait, deadline - now)
            if wait > 0:
                done, _ = await asyncio.wait(
                    {forwarder, stopping}, timeout=wait, return_when=asyncio.FIRST_COMPLETED
                )
                if forwarder in done:
                    forwarder.result()  # an error (a dropped connection) ends the stream
                    return
                if stopping in done:
                    return
                continue
            if bookmarks and progress.revision >= 0:
                mark = watching.bookmark(target.info, progress.revision)
                await response.write(_line("BOOKMARK", mark))
            progress.written_at = loop.time()
    finally:
        state.release(stopping)
        forwarder.cancel()
        await asyncio.gather(forwarder, return_exceptions=True)


class _Progress:
    """What the stream reports to the pump: the revision a bookmark may carry (-1 until
    the initial state is out), and when the last line was written (loop time)."""

    __slots__ = ("revision", "written_at")

    def __init__(self, now: float) -> None:
        self.revision = -1
        self.written_at = now

    def advance(self, revision: int) -> None:
        self.revision = revision


async def _forward(
    response: web.StreamResponse,
    events: AsyncIterator[watching.WatchEvent],
    progress: _Progress,
    *,
    bookmarks: bool,
    shape: responses.Shape,
) -> None:
    loop = asyncio.get_running_loop()
    async for event in events:
        if (
            event.type == "BOOKMARK"
            and not bookmarks
            and "annotations" not in event.object.get("metadata", {})
        ):
            continue
        obj = event.object if event.type in ("ERROR", "BOOKMARK") else shape.object(event.object)
        await response.write(_line(event.type, obj))
        progress.written_at = loop.time()
        if event.type == "ERROR":
            return
        # A watch waits far longer than it writes: holding the object sent last would
        # keep one decoded object alive per watcher (an agent's whole ManagedCluster).
        del event, obj


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
