"""Config references as the add-on API writes them, and their identities.

A config is named by group and resource (``ConfigGroupResource``) and namespace and
name (``ConfigReferent``); status records add the desired config's spec hash. Objects
are written as upstream's Go types marshal them (``group`` and ``specHash`` always
present, an empty ``namespace`` left out), so a pyocm status compares equal to an
upstream one and a patch between them is empty.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pyocm.api import wellknown

Obj = dict[str, Any]
#: ``(group, resource)``.
GR = tuple[str, str]
#: ``(namespace, name)``.
Referent = tuple[str, str]


def gr_of(obj: Mapping[str, Any]) -> GR:
    return (obj.get("group") or "", obj.get("resource") or "")


def referent_of(obj: Mapping[str, Any] | None) -> Referent:
    obj = obj or {}
    return (obj.get("namespace") or "", obj.get("name") or "")


def has_default(config: Mapping[str, Any]) -> bool:
    """A ``defaultConfigs`` item naming a config (not "" nor the reserved no-default)."""
    return config.get("name", "") not in ("", wellknown.ADDON_RESERVED_NO_DEFAULT)


def spec_hash(referent: Referent, hash_: str = "") -> Obj:
    """A ``ConfigSpecHash``."""
    found: Obj = {"name": referent[1], "specHash": hash_}
    if referent[0]:
        found = {"namespace": referent[0], **found}
    return found


def normalised_hash(obj: Mapping[str, Any] | None) -> Obj | None:
    """A ``ConfigSpecHash`` as upstream would write it back, for comparisons."""
    if obj is None:
        return None
    return spec_hash(referent_of(obj), obj.get("specHash") or "")


def sorted_grs(grs: Iterable[GR]) -> list[GR]:
    """Group, then resource: the order upstream writes config references in."""
    return sorted(grs)


def override(
    desired: dict[GR, list[Referent]], configs: Iterable[Mapping[str, Any]]
) -> dict[GR, list[Referent]]:
    """``overrideConfigMapByAddOnConfigs``: each group-resource named in ``configs``
    replaces the desired ones of that group-resource, in the order given, each config
    once."""
    merged = {gr: list(refs) for gr, refs in desired.items()}
    overwritten: set[GR] = set()
    for config in configs:
        gr = gr_of(config)
        if gr not in overwritten:
            merged[gr] = []
            overwritten.add(gr)
        referent = referent_of(config)
        if referent not in merged[gr]:
            merged[gr].append(referent)
    return merged


def defaults(configs: Iterable[Mapping[str, Any]]) -> dict[GR, list[Referent]]:
    """The CMA's default configs by group-resource (those naming a config, each once)."""
    found: dict[GR, list[Referent]] = {}
    for config in configs:
        if not has_default(config):
            continue
        referent = referent_of(config)
        refs = found.setdefault(gr_of(config), [])
        if referent not in refs:
            refs.append(referent)
    return found
