"""Where add-on agents run: the install namespaces, their Secrets and Leases.

The add-on registration asks an :class:`AddOnHost`, as the cluster registration asks a
:class:`~pyocm.registration.agent.managed.ManagedSide`, so a simulated cluster can answer
from memory. :class:`KubeAddOnHost` is the managed cluster's Kubernetes API.

Upstream's klusterlet operator creates the default install namespace with the label
``open-cluster-management.io/created-by-klusterlet: klusterlet`` and the annotation
``workload.openshift.io/allowed: management``; pyocm has no operator, so the agent creates
each install namespace, with the same metadata, before it writes a Secret there. A
namespace that exists already (an add-on's ManifestWork may bring its own) is left alone.
"""

from __future__ import annotations

import base64
from typing import Protocol

from pyocm.api import models, shapes
from pyocm.api.models.coordination_v1 import Lease
from pyocm.api.models.core_v1 import Namespace, Secret
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api

#: Upstream's klusterlet operator's namespace metadata (Klusterlet ``klusterlet``).
CREATED_BY_LABEL = "open-cluster-management.io/created-by-klusterlet"
CREATED_BY = "klusterlet"
WORKLOAD_ANNOTATION = "workload.openshift.io/allowed"
WORKLOAD = "management"


class AddOnHost(Protocol):
    async def ensure_namespace(self, name: str) -> None:
        """Create namespace ``name`` if it does not exist."""
        ...

    async def load_secret(self, namespace: str, name: str) -> dict[str, bytes] | None:
        """The Secret's data, or None when it does not exist."""
        ...

    async def save_secret(self, namespace: str, name: str, data: dict[str, bytes]) -> None:
        """Create or update the Secret with exactly ``data``."""
        ...

    async def delete_secret(self, namespace: str, name: str) -> None:
        """Delete the Secret; gone already is fine."""
        ...

    async def lease(self, namespace: str, name: str) -> Lease | None:
        """The Lease, or None when it does not exist."""
        ...


def install_namespace(name: str) -> Namespace:
    return {
        "metadata": {
            "name": name,
            "labels": {CREATED_BY_LABEL: CREATED_BY},
            "annotations": {WORKLOAD_ANNOTATION: WORKLOAD},
        }
    }


class KubeAddOnHost:
    """A managed cluster reached through its Kubernetes API."""

    def __init__(self, api: Api) -> None:
        self.api = api

    async def ensure_namespace(self, name: str) -> None:
        try:
            await self.api.get(kinds.NAMESPACE, name)
            return
        except ApiError as err:
            if err.code != 404:
                raise
        try:
            await self.api.create(kinds.NAMESPACE, models.wire(install_namespace(name)))
        except ApiError as err:
            if err.code != 409:
                raise

    async def load_secret(self, namespace: str, name: str) -> dict[str, bytes] | None:
        try:
            secret = await self.api.get(kinds.SECRET, name, namespace=namespace)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        data = shapes.string_map(secret.get("data"))
        return {key: base64.b64decode(value) for key, value in data.items()}

    async def save_secret(self, namespace: str, name: str, data: dict[str, bytes]) -> None:
        encoded = {key: base64.b64encode(value).decode() for key, value in data.items()}
        try:
            current = await self.api.get(kinds.SECRET, name, namespace=namespace)
        except ApiError as err:
            if err.code != 404:
                raise
            body: Secret = {
                "metadata": {"name": name, "namespace": namespace},
                "type": "Opaque",
                "data": encoded,
            }
            await self.api.create(kinds.SECRET, models.wire(body))
            return
        await self.api.update(kinds.SECRET, {**current, "data": encoded})

    async def delete_secret(self, namespace: str, name: str) -> None:
        try:
            await self.api.delete(kinds.SECRET, name, namespace=namespace)
        except ApiError as err:
            if err.code != 404:
                raise

    async def lease(self, namespace: str, name: str) -> Lease | None:
        try:
            found = await self.api.get(kinds.LEASE, name, namespace=namespace)
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        return models.view(Lease, found)
