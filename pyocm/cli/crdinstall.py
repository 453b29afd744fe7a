"""Install (or update) the OCM CustomResourceDefinitions through the hub's API.

The server knows nothing of OCM; the CRDs reach it the way ``kubectl apply`` would send
them, and the call waits until each one is Established.
"""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from pyocm.api import crds
from pyocm.pki import kubeconfig as kubeconfigs

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


class InstallError(RuntimeError):
    pass


async def install(*, kubeconfig: Path, timeout: float = 30.0) -> list[str]:
    info = kubeconfig_info(kubeconfig)
    headers = {"Content-Type": "application/json"}
    if info.token:
        headers["Authorization"] = f"Bearer {info.token}"
    names = []
    async with aiohttp.ClientSession(base_url=info.server, headers=headers) as session:
        tls = kubeconfigs.client_ssl_context(info)
        for crd in crds.render_all():
            names.append(await _apply(session, tls, crd))
        await _wait_established(session, tls, names, timeout=timeout)
    return names


def kubeconfig_info(path: Path) -> kubeconfigs.KubeconfigInfo:
    return kubeconfigs.load_kubeconfig(path)


async def _apply(session: aiohttp.ClientSession, tls: ssl.SSLContext, crd: dict[str, Any]) -> str:
    name = str(crd["metadata"]["name"])
    async with session.get(f"{CRD_PATH}/{name}", ssl=tls) as resp:
        if resp.status == 404:
            current = None
        elif resp.status == 200:
            current = await resp.json()
        else:
            raise InstallError(f"reading CRD {name}: HTTP {resp.status}: {await resp.text()}")
    if current is None:
        async with session.post(CRD_PATH, data=orjson.dumps(crd), ssl=tls) as resp:
            if resp.status not in (200, 201):
                raise InstallError(f"creating CRD {name}: HTTP {resp.status}: {await resp.text()}")
        return name
    if current.get("spec") == crd["spec"]:
        return name
    body = dict(crd)
    body["metadata"] = {**crd["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]}
    async with session.put(f"{CRD_PATH}/{name}", data=orjson.dumps(body), ssl=tls) as resp:
        if resp.status != 200:
            raise InstallError(f"updating CRD {name}: HTTP {resp.status}: {await resp.text()}")
    return name


async def _wait_established(
    session: aiohttp.ClientSession, tls: ssl.SSLContext, names: list[str], *, timeout: float
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    pending = set(names)
    while pending:
        for name in sorted(pending):
            async with session.get(f"{CRD_PATH}/{name}", ssl=tls) as resp:
                crd = await resp.json() if resp.status == 200 else {}
            conditions = (crd.get("status") or {}).get("conditions") or []
            if any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
                pending.discard(name)
        if pending:
            if loop.time() > deadline:
                raise InstallError(f"CRDs not established after {timeout:.0f}s: {', '.join(sorted(pending))}")
            await asyncio.sleep(0.05)
