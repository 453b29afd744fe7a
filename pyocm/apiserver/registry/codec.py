"""Objects to stored bytes and back.

Stored values never contain ``metadata.resourceVersion``: the revision of the write is the
resource version, filled in when the object is read, as the apiserver does over etcd.
"""

from __future__ import annotations

from typing import Any

import orjson

from pyocm.apiserver.storage.interface import KeyValue

Obj = dict[str, Any]


def encode(obj: Obj) -> bytes:
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "resourceVersion" in meta:
        rv = meta.pop("resourceVersion")
        try:
            return orjson.dumps(obj)
        finally:
            meta["resourceVersion"] = rv
    return orjson.dumps(obj)


def decode(kv: KeyValue) -> Obj:
    obj: Obj = orjson.loads(kv.value)
    obj.setdefault("metadata", {})["resourceVersion"] = str(kv.mod_revision)
    return obj


def decode_at(value: bytes, revision: int) -> Obj:
    obj: Obj = orjson.loads(value)
    obj.setdefault("metadata", {})["resourceVersion"] = str(revision)
    return obj
