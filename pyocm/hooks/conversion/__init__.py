"""Converting custom resources between the versions their CRD serves.

kube-apiserver stores each custom resource in its CRD's storage version and converts in
its codec, per request: a request body is converted to the storage version before it is
written, a stored object to the requested version as it is read (get, list, watch,
and the current object a patch or an apply starts from). A CRD whose versions differ in
shape names a conversion webhook; upstream OCM's converts the add-on kinds
(:mod:`.addon`). pyocm's server converts those kinds in-process, the way kube-apiserver
converts its built-in types: :func:`converter_for` gives the serving layer
(:mod:`pyocm.apiserver.apiextensions.customresource`) one function per kind, and
:func:`pyocm.hooks.conversion.review.review` answers a ConversionReview with the same
functions, so a webhook for a real kube-apiserver could serve them unchanged.

Kinds without a registered converter get the ``None`` strategy: only ``apiVersion``
changes.

A converter takes an object (its ``apiVersion`` says which version it is in) and a target
version (``"v1beta1"``), never changes its argument, and returns the converted object, or
the argument itself when it is already at that version. It raises
:class:`ConversionError` for a version it does not know.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyocm.hooks.conversion import addon
from pyocm.hooks.conversion.addon import ConversionError, version_of

Obj = dict[str, Any]
Converter = Callable[[Obj, str], Obj]

__all__ = ["ConversionError", "Converter", "convert", "converter_for", "version_of"]

_CONVERTERS: dict[tuple[str, str], Converter] = {
    (addon.GROUP, addon.CLUSTER_MANAGEMENT_ADDON): addon.convert_cluster_management_addon,
    (addon.GROUP, addon.MANAGED_CLUSTER_ADDON): addon.convert_managed_cluster_addon,
}


def converter_for(group: str, kind: str) -> Converter:
    """The converter of ``kind`` in ``group``: a registered one, else the ``None``
    strategy's (only ``apiVersion`` changes)."""
    return _CONVERTERS.get((group, kind), _none_strategy)


def convert(obj: Obj, to_version: str) -> Obj:
    """``obj`` at ``to_version``, by the converter of its group and kind."""
    group = str(obj.get("apiVersion") or "").rpartition("/")[0]
    return converter_for(group, str(obj.get("kind") or ""))(obj, to_version)


def _none_strategy(obj: Obj, to_version: str) -> Obj:
    group, _, version = str(obj.get("apiVersion") or "").rpartition("/")
    if version == to_version:
        return obj
    return {**obj, "apiVersion": f"{group}/{to_version}" if group else to_version}
