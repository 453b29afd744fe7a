"""Calling a webhook over TLS, as kube-apiserver's webhook client does.

A ``url`` is called as given. A ``service`` is called as
``https://<name>.<namespace>.svc:<port><path>``: pyocm has no kube-proxy, so the address
comes from the Service's Endpoints (kube-apiserver's endpoint routing,
``util/proxy.ResolveEndpoint``), while TLS verifies the name ``<name>.<namespace>.svc``.
Only ``caBundle`` is trusted when it is given, else the system's roots. Each call has
the webhook's ``timeoutSeconds``, also sent as ``?timeout=<n>s``.

Failures are :class:`CallError`, worded as Go's client words them
(``Post "<url>": dial tcp <addr>: connect: connection refused``, ``context deadline
exceeded``), so the client's error reads as kube-apiserver's.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import random
import re
import ssl
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson
from cryptography import x509

from pyocm.apiserver.admission.webhooks.config import Service, Webhook
from pyocm.apiserver.admission.webhooks.review import CallError
from pyocm.apiserver.registry.catalog import Catalog
from pyocm.apiserver.registry.store import Store
from pyocm.kube import status

Obj = dict[str, Any]
_SERVICE_TYPES = ("ClusterIP", "LoadBalancer", "NodePort")
#: TLS contexts kept, by caBundle; the oldest goes first. A hub has a few bundles, but
#: configurations come and go (and certificates rotate), so the cache is bounded.
_CONTEXTS_KEPT = 64
_PEM_BLOCK = re.compile(rb"-----BEGIN ([^-\r\n]*)-----\r?\n(.*?)-----END \1-----\r?\n?", re.S)


class Target:
    """Where one call goes: the URL kube would show, the address to connect to, and
    the TLS name to verify."""

    def __init__(self, *, shown: str, connect: str, server_name: str) -> None:
        self.shown = shown
        self.connect = connect
        self.server_name = server_name


class WebhookClient:
    def __init__(self, *, store: Store, catalog: Catalog) -> None:
        self._store = store
        self._catalog = catalog
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[bytes, ssl.SSLContext] = {}  # oldest first

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def call(self, hook: Webhook, body: Obj) -> Any:
        """POST the review; the decoded JSON answer, or :class:`CallError`."""
        timeout = hook.timeout_seconds
        shown = self._shown_url(hook, timeout)
        tls = self._context(hook)
        try:
            async with asyncio.timeout(timeout):
                target = await self._target(hook, shown)
                return await self._post(hook, target, body, tls)
        except TimeoutError:
            raise CallError(
                hook.name, f'failed to call webhook: Post "{shown}": context deadline exceeded'
            ) from None

    def _shown_url(self, hook: Webhook, timeout: int) -> str:
        if hook.service is not None:
            s = hook.service
            base = f"https://{s.name}.{s.namespace}.svc:{s.port}{s.path}"
        else:
            base = hook.url
        return f"{base}?timeout={timeout}s"

    async def _target(self, hook: Webhook, shown: str) -> Target:
        if hook.service is None:
            host = urlsplit(hook.url).hostname or ""
            return Target(shown=shown, connect=shown, server_name=host)
        try:
            address = await self._resolve(hook.service)
        except status.ApiError as err:
            raise CallError(
                hook.name, f'failed to call webhook: Post "{shown}": {err.message}'
            ) from None
        s = hook.service
        return Target(
            shown=shown,
            connect=f"https://{address}{s.path}?timeout={hook.timeout_seconds}s",
            server_name=f"{s.name}.{s.namespace}.svc",
        )

    async def _resolve(self, ref: Service) -> str:
        """``ResolveEndpoint``: the Service's port by number, then a random ready
        address of an Endpoints subset that has a port of the same name."""
        service = await self._get("services", ref.namespace, ref.name, "service")
        spec = service.get("spec") or {}
        kind = spec.get("type") or "ClusterIP"
        if kind not in _SERVICE_TYPES:
            raise status.bad_request(f'unsupported service type "{kind}"')
        port = next((p for p in spec.get("ports") or [] if p.get("port") == ref.port), None)
        if port is None:
            raise _unavailable(f'no service port {ref.port} found for service "{ref.name}"')
        endpoints = await self._get("endpoints", ref.namespace, ref.name, "endpoints")
        subsets = [s for s in endpoints.get("subsets") or [] if s.get("addresses")]
        random.shuffle(subsets)
        for subset in subsets:
            for candidate in subset.get("ports") or []:
                if (candidate.get("name") or "") == (port.get("name") or ""):
                    ip = str(random.choice(subset["addresses"]).get("ip") or "")
                    host = f"[{ip}]" if ":" in ip else ip
                    return f"{host}:{candidate.get('port')}"
        raise _unavailable(f'no endpoints available for service "{ref.name}"')

    async def _get(self, plural: str, namespace: str, name: str, singular: str) -> Obj:
        info = self._catalog.get("", "v1", plural)
        assert info is not None
        try:
            return await self._store.get(info, namespace=namespace, name=name)
        except status.ApiError as err:
            if err.code == 404:  # the lister's words
                raise status.ApiError(
                    code=404, reason="NotFound", message=f'{singular} "{name}" not found'
                ) from None
            raise

    async def _post(self, hook: Webhook, target: Target, body: Obj, tls: ssl.SSLContext) -> Any:
        session = self._session_for()
        try:
            async with session.post(
                target.connect,
                data=orjson.dumps(body),
                headers={"Content-Type": "application/json", "Accept": "application/json"},
                ssl=tls,
                server_hostname=target.server_name,
            ) as response:
                raw = await response.read()
                code = response.status
        except aiohttp.ClientConnectorCertificateError as err:
            raise self._failed(
                hook, target, f"tls: failed to verify certificate: {_cert_reason(err)}"
            ) from None
        except aiohttp.ClientConnectorError as err:
            raise self._failed(hook, target, _dial_reason(err)) from None
        except aiohttp.ClientError as err:
            raise self._failed(hook, target, str(err) or type(err).__name__) from None
        return _decode(hook, code, raw)

    def _failed(self, hook: Webhook, target: Target, reason: str) -> CallError:
        return CallError(hook.name, f'failed to call webhook: Post "{target.shown}": {reason}')

    def _session_for(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0), auto_decompress=True
            )
        return self._session

    def _context(self, hook: Webhook) -> ssl.SSLContext:
        """The TLS context trusting the webhook's caBundle. A bundle that does not load
        is kube's ``could not get REST client`` failure, left to the failurePolicy."""
        bundle = hook.ca_bundle
        ctx = self._contexts.get(bundle)
        if ctx is not None:
            return ctx
        try:
            ctx = ssl.create_default_context(cadata=bundle.decode() if bundle else None)
        except (ssl.SSLError, ValueError):  # ValueError: UnicodeDecodeError included
            raise CallError(
                hook.name,
                "could not get REST client: unable to load root certificates: "
                + ca_problem(bundle),
            ) from None
        if len(self._contexts) >= _CONTEXTS_KEPT:
            del self._contexts[next(iter(self._contexts))]
        self._contexts[bundle] = ctx
        return ctx


def ca_problem(data: bytes) -> str:
    """client-go's ``createErrorParsingCAData``: why a bundle gave no root certificate
    (the first block that is not PEM, or the first certificate that does not parse)."""
    rest = data
    while rest:
        block = _PEM_BLOCK.search(rest)
        der = _pem_body(block.group(2)) if block is not None else None
        if block is None or der is None:
            return "unable to parse bytes as PEM block"
        rest = rest[block.end() :]
        if block.group(1) != b"CERTIFICATE":
            continue
        try:
            x509.load_der_x509_certificate(der)
        except ValueError:
            return "failed to parse certificate: x509: malformed certificate"
    return "no valid certificate authority data seen"


def _pem_body(body: bytes) -> bytes | None:
    try:
        return base64.b64decode(b"".join(body.split()), validate=True)
    except binascii.Error:
        return None


def _unavailable(message: str) -> status.ApiError:
    return status.ApiError(code=503, reason="ServiceUnavailable", message=message)


def _dial_reason(err: aiohttp.ClientConnectorError) -> str:
    address = f"{err.host}:{err.port}"
    if isinstance(err.os_error, ConnectionRefusedError):
        return f"dial tcp {address}: connect: connection refused"
    return f"dial tcp {address}: {err.os_error.strerror or err.os_error}"


def _cert_reason(err: aiohttp.ClientConnectorCertificateError) -> str:
    cert_error = err.certificate_error
    text = getattr(cert_error, "verify_message", "") or str(cert_error)
    if "unable to get local issuer" in text or "self-signed" in text or "self signed" in text:
        return "x509: certificate signed by unknown authority"
    if "mismatch" in text or "Hostname" in text:
        return f"x509: certificate is not valid for the requested name ({text})"
    return f"x509: {text}"


def _decode(hook: Webhook, code: int, raw: bytes) -> Any:
    if not 200 <= code < 300:
        try:
            answer = orjson.loads(raw)
        except orjson.JSONDecodeError:
            answer = None
        if isinstance(answer, dict) and answer.get("kind") == "Status" and answer.get("message"):
            reason = str(answer["message"])
        else:
            text = raw.decode(errors="replace").strip()
            reason = f'an error on the server ("{text}") has prevented the request from succeeding'
        raise CallError(hook.name, f"failed to call webhook: {reason}")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        raise CallError(hook.name, f"failed to call webhook: {err}") from None
