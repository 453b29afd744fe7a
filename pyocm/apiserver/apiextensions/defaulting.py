"""Structural defaulting, applied as apiextensions does on every write and on every read.

Reading applies defaults too, so objects stored before a CRD gained a default show it
(the stored bytes are only rewritten on the next write). :func:`apply_defaults` runs
kube-apiserver's two steps in order:

1. nulls the schema does not allow (``nullable`` unset) and has no default for are
   removed, so ``spec: {x: null}`` becomes ``spec: {}`` instead of failing validation;
2. defaults fill the missing fields of objects that exist. A default on ``spec.x``
   applies only when ``spec`` exists; a default ``{}`` on ``spec`` creates it, and then
   ``spec``'s own children get their defaults. A non-nullable field explicitly set to
   null gets its default. Defaults reach into array items and map values
   (``additionalProperties``) as well.

Only the structural part of the schema counts: defaults under ``anyOf``/``allOf``/
``oneOf``/``not`` are forbidden by CRD validation and never applied.
"""

from __future__ import annotations

from typing import Any

from pyocm.apiserver.apiextensions.schema import MISSING, CompiledSchema, Node


def apply_defaults(obj: Any, compiled: CompiledSchema) -> None:
    """Drop disallowed nulls, then fill in defaults; mutates ``obj`` in place."""
    drop_null_fields(obj, compiled.root)
    default_value(obj, compiled.root)


def drop_null_fields(value: Any, node: Node | None) -> None:
    """Remove object fields set to null that their schema neither allows nor defaults."""
    if node is None:
        return
    if isinstance(value, dict):
        properties, additional = node.properties, node.additional
        nulls: list[str] = []
        for key, item in value.items():
            # Every read of a custom resource walks it here; scalars, most of an object,
            # are passed over without a call.
            if item is None:
                sub = properties.get(key) or additional
                if sub is not None and not sub.nullable and sub.default is MISSING:
                    nulls.append(key)
            elif isinstance(item, (dict, list)):
                drop_null_fields(item, properties.get(key) or additional)
        for key in nulls:
            del value[key]
    elif isinstance(value, list) and node.items is not None:
        for item in value:
            if isinstance(item, (dict, list)):
                drop_null_fields(item, node.items)


def default_value(value: Any, node: Node | None) -> None:
    """Fill in ``node``'s defaults below ``value``; defaults are deep-copied, never shared."""
    if node is None or not node.walk_defaults:
        return
    if isinstance(value, dict):
        for key, prop in node.properties.items():
            if prop.default is not MISSING and (
                key not in value or (value[key] is None and not prop.nullable)
            ):
                value[key] = copy_json(prop.default)
        for key, item in value.items():
            known = node.properties.get(key)
            if known is not None:
                default_value(item, known)
            elif node.additional is not None:
                default_value(_null_default(value, key, node.additional), node.additional)
    elif isinstance(value, list) and node.items is not None:
        for i in range(len(value)):
            default_value(_null_default(value, i, node.items), node.items)


def _null_default(container: Any, key: Any, node: Node) -> Any:
    """Replace a non-nullable null map value or list item by the node's default."""
    if container[key] is None and not node.nullable and node.default is not MISSING:
        container[key] = copy_json(node.default)
    return container[key]


def copy_json(value: Any) -> Any:
    """Deep copy of a JSON value (much cheaper than :func:`copy.deepcopy`)."""
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    return value
