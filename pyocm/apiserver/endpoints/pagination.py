"""List pagination: ``limit`` and ``continue``, each page from one consistent snapshot.

The first page is read at the current revision; its ``continue`` token names that
revision and the last key returned, and every later page is read as of the same
revision (the store keeps past states for as long as it keeps the changes since, as it
does for watches). A token whose revision has been compacted away answers 410 Expired,
as kube-apiserver does; the client starts a new list.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from pyocm.apiserver.registry.store import ListPage
from pyocm.kube import status

Obj = dict[str, Any]
_VERSION = "meta.k8s.io/v1"
EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter."
)


@dataclass(frozen=True)
class Page:
    limit: int
    #: The revision every page of this list is read at (0: not continuing, read now).
    revision: int = 0
    #: Items come after this key (relative to the resource's storage prefix).
    after: str = ""


def page_request(query: Mapping[str, str]) -> Page:
    raw_limit = query.get("limit", "")
    try:
        limit = int(raw_limit) if raw_limit else 0
    except ValueError:
        raise status.bad_request(
            f'limit: Invalid value: "{raw_limit}": must be an integer'
        ) from None
    token = query.get("continue", "")
    if not token:
        return Page(limit=max(limit, 0))
    if query.get("resourceVersion", "") not in ("", "0"):
        raise status.bad_request("specifying resource version is not allowed when using continue")
    revision, after = _decode(token)
    return Page(limit=max(limit, 0), revision=revision, after=after)


def list_metadata(page: ListPage, *, selected: bool) -> Obj:
    """The ListMeta of one page: its revision, and where the next page starts.

    ``selected``: a label or field selector applied, so what is left is not counted
    (kube-apiserver reports ``remainingItemCount`` only without selectors)."""
    metadata: Obj = {"resourceVersion": str(page.revision)}
    if page.last_key:
        metadata["continue"] = _encode(page.revision, page.last_key)
        if not selected:
            metadata["remainingItemCount"] = page.left
    return metadata


def _encode(revision: int, after: str) -> str:
    raw = orjson.dumps({"v": _VERSION, "rv": revision, "start": after + "\x00"})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(token: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        decoded = orjson.loads(raw)
    except (binascii.Error, ValueError, orjson.JSONDecodeError):
        raise status.bad_request(
            "continue key is not valid: it is not a token this server issued"
        ) from None
    if (
        not isinstance(decoded, dict)
        or decoded.get("v") != _VERSION
        or not isinstance(decoded.get("rv"), int)
        or decoded["rv"] <= 0
        or not isinstance(decoded.get("start"), str)
        or not decoded["start"].endswith("\x00")
    ):
        raise status.bad_request("continue key is not valid: it is not a token this server issued")
    return decoded["rv"], decoded["start"][:-1]
