"""The only place that renders response bodies, including every ``Status`` error."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from aiohttp import web

from pyocm.apiserver.endpoints.negotiation import Accept
from pyocm.kube import status

Obj = dict[str, Any]
META_GV = "meta.k8s.io/v1"


def json_response(
    body: Any, *, code: int = 200, headers: Mapping[str, str] | None = None
) -> web.Response:
    return web.Response(
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


def shape_object(obj: Obj, accept: Accept) -> Obj:
    return partial_metadata(obj) if accept.partial_metadata else obj


def list_body(
    *, kind: str, api_version: str, revision: int, items: list[Obj], accept: Accept
) -> Obj:
    if accept.partial_metadata:
        return {
            "kind": "PartialObjectMetadataList",
            "apiVersion": META_GV,
            "metadata": {"resourceVersion": str(revision)},
            "items": [partial_metadata(i) for i in items],
        }
    return {
        "kind": f"{kind}List",
        "apiVersion": api_version,
        "metadata": {"resourceVersion": str(revision)},
        "items": items,
    }
