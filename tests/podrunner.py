"""A stand-in kubelet for tests: runs the pod of a Deployment that was applied to a real
(pyocm) API server as a local process, the way a kubelet would run its container.

What it does, as a kubelet does:
- the container's ServiceAccount token (a TokenRequest), CA and namespace mounted where
  in-cluster clients read them (``PYOCM_SERVICE_ACCOUNT_DIR``: pyocm's override of
  /var/run/secrets/kubernetes.io/serviceaccount), and ``KUBERNETES_SERVICE_HOST/PORT``;
- the container's env (values, field refs, ConfigMap and Secret keys);
- Secret, ConfigMap and emptyDir volumes, kept in sync with the API (a changed Secret
  reaches the files, an optional missing one is an empty directory);
- restartPolicy Always, with a growing back-off;
- the Endpoints of the Services selecting the pod, once its readiness probe passes.

What it cannot do, and how it stands in:
- the image's entrypoint ``pyocm`` is this checkout's ``python -m pyocm``;
- no filesystem namespace: a volume's mountPath in the args is replaced by the local
  directory holding the volume;
- no network namespace: every containerPort (and probe port) is mapped to a free
  loopback port, and args naming it (``9443``, ``--port=9443``, ``:8080``) are rewritten
  to the mapped port; the Endpoints say 127.0.0.1 and the mapped port.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from tests.support import service_account_token

Obj = dict[str, Any]
SYNC_PERIOD = 0.5
MAX_BACKOFF = 5.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Pod:
    """One Deployment's pod (its first container) run as a local process."""

    def __init__(
        self, api: Api, *, ca_pem: bytes, deployment: Obj, workdir: Path, name: str | None = None
    ) -> None:
        self._api = api
        self._ca = ca_pem
        self.deployment = deployment
        self.namespace = str(deployment["metadata"]["namespace"])
        self.name = name or f"{deployment['metadata']['name']}-0"
        self.spec: Obj = deployment["spec"]["template"]["spec"]
        self.labels: dict[str, str] = deployment["spec"]["template"]["metadata"].get("labels", {})
        self.container: Obj = self.spec["containers"][0]
        self.dir = workdir / self.name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.dir / "pod.log"
        self.ports = {port: free_port() for port in self._declared_ports()}
        self.restarts = 0
        self._proc: subprocess.Popen[bytes] | None = None
        self._task: asyncio.Task[None] | None = None
        self._mounts: dict[str, Path] = {}
        self._env: dict[str, str] = {}

    # --- lifecycle ---------------------------------------------------------------

    async def start(self) -> Pod:
        await self._mount_service_account()
        await self._sync_volumes()
        self._env = await self._environment()
        self._spawn()
        self._task = asyncio.create_task(self._supervise(), name=f"pod {self.name}")
        return self

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.to_thread(self._proc.wait, 20)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                await asyncio.to_thread(self._proc.wait)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    async def wait_ready(self, *, timeout: float = 60.0) -> None:
        """Until the readiness probe passes; then the Services selecting the pod get it
        as their endpoint (as the endpoints controller would)."""
        probe = self.container.get("readinessProbe") or {}
        get = probe.get("httpGet")
        deadline = asyncio.get_running_loop().time() + timeout
        while not await self._probe(get):
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(
                    f"pod {self.name} not ready after {timeout}s:\n{self.log()[-3000:]}"
                )
            await asyncio.sleep(0.2)
        await self._publish_endpoints()

    # --- the container's process -------------------------------------------------

    def _spawn(self) -> None:
        with self.log_path.open("ab") as log:
            self._proc = subprocess.Popen(
                self._command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self._env,
                cwd=self.dir,
            )

    async def _supervise(self) -> None:
        backoff = 0.5
        while True:
            await asyncio.sleep(SYNC_PERIOD)
            await self._sync_volumes()
            assert self._proc is not None
            if self._proc.poll() is None:
                continue
            with self.log_path.open("ab") as log:
                log.write(f"--- exited with {self._proc.returncode}; restarting\n".encode())
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)
            self.restarts += 1
            self._spawn()

    def _command(self) -> list[str]:
        command = list(self.container.get("command") or ["pyocm"])
        if command[0] != "pyocm":
            raise ValueError(f"the image runs pyocm; this pod asks for {command[0]!r}")
        args = [*command[1:], *(self.container.get("args") or [])]
        return [sys.executable, "-m", "pyocm", *(self._rewrite(self._expand(a)) for a in args)]

    def _expand(self, arg: str) -> str:
        """``$(VAR)`` from the container's env, as the kubelet expands args (``$$`` escapes)."""

        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            return "$" if name is None else self._env.get(name, match.group(0))

        return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)", one, arg)

    def _rewrite(self, arg: str) -> str:
        arg = self._local_path(arg)
        for port, mapped in self.ports.items():
            if arg == str(port):
                return str(mapped)
            arg = re.sub(rf"=:{port}$", f"=127.0.0.1:{mapped}", arg)
            arg = re.sub(rf"^:{port}$", f"127.0.0.1:{mapped}", arg)
            arg = re.sub(rf"([=:]){port}$", rf"\g<1>{mapped}", arg)
        return arg

    def _local_path(self, arg: str) -> str:
        """``arg`` with a path under a volume's mountPath (alone or after ``=``) moved to
        the volume's local directory: the deepest mount holding it, once."""
        flag, equals, value = arg.rpartition("=") if arg.startswith("-") else ("", "", arg)
        for mount, local in sorted(self._mounts.items(), key=lambda m: -len(m[0])):
            if value == mount or value.startswith(mount.rstrip("/") + "/"):
                return f"{flag}{equals}{local}{value[len(mount.rstrip('/')) :]}"
        return arg

    def _declared_ports(self) -> list[int]:
        ports = {int(p["containerPort"]) for p in self.container.get("ports") or []}
        for probe in ("readinessProbe", "livenessProbe"):
            port = ((self.container.get(probe) or {}).get("httpGet") or {}).get("port")
            if port is not None:
                ports.add(self._port_number(port))
        return sorted(ports)

    def _port_number(self, port: int | str) -> int:
        """A probe's port: a number, or the name of one of the container's ports."""
        if isinstance(port, int):
            return port
        for declared in self.container.get("ports") or []:
            if declared.get("name") == port:
                return int(declared["containerPort"])
        raise ValueError(f"container {self.container['name']} has no port named {port!r}")

    async def _probe(self, get: Obj | None) -> bool:
        if get is None:
            return self._proc is not None and self._proc.poll() is None
        port = self.ports[self._port_number(get["port"])]
        scheme = str(get.get("scheme") or "HTTP").lower()
        url = f"{scheme}://127.0.0.1:{port}{get.get('path') or '/'}"
        try:
            async with aiohttp.ClientSession() as session, session.get(url, ssl=False) as answer:
                return 200 <= answer.status < 400
        except aiohttp.ClientError:
            return False

    # --- what a kubelet mounts and sets ------------------------------------------

    async def _mount_service_account(self) -> None:
        account = str(self.spec.get("serviceAccountName") or "default")
        token = await service_account_token(self._api, self.namespace, account)
        mount = self.dir / "serviceaccount"
        mount.mkdir(exist_ok=True)
        (mount / "token").write_text(token)
        (mount / "ca.crt").write_bytes(self._ca)
        (mount / "namespace").write_text(self.namespace)

    async def _environment(self) -> dict[str, str]:
        address = urlsplit(self._api.server)
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(self.dir),
            "XDG_DATA_HOME": str(self.dir / "data"),
            "PYTHONUNBUFFERED": "1",
            "KUBERNETES_SERVICE_HOST": str(address.hostname),
            "KUBERNETES_SERVICE_PORT": str(address.port),
            "PYOCM_SERVICE_ACCOUNT_DIR": str(self.dir / "serviceaccount"),
        }
        for item in self.container.get("env") or []:
            env[str(item["name"])] = await self._env_value(item)
        return env

    async def _env_value(self, item: Obj) -> str:
        if "value" in item:
            return str(item["value"])
        source = item.get("valueFrom") or {}
        if "fieldRef" in source:
            field = source["fieldRef"]["fieldPath"]
            known = {"metadata.namespace": self.namespace, "metadata.name": self.name}
            if field not in known:
                raise ValueError(f"the stand-in kubelet knows no field {field}")
            return known[field]
        for key, kind in (("secretKeyRef", kinds.SECRET), ("configMapKeyRef", kinds.CONFIGMAP)):
            if key in source:
                ref = source[key]
                data = (await self._api.get(kind, ref["name"], namespace=self.namespace)).get(
                    "data"
                ) or {}
                value = str(data[ref["key"]])
                return base64.b64decode(value).decode() if kind is kinds.SECRET else value
        raise ValueError(f"the stand-in kubelet cannot set env {item}")

    async def _sync_volumes(self) -> None:
        volumes = {str(v["name"]): v for v in self.spec.get("volumes") or []}
        for mount in self.container.get("volumeMounts") or []:
            volume = volumes[str(mount["name"])]
            local = self.dir / "volumes" / str(mount["name"])
            local.mkdir(parents=True, exist_ok=True)
            self._mounts[str(mount["mountPath"])] = local
            await self._fill(volume, local)

    async def _fill(self, volume: Obj, local: Path) -> None:
        if "emptyDir" in volume:
            return
        if "secret" in volume:
            source, kind, name = volume["secret"], kinds.SECRET, volume["secret"]["secretName"]
        elif "configMap" in volume:
            source, kind, name = volume["configMap"], kinds.CONFIGMAP, volume["configMap"]["name"]
        else:
            raise ValueError(f"the stand-in kubelet cannot mount volume {volume['name']}")
        try:
            obj = await self._api.get(kind, name, namespace=self.namespace)
        except ApiError as err:
            if err.code == 404 and source.get("optional"):
                return
            raise
        data = obj.get("data") or {}
        files = {
            str(k): (base64.b64decode(v) if kind is kinds.SECRET else str(v).encode())
            for k, v in data.items()
        }
        for item in source.get("items") or []:
            files[str(item["path"])] = files.pop(str(item["key"]))
        for path, content in files.items():
            target = local / path
            if not target.exists() or target.read_bytes() != content:
                # Atomically, as the kubelet swaps a volume's files: a reader never sees half.
                partial = target.with_name(f".{target.name}.new")
                partial.write_bytes(content)
                partial.replace(target)

    async def _publish_endpoints(self) -> None:
        services = (await self._api.list(kinds.SERVICE, namespace=self.namespace)).get(
            "items"
        ) or []
        for service in services:
            selector = (service.get("spec") or {}).get("selector") or {}
            if not selector or any(self.labels.get(k) != v for k, v in selector.items()):
                continue
            ports = []
            for port in service["spec"].get("ports") or []:
                target = int(port.get("targetPort") or port["port"])
                entry = {"port": self.ports.get(target, target), "protocol": "TCP"}
                if port.get("name"):
                    entry["name"] = port["name"]
                ports.append(entry)
            endpoints = {
                "apiVersion": "v1",
                "kind": "Endpoints",
                "metadata": {"name": service["metadata"]["name"], "namespace": self.namespace},
                "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": ports}],
            }
            try:
                await self._api.create(kinds.ENDPOINTS, endpoints)
            except ApiError as err:
                if err.code != 409:
                    raise
                current = await self._api.get(
                    kinds.ENDPOINTS, service["metadata"]["name"], namespace=self.namespace
                )
                endpoints["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                await self._api.update(kinds.ENDPOINTS, endpoints)


async def run_deployment(
    api: Api, *, ca_pem: bytes, namespace: str, name: str, workdir: Path
) -> Pod:
    deployment = await api.get(kinds.DEPLOYMENT, name, namespace=namespace)
    return await Pod(api, ca_pem=ca_pem, deployment=deployment, workdir=workdir).start()
