"""A dict-in, dict-out Kubernetes client for controllers and agents: the verbs.

:class:`Api` is controller-runtime's ``client.Client`` in spirit: get, list, watch,
create, update, patch (merge, JSON, strategic and server-side apply), delete, on any
:class:`~pyocm.kube.kinds.Kind` and its subresources, objects as plain dicts (the
shape the API serves, no model round trip). A Kind comes from the static constants in
:mod:`pyocm.kube.kinds` and :mod:`pyocm.api.kinds` (no discovery on hot paths) or, for anything else the
server serves, CRDs included, from a :class:`~pyocm.runtime.restmapper.RESTMapper`.
The wire is :mod:`~pyocm.runtime.transport`; failures are
:class:`~pyocm.kube.status.ApiError` or :class:`~pyocm.runtime.errors.ApiConnectionError`.

Nothing here knows pyocm's server: the same client drives a real kube-apiserver.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Mapping
from types import TracebackType
from typing import Any, Literal

from lightkube.config.kubeconfig import KubeConfig, SingleConfig

from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.runtime import incluster, watchstream
from pyocm.runtime.errors import ApiConnectionError as ApiConnectionError  # the verbs raise it
from pyocm.runtime.errors import api_error
from pyocm.runtime.options import (
    PATCH_CONTENT_TYPES,
    FieldValidation,
    PatchType,
    check_patch,
    write_query,
)
from pyocm.runtime.transport import Transport, load_config, pick_context

Obj = dict[str, Any]


class Api:
    """One connection to one API server.

    Build it with :meth:`from_kubeconfig`, :meth:`from_config` or
    :meth:`from_in_cluster`; close it with
    :meth:`close` or ``async with``.
    """

    def __init__(
        self,
        config: SingleConfig,
        *,
        timeout: float = 30.0,
        user_agent: str = "pyocm",
        max_connections: int | None = None,
    ) -> None:
        self._transport = Transport(
            config, timeout=timeout, user_agent=user_agent, max_connections=max_connections
        )
        # Bound once: the verbs below are the hot path of every controller and agent.
        self.request = self._transport.request

    @classmethod
    def from_kubeconfig(
        cls, path: str | os.PathLike[str], *, context: str | None = None, timeout: float = 30.0
    ) -> Api:
        """Connect with the kubeconfig file at ``path`` (its current context unless named)."""
        return cls(load_config(path, context=context), timeout=timeout)

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, Any],
        *,
        context: str | None = None,
        timeout: float = 30.0,
        max_connections: int | None = None,
    ) -> Api:
        """Connect with a kubeconfig given as a dict (such as ``build_kubeconfig``'s).

        ``max_connections`` caps the pool (requests beyond it wait for a free
        connection); a watch holds one connection for as long as it runs."""
        return cls(
            pick_context(KubeConfig.from_dict(dict(config)), context),
            timeout=timeout,
            max_connections=max_connections,
        )

    @classmethod
    def from_in_cluster(cls, *, timeout: float = 30.0) -> Api:
        """Connect as this pod's ServiceAccount (:mod:`pyocm.runtime.incluster`)."""
        return cls(incluster.config(), timeout=timeout)

    @property
    def server(self) -> str:
        return self._transport.server

    async def close(self) -> None:
        await self._transport.close()

    async def __aenter__(self) -> Api:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # Reads.

    async def get(
        self, kind: Kind, name: str, *, namespace: str | None = None, subresource: str | None = None
    ) -> Obj:
        return await self._object(
            "GET", path(kind, namespace=namespace, name=name, subresource=subresource)
        )

    async def list(
        self,
        kind: Kind,
        *,
        namespace: str | None = None,
        labels: str | None = None,
        fields: str | None = None,
        resource_version: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
    ) -> Obj:
        """The list object (``items`` plus ``metadata.resourceVersion``) of one page."""
        params = _query(
            labelSelector=labels,
            fieldSelector=fields,
            resourceVersion=resource_version,
            limit=limit,
            **{"continue": continue_token},
        )
        return await self._object("GET", path(kind, namespace=namespace), params=params)

    async def list_all(
        self,
        kind: Kind,
        *,
        namespace: str | None = None,
        labels: str | None = None,
        fields: str | None = None,
    ) -> Obj:
        """Every page of a list joined into one list object (resourceVersion of the first page)."""
        first = await self.list(kind, namespace=namespace, labels=labels, fields=fields, limit=500)
        items = list(first.get("items") or [])
        token = (first.get("metadata") or {}).get("continue")
        while token:
            page = await self.list(
                kind,
                namespace=namespace,
                labels=labels,
                fields=fields,
                limit=500,
                continue_token=token,
            )
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
        first["items"] = items
        first.setdefault("metadata", {}).pop("continue", None)
        return first

    async def watch(
        self,
        kind: Kind,
        *,
        namespace: str | None = None,
        labels: str | None = None,
        fields: str | None = None,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
    ) -> AsyncGenerator[tuple[str, Obj], None]:
        """Yield ``(type, object)`` until the server ends the stream.

        ``BOOKMARK`` events are yielded so callers can advance their resourceVersion; an
        ``ERROR`` event (typically 410 Gone) is raised as :class:`ApiError`.
        """
        params = _query(
            watch="true",
            allowWatchBookmarks="true",
            labelSelector=labels,
            fieldSelector=fields,
            resourceVersion=resource_version,
            timeoutSeconds=timeout_seconds,
        )
        target = path(kind, namespace=namespace)
        async with self._transport.open("GET", target, params=params, stream=True) as answer:
            if answer.status >= 300:
                raise api_error(answer.status, await answer.read(), answer.reason)
            async for event in watchstream.events(
                answer.content, name=f"watch of {kind} on {self.server}"
            ):
                yield event

    async def probe(self, target: str) -> tuple[int, str]:
        """GET a non-resource path (``/livez``, ``/healthz``); answer its status code and text."""
        async with self._transport.open("GET", target) as answer:
            return answer.status, (await answer.read()).decode(errors="replace")[:512]

    async def text(self, target: str) -> str:
        """GET a non-resource path that answers text (``/metrics``), raising :class:`ApiError`."""
        async with self._transport.open("GET", target) as answer:
            status, reason, data = answer.status, answer.reason, await answer.read()
        if status >= 300:
            raise api_error(status, data, reason)
        return data.decode(errors="replace")

    async def server_version(self) -> Obj:
        return await self._object("GET", "/version")

    # Writes. Each takes Kubernetes' write options where the API accepts them: see
    # pyocm.runtime.options for what field_manager, force, dry_run and field_validation do.

    async def create(
        self,
        kind: Kind,
        obj: Obj,
        *,
        namespace: str | None = None,
        subresource: str | None = None,
        name: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Obj:
        """POST ``obj``; the namespace defaults to ``obj``'s own."""
        namespace = namespace or _meta(obj).get("namespace")
        target = path(kind, namespace=namespace, name=name, subresource=subresource)
        params = write_query(
            field_manager=field_manager, dry_run=dry_run, field_validation=field_validation
        )
        return await self._object("POST", target, body=obj, params=params)

    async def update(
        self,
        kind: Kind,
        obj: Obj,
        *,
        subresource: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Obj:
        """PUT ``obj`` (its ``metadata.resourceVersion`` makes the write conditional)."""
        meta = _meta(obj)
        target = path(
            kind, namespace=meta.get("namespace"), name=str(meta["name"]), subresource=subresource
        )
        params = write_query(
            field_manager=field_manager, dry_run=dry_run, field_validation=field_validation
        )
        return await self._object("PUT", target, body=obj, params=params)

    async def patch(
        self,
        kind: Kind,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        type: PatchType = "merge",
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Obj:
        """PATCH ``name`` with a ``type`` patch; ``type="apply"`` is server-side apply
        (it needs ``field_manager``; ``force`` takes over conflicting fields)."""
        check_patch(type, field_manager=field_manager, force=force)
        target = path(kind, namespace=namespace, name=name, subresource=subresource)
        params = write_query(
            field_manager=field_manager,
            dry_run=dry_run,
            field_validation=field_validation,
            force=force,
        )
        return await self._object(
            "PATCH", target, body=patch, content_type=PATCH_CONTENT_TYPES[type], params=params
        )

    async def apply(
        self,
        kind: Kind,
        obj: Obj,
        *,
        field_manager: str,
        force: bool = False,
        dry_run: bool = False,
        subresource: str | None = None,
        field_validation: FieldValidation | None = None,
    ) -> Obj:
        """Server-side apply ``obj`` (a full intent: apiVersion, kind, metadata.name and
        the fields ``field_manager`` owns); creates it when missing. A field another
        manager owns with another value is a 409 Conflict whose ``details["causes"]``
        name each field, unless ``force``."""
        meta = _meta(obj)
        return await self.patch(
            kind,
            str(meta["name"]),
            obj,
            namespace=meta.get("namespace"),
            type="apply",
            subresource=subresource,
            field_manager=field_manager,
            force=force,
            dry_run=dry_run,
            field_validation=field_validation,
        )

    async def delete(
        self,
        kind: Kind,
        name: str,
        *,
        namespace: str | None = None,
        propagation: Literal["Background", "Foreground", "Orphan"] | None = None,
        uid: str | None = None,
        dry_run: bool = False,
    ) -> Obj:
        """DELETE; ``uid`` is a precondition so a recreated namesake is never deleted."""
        options: Obj = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation:
            options["propagationPolicy"] = propagation
        if uid:
            options["preconditions"] = {"uid": uid}
        if dry_run:
            options["dryRun"] = ["All"]
        return await self._object(
            "DELETE", path(kind, namespace=namespace, name=name), body=options
        )

    async def _object(self, method: str, target: str, **options: Any) -> Obj:
        answer = await self.request(method, target, **options)
        if not isinstance(answer, dict):
            raise ApiError(
                code=500, reason="InternalError", message=f"{method} {target} answered a non-object"
            )
        return answer


def path(
    kind: Kind,
    *,
    namespace: str | None = None,
    name: str | None = None,
    subresource: str | None = None,
) -> str:
    """The REST path of a collection, an object or an object's subresource."""
    parts = ["/api/v1" if not kind.group else f"/apis/{kind.group}/{kind.version}"]
    if kind.namespaced and namespace:
        parts.append(f"namespaces/{namespace}")
    parts.append(kind.plural)
    if name is not None:
        if not name:
            raise ValueError(f"an empty name addresses no {kind.kind}")
        parts.append(name)
        if subresource:
            parts.append(subresource)
    return "/".join(parts)


def _meta(obj: Obj) -> Obj:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _query(**values: Any) -> dict[str, str]:
    return {key: str(value) for key, value in values.items() if value is not None and value != ""}
