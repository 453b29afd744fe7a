"""``--metrics-bind-address``: a process's controller and agent metrics, and its health
probes, on plain HTTP.

controller-runtime's flag and meaning: ``"0"`` (the default) serves nothing,
``HOST:PORT`` serves ``/metrics`` there (``:8080`` on every interface, port 0 on any
free port; the address bound is logged). The body is :func:`pyocm.base.metrics.render`:
the work queues' and reconcilers' families, as a hub serves them on its own /metrics.

``/healthz`` and ``/readyz`` answer on the same listener, as kube-apiserver's do: ``ok``
(200) when every check passes, else 500 naming the failed checks; ``?verbose`` lists
each (``[+]ping ok``). ``ping`` always passes (the process answers); a command adds its
own readiness checks (the hub controllers: their caches synced).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping

from aiohttp import web

from pyocm.base import metrics
from pyocm.runtime.serving import serve

log = logging.getLogger(__name__)
#: controller-runtime's value that turns the metrics server off.
DISABLED = "0"
HELP = (
    'The address the metric endpoint binds to, HOST:PORT (":8080" for every interface); '
    f'"{DISABLED}" disables it.'
)


def parse_bind_address(text: str) -> tuple[str | None, int] | None:
    """(host, port) of ``text``; host None means every interface; None when disabled.

    Raises ValueError for anything but ``"0"``, ``HOST:PORT``, ``:PORT`` or ``[IPv6]:PORT``."""
    if text == DISABLED:
        return None
    host, colon, port = text.rpartition(":")
    if not colon or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f'"{text}" is not HOST:PORT (or "{DISABLED}" to disable)')
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise ValueError(f'"{text}": an IPv6 host is written in brackets, [HOST]:PORT')
    return (host or None), int(port)


async def _metrics(_: web.Request) -> web.Response:
    return web.Response(body=metrics.render(), headers={"Content-Type": metrics.CONTENT_TYPE})


#: A named health check: True when it passes.
Checks = Mapping[str, Callable[[], bool]]


def _probe(kind: str, checks: Checks) -> Callable[[web.Request], Awaitable[web.Response]]:
    every = {"ping": lambda: True, **checks}

    async def answer(request: web.Request) -> web.Response:
        results = {name: bool(check()) for name, check in every.items()}
        passed = all(results.values())
        if "verbose" in request.query or not passed:
            lines = [f"[+]{n} ok" if ok else f"[-]{n} failed: reason withheld"
                     for n, ok in results.items()]  # fmt: skip
            lines.append(f"{kind} check {'passed' if passed else 'failed'}")
            text = "\n".join(lines) + "\n"
        else:
            text = "ok"
        return web.Response(text=text, status=200 if passed else 500)

    return answer


@contextlib.asynccontextmanager
async def serving_metrics(address: str, *, ready: Checks | None = None) -> AsyncIterator[list[str]]:
    """Serve ``/metrics``, ``/healthz`` and ``/readyz`` (with the ``ready`` checks) on
    ``address`` (see :func:`parse_bind_address`) while inside; yields the metrics URLs
    bound (none when disabled). Leaving closes the listener and waits for the requests
    in flight."""
    bind = parse_bind_address(address)
    if bind is None:
        yield []
        return
    app = web.Application()
    app.router.add_get("/metrics", _metrics)
    app.router.add_get("/healthz", _probe("healthz", {}))
    app.router.add_get("/livez", _probe("livez", {}))
    app.router.add_get("/readyz", _probe("readyz", ready or {}))
    async with serve(app, host=bind[0], port=bind[1]) as addresses:
        urls = [f"http://{address}/metrics" for address in addresses]
        for url in urls:
            log.info("serving metrics on %s", url)
        yield urls
