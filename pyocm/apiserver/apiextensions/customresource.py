"""Serving custom resources: a Strategy and a ResourceInfo per served CRD version.

The schema does the work: unknown fields are pruned (reported for ``fieldValidation``),
defaults are applied on every write and every read, and the object is validated with
every error reported by field path. Custom resources need ``metadata.resourceVersion``
on update, and track ``metadata.generation``.

Objects are stored in the CRD's storage version and served in the requested one, as
kube-apiserver's codec does it: the store hands the strategy each object it writes
(:meth:`CustomResourceStrategy.to_storage`) and each object it reads
(:meth:`CustomResourceStrategy.from_storage`, behind get, list, watch, and the current
object a patch or apply starts from), and the strategy converts with the kind's converter
from :mod:`pyocm.hooks.conversion`. A stored object is first defaulted by the schema
of the version it is stored in (kube-apiserver applies storage-version defaults when it
reads from etcd), then converted; so a ManagedClusterAddOn created in v1beta1 shows the
v1alpha1 ``installNamespace`` default as its ``v1alpha1-install-namespace`` annotation, as
on an upstream hub.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyocm.apiserver.apiextensions import defaulting, pruning, validation
from pyocm.apiserver.apiextensions.schema import CompiledSchema
from pyocm.apiserver.registry.printing import custom_resource_columns
from pyocm.apiserver.registry.resources import ALL_VERBS, ResourceInfo, SubresourceInfo
from pyocm.apiserver.registry.strategy import STATUS, Context, Obj, Strategy
from pyocm.hooks import conversion
from pyocm.kube import status
from pyocm.kube.status import FieldError

CRD_GROUP = "apiextensions.k8s.io"


@dataclass(frozen=True)
class Versions:
    """What the served versions of one CRD share: where objects are stored, each
    version's schema (for the defaults of a stored object's own version) and the kind's
    converter."""

    group: str
    storage: str
    schemas: Mapping[str, CompiledSchema | None]
    convert: conversion.Converter


class CustomResourceStrategy(Strategy):
    allow_unconditional_update = False
    tracks_generation = True
    builtin = False
    decodes_into_struct = False  # its schema prunes instead

    def __init__(
        self,
        *,
        kind: str,
        schema: CompiledSchema | None,
        subresources: tuple[str, ...],
        terminating: bool = False,
        version: str = "",
        versions: Versions | None = None,
    ) -> None:
        self.subresources = subresources
        self._kind = kind
        self._schema = schema
        self._version = version
        self._versions = versions
        self._terminating = terminating
        super().__init__()

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        if self._terminating:
            # apiextensions-apiserver refuses new instances of a CRD being deleted.
            raise status.ApiError(
                code=405,
                reason="MethodNotAllowed",
                message="create not allowed while custom resource definition is terminating",
            )
        super().prepare_for_create(obj, ctx)
        self._normalise(obj, ctx)

    def prepare_for_update(self, obj: Obj, old: Obj, ctx: Context) -> None:
        super().prepare_for_update(obj, old, ctx)
        self._normalise(obj, ctx)

    def _normalise(self, obj: Obj, ctx: Context) -> None:
        if self._schema is None:
            return
        removed = pruning.prune(obj, self._schema)
        ctx.warnings.extend(f'unknown field "{path}"' for path in removed)
        defaulting.apply_defaults(obj, self._schema)

    def validate_create(self, obj: Obj, ctx: Context) -> list[FieldError]:
        return self._validate(obj)

    def validate_update(self, obj: Obj, old: Obj, ctx: Context) -> list[FieldError]:
        return self._validate(obj)

    def _validate(self, obj: Obj) -> list[FieldError]:
        if self._schema is None:
            return []
        return validation.validate(obj, self._schema, kind=self._kind)

    def on_read(self, obj: Obj) -> None:
        if self._schema is not None:
            defaulting.apply_defaults(obj, self._schema)

    def to_storage(self, obj: Obj) -> Obj:
        """``obj`` (in whichever version its apiVersion names; without one, in this
        resource's) in the storage version."""
        versions = self._versions
        if versions is None or not versions.storage:
            return obj
        if not conversion.version_of(obj) and self._version:
            obj = {**obj, "apiVersion": f"{versions.group}/{self._version}"}
        return versions.convert(obj, versions.storage)

    def from_storage(self, obj: Obj) -> Obj:
        """A stored object, defaulted in its own version, converted to the served one."""
        versions = self._versions
        if versions is None or not self._version:
            return obj
        stored = conversion.version_of(obj)
        if not stored:  # stored without apiVersion: it is in the storage version
            stored = versions.storage
            obj["apiVersion"] = f"{versions.group}/{stored}"
        if stored == self._version:
            return obj
        schema = versions.schemas.get(stored)
        if schema is not None:
            defaulting.apply_defaults(obj, schema)
        return versions.convert(obj, self._version)


def resources_for(crd: Obj) -> list[ResourceInfo]:
    """One ResourceInfo per served version of ``crd`` (all sharing one storage prefix)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = str(spec.get("group") or "")
    scope = spec.get("scope")
    kind = str(names.get("kind") or "")
    schemas = {
        str(version.get("name")): _compile(version) for version in spec.get("versions") or []
    }
    versions = Versions(
        group=group,
        storage=storage_version(crd),
        schemas=schemas,
        convert=conversion.converter_for(group, kind),
    )
    out = []
    for version in spec.get("versions") or []:
        if not version.get("served"):
            continue
        schema_doc = ((version.get("schema") or {}).get("openAPIV3Schema")) or None
        compiled = schemas[str(version.get("name"))]
        subs: list[SubresourceInfo] = []
        sub_spec = version.get("subresources") or {}
        if "status" in sub_spec:
            subs.append(SubresourceInfo(name=STATUS))
        if "scale" in sub_spec:
            subs.append(
                SubresourceInfo(name="scale", kind="Scale", group="autoscaling", version="v1")
            )
        strategy = CustomResourceStrategy(
            kind=kind,
            schema=compiled,
            subresources=tuple(s.name for s in subs if s.name == STATUS),
            terminating=bool((crd.get("metadata") or {}).get("deletionTimestamp")),
            version=str(version["name"]),
            versions=versions,
        )
        out.append(
            ResourceInfo(
                group=group,
                version=str(version["name"]),
                kind=kind,
                plural=str(names.get("plural") or ""),
                singular=str(names.get("singular") or kind.lower()),
                namespaced=scope == "Namespaced",
                strategy=strategy,
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                verbs=ALL_VERBS,
                subresources=tuple(s for s in subs if s.name == STATUS),
                columns=custom_resource_columns(version.get("additionalPrinterColumns") or ()),
                openapi_schema=schema_doc,
            )
        )
    return out


def _compile(version: Obj) -> CompiledSchema | None:
    schema_doc = ((version.get("schema") or {}).get("openAPIV3Schema")) or None
    return CompiledSchema.from_openapi(schema_doc) if schema_doc else None


def established(crd: Obj) -> bool:
    return any(
        c.get("type") == "Established" and c.get("status") == "True"
        for c in (crd.get("status") or {}).get("conditions") or []
    )


def storage_version(crd: Obj) -> str:
    for version in (crd.get("spec") or {}).get("versions") or []:
        if version.get("storage"):
            return str(version.get("name"))
    return ""


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
