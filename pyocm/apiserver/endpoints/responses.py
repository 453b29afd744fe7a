"""The only place that renders response bodies, including every ``Status`` error."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from pyocm.apiserver.endpoints.negotiation import Accept, parse_accept
from pyocm.apiserver.registry import printing
from pyocm.apiserver.registry.printing import Column
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.kube import status

Obj = dict[str, Any]
META_GV = "meta.k8s.io/v1"


class Answer(web.Response):
    """A response that lets go of its body once it is written.

    aiohttp's keep-alive loop keeps a connection's last request and response bound while
    it waits for the next request, so each idle agent connection would otherwise hold
    its last answer (and orjson allocates at least 4 KiB for one) until it spoke again.
    """

    async def write_eof(self, data: bytes = b"") -> None:
        await super().write_eof(data)
        self.body = None


def json_response(
    body: Any, *, code: int = 200, headers: Mapping[str, str] | None = None
) -> web.Response:
    return Answer(
        body=orjson.dumps(body),
        status=code,
        content_type="application/json",
        headers=headers,
    )


def error_response(err: status.ApiError) -> web.Response:
    return json_response(err.status(), code=err.code, headers=err.headers or None)


def partial_metadata(obj: Obj) -> Obj:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": META_GV,
        "metadata": obj.get("metadata", {}),
    }


INCLUDE_OBJECT = ("None", "Metadata", "Object")


@dataclass(frozen=True)
class Shape:
    """The form a read answers in: the objects themselves, their metadata only, or the
    Table ``kubectl get`` prints (``columns`` are the resource's)."""

    accept: Accept
    columns: tuple[Column, ...] = ()
    include_object: str = "Metadata"

    @classmethod
    def of(cls, request: web.Request, info: ResourceInfo) -> Shape:
        accept = parse_accept(request.headers.get("Accept"))
        include = request.query.get("includeObject", "Metadata")
        if include not in INCLUDE_OBJECT:
            raise status.bad_request(
                f'includeObject: Unsupported value: "{include}": supported values: '
                + ", ".join(f'"{v}"' for v in INCLUDE_OBJECT)
            )
        return cls(accept=accept, columns=info.columns, include_object=include)

    def object(self, obj: Obj) -> Obj:
        if self.accept.table:
            revision = (obj.get("metadata") or {}).get("resourceVersion")
            return printing.table(
                self.columns, [obj], include_object=self.include_object, revision=revision
            )
        return partial_metadata(obj) if self.accept.partial_metadata else obj

    def list(self, *, kind: str, api_version: str, metadata: Obj, items: list[Obj]) -> Obj:
        """``metadata`` is the list's (resourceVersion, and continue for a page)."""
        if self.accept.table:
            table = printing.table(
                self.columns, items, include_object=self.include_object, revision=None
            )
            return {**table, "metadata": metadata}
        if self.accept.partial_metadata:
            return {
                "kind": "PartialObjectMetadataList",
                "apiVersion": META_GV,
                "metadata": metadata,
                "items": [partial_metadata(i) for i in items],
            }
        return {
            "kind": f"{kind}List",
            "apiVersion": api_version,
            "metadata": metadata,
            "items": items,
        }
