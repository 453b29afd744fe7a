"""Typed models of the built-in kinds pyocm's features use, from Kubernetes' published
OpenAPI definitions (as ``kubernetes-validate`` ships them, :mod:`pyocm.kube.kubedefs`).

:data:`KINDS` names the definitions to emit; each brings every definition it refers to.
A definition lands in the module of its API group and version (``io.k8s.api.core.v1.Node``
→ ``core_v1.Node``, ``io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`` → ``meta_v1``),
under its Go type name, as lightkube-models names them. Types with their own JSON form
are mapped by name: times are strings, ``IntOrString`` an int or a string, ``Quantity`` a
string or a number, ``RawExtension`` and ``FieldsV1`` any object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyocm.api.typedgen.render import Field, Model, Module, sorted_models
from pyocm.kube.kubedefs import definitions

_API = "io.k8s.api."
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
#: The built-in kinds (and shared types) pyocm's features read and write.
KINDS: tuple[str, ...] = (
    _META + "ObjectMeta",
    _META + "Status",
    _API + "core.v1.Namespace",
    _API + "core.v1.Secret",
    _API + "core.v1.ConfigMap",
    _API + "core.v1.ServiceAccount",
    _API + "core.v1.Node",
    _API + "core.v1.Event",
    _API + "events.v1.Event",
    _API + "coordination.v1.Lease",
    _API + "certificates.v1.CertificateSigningRequest",
    _API + "rbac.v1.ClusterRole",
    _API + "rbac.v1.ClusterRoleBinding",
    _API + "rbac.v1.Role",
    _API + "rbac.v1.RoleBinding",
    _API + "authorization.v1.SubjectAccessReview",
    _API + "authorization.v1.SelfSubjectAccessReview",
)
_BY_NAME: Mapping[str, str] = {
    _META + "Time": "str",
    _META + "MicroTime": "str",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "int | str",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "str | float",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "dict[str, Any]",
    _META + "FieldsV1": "dict[str, Any]",
}
_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}


def module_of(definition: str) -> str:
    """``core_v1`` for ``io.k8s.api.core.v1.Node``: the package's last two segments."""
    group, version = definition.split(".")[-3:-1]
    return f"{group}_{version}"


def _closure(roots: tuple[str, ...]) -> list[str]:
    """``roots`` and every definition they refer to, each once, in discovery order."""
    found: dict[str, None] = {}
    pending = list(roots)
    while pending:
        name = pending.pop(0)
        if name in found or name in _BY_NAME:
            continue
        found[name] = None
        pending += _references(definitions()[name])
    return list(found)


def _references(node: Any) -> list[str]:
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        own = [ref.rsplit("/", 1)[-1]] if isinstance(ref, str) else []
        return own + [r for value in node.values() for r in _references(value)]
    if isinstance(node, list):
        return [r for value in node for r in _references(value)]
    return []


def _annotation(node: Mapping[str, Any], module: str, imports: set[str]) -> str:
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in _BY_NAME:
            return _BY_NAME[name]
        target = module_of(name)
        short = name.rsplit(".", 1)[-1]
        if target == module:
            return short
        imports.add(target)
        return f"{target}.{short}"
    types = node.get("type") or ()
    kinds = [types] if isinstance(types, str) else [t for t in types if t != "null"]
    kind = kinds[0] if kinds else ""
    if kind == "array":
        return f"list[{_annotation(node.get('items') or {}, module, imports)}]"
    if kind == "object":
        values = node.get("additionalProperties")
        if isinstance(values, Mapping):
            return f"dict[str, {_annotation(values, module, imports)}]"
        return "dict[str, Any]"
    return _SCALARS.get(kind, "Any")


def _model(name: str, module: str, imports: set[str]) -> Model:
    definition = definitions()[name]
    required = set(definition.get("required") or ())
    fields = tuple(
        Field(name=key, annotation=_annotation(sub, module, imports), required=key in required)
        for key, sub in (definition.get("properties") or {}).items()
    )
    doc = str(definition.get("description") or name).split("\n\n", 1)[0]
    return Model(name=name.rsplit(".", 1)[-1], doc=doc, fields=fields)


def kind_modules(roots: tuple[str, ...] = KINDS) -> list[Module]:
    """One module per API group and version of the definitions ``roots`` need."""
    grouped: dict[str, list[str]] = {}
    for name in _closure(roots):
        grouped.setdefault(module_of(name), []).append(name)
    modules = []
    for module, names in sorted(grouped.items()):
        imports: set[str] = set()
        models = [_model(name, module, imports) for name in names]
        modules.append(
            Module(
                name=module,
                doc=f"Typed models of Kubernetes' {module.replace('_', '/')} types pyocm uses.",
                source="Kubernetes' OpenAPI definitions (kubernetes-validate)",
                models=sorted_models(models),
                imports=tuple(sorted(imports)),
            )
        )
    return modules
