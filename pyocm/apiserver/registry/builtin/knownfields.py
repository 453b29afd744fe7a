"""The fields and types each built-in kind has: unknown fields are dropped and reported,
values of the wrong type refused.

kube-apiserver decodes a built-in object into its Go struct. A field the struct lacks
disappears, and ``fieldValidation`` decides whether that is an error (``Strict``: 400
``strict decoding error: unknown field "spec.foo"``), a warning (``Warn``) or silent
(``Ignore``); a value of the wrong JSON type fails the decoding (:mod:`godecode`). Both
follow Kubernetes' published schemas (:mod:`kubeschemas`), compiled once per kind: into a
structural schema for the CRD pruner, and into a Go type tree for the decoding check.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from pyocm.apiserver.apiextensions.pruning import prune
from pyocm.apiserver.apiextensions.schema import CompiledSchema
from pyocm.apiserver.registry.builtin import godecode, kubeschemas

OBJECT_META_FIELDS = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)
_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


@dataclass(frozen=True, slots=True)
class KindSchema:
    """One built-in kind's schema, in the two compiled forms its writes need."""

    pruning: CompiledSchema
    decoding: godecode.GoType


@cache
def kind_schema(group: str, version: str, kind: str) -> KindSchema | None:
    schema = kubeschemas.structural(group, version, kind)
    if schema is None:
        return None
    return KindSchema(CompiledSchema.from_openapi(schema), godecode.compile_decoder(schema))


@cache
def _object_meta() -> godecode.GoType:
    """A root whose one field is ObjectMeta, for the metadata of custom resources."""
    meta = kubeschemas.reference(_OBJECT_META)
    return godecode.compile_decoder(
        {"type": "object", "properties": {"metadata": meta}, "x-go-struct": "Object"}
    )


def decode_error(
    group: str, version: str, kind: str, body: dict[str, Any]
) -> godecode.Mismatch | None:
    """Go's decoding error for ``body`` as the built-in kind, or None if it decodes."""
    compiled = kind_schema(group, version, kind)
    return godecode.first_error(body, compiled.decoding) if compiled is not None else None


def metadata_decode_error(body: dict[str, Any]) -> godecode.Mismatch | None:
    """The decoding error of ``body``'s ObjectMeta alone (any kind, custom ones too)."""
    metadata = body.get("metadata")
    if not isinstance(metadata, dict):
        return None
    return godecode.first_error({"metadata": metadata}, _object_meta())


def drop_unknown(group: str, version: str, kind: str, body: dict[str, Any]) -> list[str]:
    """Remove fields the kind does not have (metadata included); return their paths."""
    compiled = kind_schema(group, version, kind)
    if compiled is None:
        return []
    order = {key: index for index, key in enumerate(body)}
    removed = prune(body, compiled.pruning)
    metadata = body.get("metadata")
    if isinstance(metadata, dict):
        for field in [f for f in metadata if f not in OBJECT_META_FIELDS]:
            removed.append(f"metadata.{field}")
            del metadata[field]
    # Reported in document order, as a streaming decoder meets them.
    return sorted(removed, key=lambda path: order.get(path.split(".")[0].split("[")[0], len(order)))
