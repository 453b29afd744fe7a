"""What the work agent needs from the managed cluster, as a protocol, and its Kubernetes
implementation.

The work agent never holds a concrete client for the managed cluster: it talks to a
:class:`SpokeClient`, the subset of :class:`~pyocm.runtime.client.Api`'s verbs it uses,
plus kind resolution. :class:`KubeSpoke` answers from a real (or embedded) cluster's
API through discovery, so any kind the cluster serves can be applied, CRDs included.
The fleet simulator answers from memory with the same verbs, so its clusters run this
same agent.

Contract of every implementation:

* errors are :class:`~pyocm.kube.status.ApiError` carrying the cluster's code and
  message (404 when absent, 409 on a conflict or a failed uid precondition, 422 for an
  invalid object, 403 when forbidden);
* :meth:`SpokeClient.kind_for` raises :class:`~pyocm.runtime.restmapper.NoKindMatchError`
  for a kind the cluster does not serve, and finds a CRD's kind once the CRD is served;
* returned objects are the cluster's own answer (with uid, resourceVersion, defaults);
* ``delete`` with ``uid`` never deletes a namesake created since.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api, path
from pyocm.runtime.restmapper import RESTMapper

Obj = dict[str, Any]
Propagation = Literal["Background", "Foreground", "Orphan"]


class SpokeClient(Protocol):
    async def kind_for(self, *, api_version: str, kind: str) -> Kind:
        """The served :class:`Kind` (plural, scope) of ``kind`` in ``api_version``."""
        ...

    async def get(self, kind: Kind, name: str, *, namespace: str | None = None) -> Obj: ...

    async def list(self, kind: Kind, *, namespace: str | None = None) -> list[Obj]:
        """Every object of ``kind`` (in ``namespace`` when given)."""
        ...

    async def create(self, kind: Kind, obj: Obj) -> Obj: ...

    async def update(self, kind: Kind, obj: Obj, *, subresource: str | None = None) -> Obj:
        """PUT ``obj``; its ``metadata.resourceVersion`` makes the write conditional."""
        ...

    async def apply(self, kind: Kind, obj: Obj, *, field_manager: str, force: bool) -> Obj:
        """Server-side apply; a 409 names the conflicting fields unless ``force``."""
        ...

    async def delete(
        self,
        kind: Kind,
        name: str,
        *,
        namespace: str | None = None,
        uid: str | None = None,
        propagation: Propagation | None = None,
    ) -> None: ...

    async def dry_run_create_as(self, kind: Kind, obj: Obj, *, user: str) -> Obj:
        """Create ``obj`` with ``dryRun=All`` as ``user`` (impersonated: a service
        account's groups are implied), storing nothing. 403 when ``user`` may not, RBAC's
        escalation guard included; 409 AlreadyExists when the object exists. The work
        agent asks this before applying RBAC objects for a work's executor."""
        ...


async def current(spoke: SpokeClient, kind: Kind, obj: Obj) -> Obj | None:
    """The cluster's object of ``obj``'s name and namespace, or None when absent."""
    metadata = obj.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    try:
        return await spoke.get(kind, metadata["name"], namespace=metadata.get("namespace"))
    except ApiError as err:
        if err.code == 404:
            return None
        raise


class KubeSpoke:
    """A :class:`SpokeClient` over a Kubernetes API, resolving kinds by discovery."""

    def __init__(self, api: Api, *, mapper: RESTMapper | None = None) -> None:
        self.api = api
        self.mapper = mapper or RESTMapper(api)

    async def kind_for(self, *, api_version: str, kind: str) -> Kind:
        return await self.mapper.kind_for(api_version=api_version, kind=kind)

    async def get(self, kind: Kind, name: str, *, namespace: str | None = None) -> Obj:
        return await self.api.get(kind, name, namespace=namespace)

    async def list(self, kind: Kind, *, namespace: str | None = None) -> list[Obj]:
        found = await self.api.list_all(kind, namespace=namespace)
        return [item for item in found.get("items") or [] if isinstance(item, dict)]

    async def create(self, kind: Kind, obj: Obj) -> Obj:
        return await self.api.create(kind, obj)

    async def update(self, kind: Kind, obj: Obj, *, subresource: str | None = None) -> Obj:
        return await self.api.update(kind, obj, subresource=subresource)

    async def apply(self, kind: Kind, obj: Obj, *, field_manager: str, force: bool) -> Obj:
        return await self.api.apply(kind, obj, field_manager=field_manager, force=force)

    async def delete(
        self,
        kind: Kind,
        name: str,
        *,
        namespace: str | None = None,
        uid: str | None = None,
        propagation: Propagation | None = None,
    ) -> None:
        await self.api.delete(kind, name, namespace=namespace, uid=uid, propagation=propagation)

    async def dry_run_create_as(self, kind: Kind, obj: Obj, *, user: str) -> Obj:
        meta = obj.get("metadata")
        namespace = meta.get("namespace") if isinstance(meta, dict) else None
        answer = await self.api.request(
            "POST",
            path(kind, namespace=namespace),
            params={"dryRun": "All"},
            body=obj,
            headers={"Impersonate-User": user},
        )
        return answer if isinstance(answer, dict) else {}
