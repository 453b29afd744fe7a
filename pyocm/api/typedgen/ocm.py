"""Typed models of the OCM kinds, walked from the very schemas their CRDs are rendered from.

Each kind's root is named after the kind; a nested object is named after its path
(``ManagedCluster`` → ``ManagedClusterSpec`` → ``ManagedClusterSpecTaint`` for an item
of ``spec.taints``). An object shaped exactly as one of the built-in types in
:mod:`pyocm.api.common` (a ``metav1.Condition``, a ``LabelSelector``...) is that shared
type, written once in ``models/common.py``. ``metadata`` is kube's ``ObjectMeta``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyocm.api import catalog, common, descriptor
from pyocm.api.typedgen.render import Field, Model, Module, sorted_models, unique

COMMON = "common"
OBJECT_META = "meta_v1.ObjectMeta"
#: The built-in types OCM kinds embed, by the name their model gets in ``models/common.py``.
SHARED: Mapping[str, Callable[[], Mapping[str, Any]]] = {
    "Condition": common.condition,
    "LabelSelector": common.label_selector,
    "LabelSelectorRequirement": common.label_selector_requirement,
    "ResourceRequirements": common.resource_requirements,
    "RoleRef": common.role_ref,
    "Toleration": common.toleration,
}
#: What decides a model's Python type; descriptions, patterns and defaults do not.
_TYPING_KEYS = (
    "type",
    "properties",
    "required",
    "items",
    "additionalProperties",
    "nullable",
    "x-kubernetes-int-or-string",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
)


def shape(schema: Mapping[str, Any]) -> str:
    """The part of ``schema`` that decides its Python type, as canonical text."""
    return json.dumps(_projection(schema), sort_keys=True)


def _projection(node: Any) -> Any:
    if not isinstance(node, Mapping):
        return node
    kept = {k: node[k] for k in _TYPING_KEYS if k in node}
    if "properties" in kept:
        kept["properties"] = {k: _projection(v) for k, v in kept["properties"].items()}
    for key in ("items", "additionalProperties"):
        if key in kept:
            kept[key] = _projection(kept[key])
    return kept


@dataclass
class _Walk:
    """The models found while walking the schemas of one module."""

    shared: Mapping[str, str]
    module: str
    models: list[Model] = field(default_factory=list)
    imports: set[str] = field(default_factory=set)

    def annotation(self, schema: Mapping[str, Any], name: str, path: str) -> str:
        """The Python type of ``schema``, registering the models it needs."""
        text = self._bare(schema, name, path)
        return f"{text} | None" if schema.get("nullable") else text

    def _bare(self, schema: Mapping[str, Any], name: str, path: str) -> str:
        if schema.get("x-kubernetes-int-or-string"):
            return "int | str"
        kind = schema.get("type")
        if kind == "array":
            return f"list[{self.annotation(schema['items'], _singular(name), path + '[*]')}]"
        if kind != "object":
            return _SCALARS.get(str(kind), "Any")
        if "properties" in schema:
            return self._object(schema, name, path)
        values = schema.get("additionalProperties")
        if isinstance(values, Mapping):
            return f"dict[str, {self.annotation(values, name + 'Value', path + '.*')}]"
        return "dict[str, Any]"

    def _object(self, schema: Mapping[str, Any], name: str, path: str) -> str:
        found = self.shared.get(shape(schema))
        if found is not None and found != name:
            return self._refer(COMMON, found)
        required = set(schema.get("required", ()))
        fields = tuple(
            Field(
                name=key,
                annotation=self._property(key, sub, name, path),
                required=key in required,
            )
            for key, sub in schema["properties"].items()
        )
        doc = _doc(str(schema.get("description", "")), path)
        self.models.append(Model(name=name, doc=doc, fields=fields))
        return name

    def _property(self, key: str, schema: Mapping[str, Any], owner: str, path: str) -> str:
        if not path and key == "metadata":
            self.imports.add("meta_v1")
            return OBJECT_META
        return self.annotation(schema, owner + key[:1].upper() + key[1:], f"{path}.{key}")

    def _refer(self, module: str, name: str) -> str:
        if module == self.module:
            return name
        self.imports.add(module)
        return f"{module}.{name}"


def _doc(description: str, path: str) -> str:
    """The description, then where the type sits in its kind (a root has no path)."""
    where = f"``{path}``" if path else ""
    return "\n\n".join(part for part in (description, where) if part)


_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}


def _singular(name: str) -> str:
    """The name of a list's item type: ``Taints`` → ``Taint``, ``Policies`` → ``Policy``."""
    if name.endswith("ies"):
        return name[:-3] + "y"
    if name.endswith("sses"):
        return name[:-2]
    if name.endswith("s") and not name.endswith(("ss", "us")):
        return name[:-1]
    return name + "Item"


def module_name(resource: descriptor.ResourceDescriptor) -> str:
    """``cluster_v1`` for ``cluster.open-cluster-management.io/v1``: the kind module's name."""
    return f"{resource.group.split('.', 1)[0]}_{resource.version}"


def common_module() -> Module:
    """``models/common.py``: the built-in types OCM kinds embed, from :mod:`pyocm.api.common`."""
    walk = _Walk(shared=_shared(), module=COMMON)
    for name, build in SHARED.items():
        schema = build()
        origin = f"As ``pyocm.api.common.{build.__name__}()`` defines it."
        walk.annotation({**schema, "description": schema.get("description") or origin}, name, "")
    return Module(
        name=COMMON,
        doc="Kubernetes built-in types that OCM kinds embed, as pyocm.api.common defines them.",
        source="pyocm.api.common",
        models=sorted_models(unique(walk.models)),
        imports=tuple(sorted(walk.imports)),
    )


def _shared() -> dict[str, str]:
    return {shape(build()): name for name, build in SHARED.items()}


def kind_modules() -> list[Module]:
    """One module per OCM group and version, holding every kind the catalog serves there."""
    shared = _shared()
    walks: dict[str, _Walk] = {}
    for resource in catalog.DESCRIPTORS:
        name = module_name(resource)
        walk = walks.setdefault(name, _Walk(shared=shared, module=name))
        walk.annotation(resource.schema, resource.kind, "")
    return [
        Module(
            name=name,
            doc=f"Typed models of the OCM kinds served as {_group_version(name)}.",
            source="the pyocm.api descriptors",
            models=sorted_models(unique(walk.models)),
            imports=tuple(sorted(walk.imports)),
        )
        for name, walk in walks.items()
    ]


def _group_version(module: str) -> str:
    resource = next(d for d in catalog.DESCRIPTORS if module_name(d) == module)
    return resource.api_version
