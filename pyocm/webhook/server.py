"""The webhook server: one POST route per webhook (upstream's paths) and ``/convert``.

Each route answers an AdmissionReview with its webhook's rule
(:func:`pyocm.hooks.admission.answer`); ``/convert`` answers a ConversionReview with the
add-on conversion (:func:`pyocm.hooks.conversion.review.review`), as upstream's
``cluster-manager-addon-webhook`` does. A body that is no review gets HTTP 400 (with the
review's ``Errored`` answer in the body); a seam that fails (the hub unreachable for a
SubjectAccessReview) answers a 500 denial, which kube-apiserver treats per the
configuration's failurePolicy (``Fail`` in upstream's).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web

from pyocm.base import metrics
from pyocm.hooks import admission, webhooks
from pyocm.hooks.conversion import review as conversion
from pyocm.hooks.request import Config, Seams
from pyocm.hooks.webhooks import Webhook
from pyocm.runtime.serving import serve
from pyocm.webhook.certs import ReloadingCertificate

log = logging.getLogger(__name__)
CONVERT_PATH = "/convert"
#: controller-runtime's webhook server's limit (aiohttp's default is 1 MiB): an UPDATE
#: review carries the object twice, so a work near the 500 KiB manifest limit needs more.
MAX_REQUEST_BYTES = 7 * 1024 * 1024
Handler = Callable[[web.Request], Awaitable[web.Response]]


@web.middleware
async def _measured(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """controller-runtime's webhook metrics, by path: requests by code, in flight, latency.
    Only the served paths are counted: a label per path a caller invents would grow without end."""
    if request.match_info.route.resource is None:
        return await handler(request)
    stats = metrics.webhook_stats(request.path)
    stats.in_flight += 1
    started = time.perf_counter()
    code = 500
    try:
        response = await handler(request)
        code = response.status
        return response
    except web.HTTPException as err:
        code = err.status
        raise
    finally:
        stats.in_flight -= 1
        stats.record(code, time.perf_counter() - started)


def build_app(*, config: Config, seams: Seams) -> web.Application:
    app = web.Application(client_max_size=MAX_REQUEST_BYTES, middlewares=[_measured])
    for webhook in webhooks.enabled(config):
        app.router.add_post(webhook.path, _admission(webhook, config, seams))
    app.router.add_post(CONVERT_PATH, _convert)
    return app


def _json(body: Any, *, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")


async def _document(request: web.Request) -> Any:
    try:
        return orjson.loads(await request.read())
    except orjson.JSONDecodeError:
        return None


def _admission(webhook: Webhook, config: Config, seams: Seams) -> Handler:
    async def handle(request: web.Request) -> web.Response:
        document = await _document(request)
        try:
            return _json(await admission.answer(document, webhook, config, seams))
        except admission.NotAReview as err:
            return _json(admission.errored(document, 400, str(err)), status=400)
        except Exception as err:  # a seam failed: deny, as controller-runtime's Errored
            log.exception("%s: the review failed", webhook.name)
            return _json(admission.errored(document, 500, str(err)))

    return handle


async def _convert(request: web.Request) -> web.Response:
    document = await _document(request)
    if not isinstance(document, dict):
        return _json({"message": "the body is not a ConversionReview"}, status=400)
    try:
        return _json(conversion.review(document))
    except ValueError as err:
        return _json({"message": str(err)}, status=400)


@contextlib.asynccontextmanager
async def serving(
    app: web.Application, *, host: str | None, port: int, certificate: ReloadingCertificate
) -> AsyncIterator[list[str]]:
    """Serve ``app`` over TLS while inside; yields the URLs bound (each logged as
    ``serving webhooks on https://HOST:PORT``)."""
    context = certificate.server_context
    async with serve(app, host=host or None, port=port, ssl_context=context) as addresses:
        urls = [f"https://{address}" for address in addresses]
        for url in urls:
            log.info("serving webhooks on %s", url)
        yield urls
