"""What the agent needs from the managed cluster, as a protocol, and its Kubernetes implementation.

The registration logic never calls the managed cluster's API directly: it asks a
:class:`ManagedSide`. :class:`KubeManagedSide` answers from a real (or embedded)
cluster's API; the fleet simulator answers from memory.
"""

from __future__ import annotations

import base64
from typing import Any, Protocol

import yaml  # type: ignore[import-untyped,unused-ignore]

from pyocm.api import kinds as ocm
from pyocm.api import models, shapes
from pyocm.api.models.cluster_v1alpha1 import ClusterClaim
from pyocm.api.models.core_v1 import ConfigMap, Namespace, Secret
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError

AGENT_NAMESPACE = "open-cluster-management-agent"
IDENTITY_CONFIGMAP = "cluster-identity"


class ManagedSide(Protocol):
    async def load_secret(self, name: str) -> dict[str, bytes]:
        """The hub kubeconfig secret's data ({} when it does not exist)."""
        ...

    async def save_secret(self, name: str, data: dict[str, bytes]) -> None: ...

    async def load_identity(self) -> dict[str, str]:
        """The cluster's identity record (name, uid), kept across agent redeployments."""
        ...

    async def load_bootstrap(self, name: str) -> dict[str, Any] | None:
        """The kubeconfig under key ``kubeconfig`` of Secret ``name``, or None."""
        ...

    async def save_identity(self, data: dict[str, str]) -> None: ...

    async def cluster_uid(self) -> str:
        """A stable id of this cluster (the kube-system namespace's UID, as KEP-2149 proposes)."""
        ...

    async def version(self) -> str: ...

    async def nodes(self) -> list[dict[str, Any]]:
        """The Nodes, as listed (not read through a schema)."""
        ...

    async def claims(self) -> list[dict[str, Any]]:
        """ClusterClaims (``spec.value``) present on the cluster, as listed."""
        ...

    async def ensure_claim(self, name: str, value: str) -> None: ...

    async def health(self) -> tuple[bool, str]:
        """Whether the API server is healthy, and a detail for the condition message when not."""
        ...

    async def labelled_namespaces(self, label: str) -> list[str]:
        """Names of the namespaces whose ``label`` is ``"true"``."""
        ...

    async def label_namespace(self, name: str, *, label: str, value: str) -> None:
        """Set ``label`` on namespace ``name``, creating the namespace if it is missing."""
        ...


class KubeManagedSide:
    """A managed cluster reached through its Kubernetes API."""

    def __init__(self, api: Api, *, namespace: str = AGENT_NAMESPACE) -> None:
        self.api = api
        self.namespace = namespace
        self._namespace_ready = False

    async def _ensure_namespace(self) -> None:
        if self._namespace_ready:
            return
        try:
            await self.api.create(kinds.NAMESPACE, {"metadata": {"name": self.namespace}})
        except ApiError as err:
            if err.code != 409:
                raise
        self._namespace_ready = True

    async def load_secret(self, name: str) -> dict[str, bytes]:
        try:
            secret = await self.api.get(kinds.SECRET, name, namespace=self.namespace)
        except ApiError as err:
            if err.code == 404:
                return {}
            raise
        # Answers are not read through a schema: a null or ill-typed data reads as empty.
        data = shapes.mapping(secret.get("data"))
        return {key: base64.b64decode(value) for key, value in data.items()}

    async def save_secret(self, name: str, data: dict[str, bytes]) -> None:
        await self._ensure_namespace()
        encoded = {key: base64.b64encode(value).decode() for key, value in data.items()}
        body: Secret = {
            "metadata": {"name": name, "namespace": self.namespace},
            "type": "Opaque",
            "data": encoded,
        }
        await self._put(kinds.SECRET, models.wire(body))

    async def load_bootstrap(self, name: str) -> dict[str, Any] | None:
        data = await self.load_secret(name)
        if not data.get("kubeconfig"):
            return None
        try:
            loaded = yaml.safe_load(data["kubeconfig"].decode())
        except (yaml.YAMLError, UnicodeDecodeError):
            return None
        return loaded if isinstance(loaded, dict) else None

    async def load_identity(self) -> dict[str, str]:
        try:
            found = await self.api.get(
                kinds.CONFIGMAP, IDENTITY_CONFIGMAP, namespace=self.namespace
            )
        except ApiError as err:
            if err.code == 404:
                return {}
            raise
        return dict(shapes.mapping(found.get("data")))

    async def save_identity(self, data: dict[str, str]) -> None:
        await self._ensure_namespace()
        body: ConfigMap = {
            "metadata": {"name": IDENTITY_CONFIGMAP, "namespace": self.namespace},
            "data": data,
        }
        await self._put(kinds.CONFIGMAP, models.wire(body))

    async def _put(self, kind: kinds.Kind, body: dict[str, Any]) -> None:
        """Create or update ``body``, a Secret or a ConfigMap."""
        meta = body["metadata"]
        try:
            current = await self.api.get(kind, meta["name"], namespace=meta["namespace"])
        except ApiError as err:
            if err.code != 404:
                raise
            await self.api.create(kind, body)
            return
        await self.api.update(
            kind, {**current, **{k: v for k, v in body.items() if k != "metadata"}}
        )

    async def cluster_uid(self) -> str:
        return str((await self.api.get(kinds.NAMESPACE, "kube-system"))["metadata"]["uid"])

    async def version(self) -> str:
        return str((await self.api.server_version()).get("gitVersion") or "")

    async def nodes(self) -> list[dict[str, Any]]:
        return list((await self.api.list_all(kinds.NODE)).get("items") or [])

    async def claims(self) -> list[dict[str, Any]]:
        try:
            return list((await self.api.list_all(ocm.CLUSTER_CLAIM)).get("items") or [])
        except ApiError as err:
            if err.code == 404:  # no ClusterClaim API on this cluster
                return []
            raise

    async def ensure_claim(self, name: str, value: str) -> None:
        body: ClusterClaim = {"metadata": {"name": name}, "spec": {"value": value}}
        try:
            await self.api.create(ocm.CLUSTER_CLAIM, models.wire(body))
        except ApiError as err:
            if err.code not in (404, 409):
                raise

    async def labelled_namespaces(self, label: str) -> list[str]:
        found = await self.api.list_all(kinds.NAMESPACE, labels=f"{label}=true")
        return [item["metadata"]["name"] for item in found.get("items") or []]

    async def label_namespace(self, name: str, *, label: str, value: str) -> None:
        try:
            current = await self.api.get(kinds.NAMESPACE, name)
        except ApiError as err:
            if err.code != 404:
                raise
            namespace: Namespace = {"metadata": {"name": name, "labels": {label: value}}}
            await self.api.create(kinds.NAMESPACE, models.wire(namespace))
            return
        if shapes.mapping(current["metadata"].get("labels")).get(label) != value:
            await self.api.patch(kinds.NAMESPACE, name, {"metadata": {"labels": {label: value}}})

    async def health(self) -> tuple[bool, str]:
        """``/livez``, falling back to ``/healthz`` when it is missing or forbidden (as upstream)."""
        try:
            code, text = await self.api.probe("/livez")
            if code in (403, 404):
                code, text = await self.api.probe("/healthz")
        except ApiConnectionError as err:
            return False, f"status code: 0, {err}"
        if code == 200:
            return True, ""
        return False, f"status code: {code}, {text.strip()}"
