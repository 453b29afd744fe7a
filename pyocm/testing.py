"""pyocm's envtest: a real hub process on a loopback port with real TLS, and clients
for it.

``HubProcess`` runs ``python -m pyocm hub`` exactly as a user would. ``identity()`` issues
client certificates from the hub's CA for any user and groups, so tests can act as an
admin, an agent or an unprivileged user. ``Client`` is a thin aiohttp wrapper returning
status and decoded body, for asserting on the wire behaviour itself.
"""

from __future__ import annotations

import contextlib
import os
import re
import ssl
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

import aiohttp
import orjson

from pyocm.pki import kubeconfig
from pyocm.pki.ca import CertificateAuthority

#: What the hub prints once it serves; the port is the one it bound (``--listen :0``).
_READY = re.compile(r"pyocm hub listening on \S+ \(port (\d+)\)")


@dataclass(frozen=True)
class Identity:
    """A kubeconfig for one user; ``cert``/``key`` are PEM bytes."""

    user: str
    groups: tuple[str, ...]
    kubeconfig: Path
    cert: bytes
    key: bytes


class HubProcess:
    def __init__(
        self, data_dir: Path, *, port: int | None = None, extra_args: list[str] | None = None
    ) -> None:
        self.data_dir = Path(data_dir)
        #: The port asked for; 0 (the default) lets the hub bind any free one, read back
        #: from its ready line, so parallel tests never race for a port picked in advance.
        self.port = port or 0
        self.extra_args = extra_args or []
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = self.data_dir / "hub.log"
        self._log_offset = 0

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "admin.kubeconfig"

    @property
    def ca_pem(self) -> bytes:
        return (self.data_dir / "pki" / "ca.crt").read_bytes()

    def start(self, *, timeout: float = 60.0) -> HubProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        self._log_offset = log.tell()
        cmd = [
            sys.executable,
            "-m",
            "pyocm",
            "hub",
            "--data-dir",
            str(self.data_dir),
            "--listen",
            f"127.0.0.1:{self.port}",
            *self.extra_args,
        ]
        self.proc = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"}
        )
        log.close()
        self._wait_ready(timeout)
        return self

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"hub exited with {self.proc.returncode}:\n{self.log()}")
            ready = _READY.search(self.log()[self._log_offset :])
            if ready is not None:
                self.port = int(ready.group(1))
                return
            time.sleep(0.05)
        raise TimeoutError(f"hub not ready after {timeout}s:\n{self.log()}")

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def stop(self, *, timeout: float = 20.0) -> int:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.terminate()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> HubProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def ca(self) -> CertificateAuthority:
        pki = self.data_dir / "pki"
        return CertificateAuthority.load(
            (pki / "ca.crt").read_bytes(), (pki / "ca.key").read_bytes()
        )

    def identity(
        self, user: str, groups: tuple[str, ...] = (), *, valid_for: timedelta = timedelta(days=1)
    ) -> Identity:
        cert, key = self.ca().issue_client(
            common_name=user, organizations=list(groups), valid_for=valid_for
        )
        folder = self.data_dir / "identities"
        folder.mkdir(exist_ok=True)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in user)
        path = folder / f"{safe}.kubeconfig"
        kubeconfig.write_kubeconfig(
            path,
            kubeconfig.build_kubeconfig(
                server=self.url, ca_pem=self.ca_pem, cert_pem=cert, key_pem=key
            ),
        )
        return Identity(user=user, groups=groups, kubeconfig=path, cert=cert, key=key)

    def token_kubeconfig(self, name: str, token: str) -> Path:
        folder = self.data_dir / "identities"
        folder.mkdir(exist_ok=True)
        path = folder / f"{name}.kubeconfig"
        kubeconfig.write_kubeconfig(
            path, kubeconfig.build_kubeconfig(server=self.url, ca_pem=self.ca_pem, token=token)
        )
        return path


class Client:
    """Raw HTTP access to a hub for one kubeconfig, answering (status, body)."""

    def __init__(self, kubeconfig_path: Path) -> None:
        info = kubeconfig.load_kubeconfig(kubeconfig_path)
        self._init(
            server=info.server,
            ssl_context=kubeconfig.client_ssl_context(info),
            authorization=f"Bearer {info.token}" if info.token else None,
        )

    def _init(
        self, *, server: str, ssl_context: ssl.SSLContext, authorization: str | None
    ) -> None:
        """What every client holds: where, over which TLS, with which Authorization."""
        self._server = server
        self._ssl = ssl_context
        self._authorization = authorization
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Client:
        self.open()
        return self

    def open(self) -> None:
        headers = {"Authorization": self._authorization} if self._authorization else {}
        self._session = aiohttp.ClientSession(base_url=self._server, headers=headers)

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    @property
    def session(self) -> aiohttp.ClientSession:
        assert self._session is not None, "use Client as an async context manager"
        return self._session

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        raw: bytes | None = None,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
        params: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        data = raw if raw is not None else (orjson.dumps(body) if body is not None else None)
        hdrs = {"Content-Type": content_type} if data is not None else {}
        hdrs.update(headers or {})
        async with self.session.request(
            method, path, data=data, headers=hdrs, params=params, ssl=self._ssl
        ) as resp:
            text = await resp.read()
            try:
                return resp.status, orjson.loads(text) if text else None
            except orjson.JSONDecodeError:
                return resp.status, text.decode(errors="replace")

    async def exchange(
        self, method: str, path: str, body: Any = None, *, params: dict[str, str] | None = None
    ) -> tuple[int, list[str], Any]:
        """Like :meth:`request`, also answering the response's ``Warning`` headers."""
        data = orjson.dumps(body) if body is not None else None
        hdrs = {"Content-Type": "application/json"} if data is not None else {}
        async with self.session.request(
            method, path, data=data, headers=hdrs, params=params, ssl=self._ssl
        ) as resp:
            text = await resp.read()
            return (
                resp.status,
                resp.headers.getall("Warning", []),
                orjson.loads(text) if text else None,
            )

    async def get(self, path: str, **kw: Any) -> tuple[int, Any]:
        return await self.request("GET", path, **kw)

    async def post(self, path: str, body: Any, **kw: Any) -> tuple[int, Any]:
        return await self.request("POST", path, body=body, **kw)

    async def put(self, path: str, body: Any, **kw: Any) -> tuple[int, Any]:
        return await self.request("PUT", path, body=body, **kw)

    async def patch(
        self, path: str, body: Any, *, patch_type: str = "merge", **kw: Any
    ) -> tuple[int, Any]:
        types = {
            "merge": "application/merge-patch+json",
            "json": "application/json-patch+json",
            "strategic": "application/strategic-merge-patch+json",
        }
        return await self.request("PATCH", path, body=body, content_type=types[patch_type], **kw)

    async def delete(self, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        return await self.request("DELETE", path, body=body, **kw)

    def watch(
        self, path: str, *, params: dict[str, str]
    ) -> contextlib.AbstractAsyncContextManager[aiohttp.ClientResponse]:
        """Open a watch: the response, streaming, once the server has answered."""
        return self.session.get(path, params={"watch": "true", **params}, ssl=self._ssl)

    async def watch_lines(
        self,
        path: str,
        *,
        params: dict[str, str],
        limit: int,
        timeout: float = 10.0,
        headers: dict[str, str] | None = None,
    ) -> list[dict[str, Any]]:
        """Open a watch and collect up to ``limit`` events (or until ``timeout``)."""
        import asyncio

        events: list[dict[str, Any]] = []
        params = {"watch": "true", **params}

        async def read() -> None:
            async with self.session.get(
                path, params=params, headers=headers, ssl=self._ssl
            ) as resp:
                async for line in resp.content:
                    if line.strip():
                        events.append(orjson.loads(line))
                        if len(events) >= limit:
                            return

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(read(), timeout)
        return events
