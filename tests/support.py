"""Helpers the tests share."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable
from typing import Any

from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api


async def eventually(check: Callable[[], Awaitable[Any]], *, timeout: float = 30) -> Any:
    """Call ``check`` until it returns something truthy without raising; return that.

    Controllers converge asynchronously: tests wait for the state of the world, not for
    a fixed time. An AssertionError or ApiError counts as "not yet"; the last one is
    reported if time runs out.
    """
    deadline = asyncio.get_running_loop().time() + timeout
    last: BaseException | None = None
    while asyncio.get_running_loop().time() < deadline:
        try:
            result = await check()
            if result:
                return result
        except (AssertionError, ApiError) as err:
            last = err
        await asyncio.sleep(0.05)
    raise AssertionError(f"not reached in {timeout}s; last: {last!r}")


RBAC = "rbac.authorization.k8s.io"


def subject(kind: str, name: str) -> dict[str, str]:
    """An RBAC subject: ``User`` or ``Group``."""
    return {"apiGroup": RBAC, "kind": kind, "name": name}


async def grant(api: Api, name: str, who: dict[str, str], rules: list[dict[str, Any]]) -> None:
    """A ClusterRole ``name`` with ``rules``, bound cluster-wide to ``who``."""
    await api.create(kinds.CLUSTER_ROLE, {"metadata": {"name": name}, "rules": rules})
    await api.create(
        kinds.CLUSTER_ROLE_BINDING,
        {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": name},
            "subjects": [who],
        },
    )


def cluster_set(name: str, selector: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    """A ManagedClusterSet body; ``selector`` is its ``spec.clusterSelector``."""
    if selector is not None:
        spec["clusterSelector"] = selector
    return {"metadata": {"name": name}, "spec": spec}


def exclusive_label(key: str, value: str) -> dict[str, Any]:
    return {"selectorType": "ExclusiveLabel", "exclusiveLabel": {"key": key, "value": value}}


def label_selector(match: dict[str, str]) -> dict[str, Any]:
    return {"selectorType": "LabelSelector", "labelSelector": {"matchLabels": match}}


async def service_account_token(api: Api, namespace: str, name: str) -> str:
    """A token of ServiceAccount ``namespace/name`` (a TokenRequest, as a kubelet asks)."""
    answer = await api.create(
        kinds.SERVICE_ACCOUNT,
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}},
        namespace=namespace,
        name=name,
        subresource="token",
    )
    return str(answer["status"]["token"])


def token_kubeconfig(server: str, ca_pem: bytes, token: str) -> dict[str, Any]:
    """A kubeconfig for ``server`` (trusting ``ca_pem``) with a bearer ``token``."""
    ca = base64.b64encode(ca_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "hub", "cluster": {"server": server, "certificate-authority-data": ca}}
        ],
        "users": [{"name": "user", "user": {"token": token}}],
        "contexts": [{"name": "user", "context": {"cluster": "hub", "user": "user"}}],
        "current-context": "user",
    }
