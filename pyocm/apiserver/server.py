"""Assemble and run the API server.

``HubServer.start()`` opens the key material and the store, registers the built-in
resources, feeds the RBAC index and the CRD routes from storage commits, seeds what a
fresh cluster has (namespaces, default RBAC, ``kube-public/cluster-info``), starts the
in-process controllers (on shared storage as followers, until the caller's leader
election calls :meth:`HubServer.lead_controllers`), and listens with TLS requesting
(not requiring) client certificates so tokens work too. ``stop()`` ends open watches, stops the controllers and
closes the store consistently.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import socket
import ssl
from typing import Any

from aiohttp import web

from pyocm.apiserver import (
    admission_plugins,
    connections,
    pkifiles,
    seed,
    serviceips,
    tlsdefer,
)
from pyocm.apiserver.admission import ocm, webhooks
from pyocm.apiserver.admission.chain import Chain
from pyocm.apiserver.apiextensions.controller import CrdController
from pyocm.apiserver.authentication.authenticator import Authenticator
from pyocm.apiserver.authorization.index import RbacIndex
from pyocm.apiserver.config import ServerConfig
from pyocm.apiserver.controllers import manager as controllers
from pyocm.apiserver.endpoints import dispatch
from pyocm.apiserver.rbacfeed import RbacFeed
from pyocm.apiserver.registry import watchlag
from pyocm.apiserver.registry.builtin import builtin_resources
from pyocm.apiserver.registry.catalog import Catalog
from pyocm.apiserver.registry.store import Store
from pyocm.apiserver.state import STATE, ServerState
from pyocm.apiserver.storage.backends import open_backend
from pyocm.pki import kubeconfig

#: OpenSSL's flag (not named in Python's ssl module): skip the validity-window checks.
X509_V_FLAG_NO_CHECK_TIME = 0x200000

log = logging.getLogger("pyocm.apiserver")


class HubServer:
    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.port = config.port
        self.state: ServerState | None = None
        self._runner: web.AppRunner | None = None
        self._listener: connections.Listener | None = None
        self._controllers: controllers.Controllers | None = None
        self._crds: CrdController | None = None

    @property
    def url(self) -> str:
        host = self.config.host if self.config.host not in ("0.0.0.0", "::", "") else "127.0.0.1"
        host = f"[{host}]" if ":" in host else host
        return f"https://{host}:{self.port}"

    async def start(self) -> None:
        self.config.data_dir.mkdir(parents=True, exist_ok=True)
        pki = pkifiles.load_or_create(self.config)
        backend = open_backend(self.config.storage_url, **self.config.storage_options())
        await backend.start()
        catalog = Catalog()
        for info in builtin_resources():
            catalog.add(info)
        chain = Chain()
        store = Store(backend=backend, admission=chain)
        watchlag.track(store)  # from the first write: watches see deletions as kube's cache does
        rbac = RbacIndex()
        await RbacFeed(store=store, catalog=catalog, index=rbac).start()
        issuer = "https://kubernetes.default.svc.cluster.local"
        self.state = ServerState(
            config=self.config,
            store=store,
            catalog=catalog,
            authenticator=Authenticator(
                backend=backend, sa_public_key=pki.sa_key.public_key(), issuer=issuer
            ),
            rbac=rbac,
            ca=pki.ca,
            sa_private_key=pki.sa_key,
            issuer=issuer,
            version=_version(self.config.kube_version),
        )
        service_ips = serviceips.ServiceIPs(self.state, shared=self.config.shared_storage)
        await service_ips.start()  # before any write: it follows Services from here on
        for plugin in [
            *admission_plugins.default_plugins(self.state),
            service_ips,
            *ocm.ocm_plugins(self.state),
            *await webhooks.webhook_plugins(self.state),  # last, as in kube-apiserver
        ]:
            chain.add(plugin)
        crd_info = catalog.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        assert crd_info is not None
        self._crds = CrdController(store=store, catalog=catalog, crd_info=crd_info)
        await self._crds.start()
        sock = self._bind()
        self.port = sock.getsockname()[1]
        await seed.seed(self.state, server_url=self.url)
        self._write_admin_kubeconfig(pki)
        self._controllers = controllers.Controllers(self.state)
        # On shared storage other replicas may lead: the controllers follow until
        # lead_controllers() (the caller holds kube-controller-manager's Lease).
        await self._controllers.start(leading=not self.config.shared_storage)
        app = web.Application(client_max_size=0, handler_args={"max_field_size": 65536})
        app[STATE] = self.state
        app.router.add_route("*", "/{tail:.*}", dispatch.handle)
        # Idle authenticated connections stay open longer than clients keep them (90 s), so
        # an agent renewing its lease every minute reuses its connection and TLS session;
        # connections that never authenticated get the shorter limits of connections.py.
        self._runner = web.AppRunner(
            app,
            handler_cancellation=True,
            access_log=None,
            shutdown_timeout=2.0,
            keepalive_timeout=120.0,
        )
        await self._runner.setup()
        server = self._runner.server
        assert server is not None
        server.request_handler = connections.only_http1(server.request_handler)
        # Not a SockSite: the listener accepts connections itself, to count and cap them
        # from the moment they are accepted and to time out their TLS handshakes.
        self._listener = connections.Listener(
            server=server,
            ssl_context=self._tls(pki),
            limits=connections.Limits.of(self.config),
        )
        self._listener.start(sock)
        # Everything built so far (schemas, policy, compiled CRDs) lives as long as the
        # server: keep it out of the garbage collector's scans, which otherwise pause
        # every request and every watch fan-out for longer as the heap grows.
        gc.freeze()
        # Young-generation collections every 700 allocations (the default) fire many times
        # inside one watch fan-out; objects here are short-lived dicts, rarely cycles.
        gc.set_threshold(50_000, 20, 20)

    def _bind(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.config.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if self.config.reuse_port:
            # Replicas on one host bind the same port; the kernel hashes each new
            # connection to one of their listening sockets.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            sock.bind((self.config.host, self.config.port))
        except OSError as err:
            sock.close()
            raise OSError(
                f"cannot listen on {self.config.host}:{self.config.port}: {err.strerror}"
            ) from None
        sock.listen(4096)
        sock.setblocking(False)
        return sock

    def _tls(self, pki: pkifiles.HubPki) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(str(pki.serving_cert), str(pki.serving_key))
        ctx.load_verify_locations(cadata=pki.ca.cert_pem.decode())
        ctx.verify_mode = ssl.CERT_OPTIONAL
        # The authenticator checks the validity window and the issuer, so an expired,
        # not-yet-valid or unknown-CA certificate is answered 401 as kube-apiserver's
        # x509 authenticator does (a reset handshake tells a client nothing): OpenSSL
        # skips the window, and tlsdefer's verify callback lets "no trusted issuer"
        # through (when it can be installed safely; otherwise such a certificate still
        # fails the handshake). Every other chain error fails the handshake.
        ctx.verify_flags |= X509_V_FLAG_NO_CHECK_TIME
        # A connection's certificate is read once (connections.py): none may change it.
        ctx.options |= ssl.OP_NO_RENEGOTIATION
        # No TLS 1.3 session tickets: Kubernetes clients do not resume sessions, and
        # writing each ticket makes OpenSSL 3.0 decode the session (peer certificate
        # included) again, 40 % of the hub's CPU for a new connection (3.1 -> 1.85 ms).
        ctx.num_tickets = 0
        ctx.set_alpn_protocols(["http/1.1"])
        tlsdefer.defer_unknown_issuer(ctx)
        return ctx

    def _write_admin_kubeconfig(self, pki: pkifiles.HubPki) -> None:
        config = kubeconfig.build_kubeconfig(
            server=self.url,
            ca_pem=pki.ca.cert_pem,
            cert_pem=pki.admin_cert_pem,
            key_pem=pki.admin_key_pem,
        )
        with pkifiles.locked(self.config.pki_dir):  # replicas sharing the data directory
            kubeconfig.write_kubeconfig(self.config.admin_kubeconfig, config)

    @property
    def controllers_leading(self) -> bool:
        return self._controllers is not None and self._controllers.leading

    def lead_controllers(self) -> None:
        """Run the server's controllers (GC, CSR signer, namespace finalization, ...):
        this replica holds their Lease."""
        assert self._controllers is not None, "start() first"
        self._controllers.lead()

    async def follow_controllers(self) -> None:
        """Stop running them (the Lease is lost), keeping their queues current."""
        if self._controllers is not None:
            await self._controllers.follow()

    async def stop(self) -> None:
        if self.state is None:
            return
        self.state.stopping.set()
        if self._controllers is not None:
            await self._controllers.stop()
        if self._crds is not None:
            await self._crds.stop()
        if self._listener is not None:
            await self._listener.close()
        if self._runner is not None:
            await self._runner.cleanup()
        with contextlib.suppress(Exception):
            await self.state.store.backend.close()

    async def serve_forever(self, stop: asyncio.Event) -> None:
        await self.start()
        try:
            await stop.wait()
        finally:
            await self.stop()


def _version(git_version: str) -> dict[str, Any]:
    major, minor = git_version.lstrip("v").split(".")[:2]
    return {
        "major": major,
        "minor": minor,
        "gitVersion": git_version,
        "gitCommit": "pyocm",
        "gitTreeState": "clean",
        "buildDate": "2026-11-22T00:00:00Z",
        "goVersion": "python3",
        "compiler": "pyocm",
        "platform": "linux/amd64",
    }
