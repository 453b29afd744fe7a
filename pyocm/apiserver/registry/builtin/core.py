"""Strategies of the core (``v1``) kinds Namespace, ServiceAccount and Node.

ConfigMaps and Secrets are in :mod:`pyocm.apiserver.registry.builtin.configdata`, core
Events with their ``events.k8s.io`` view in :mod:`pyocm.apiserver.registry.builtin.events`.
None of these kinds has a ``metadata.generation`` in Kubernetes, so none tracks it here.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pyocm.apiserver.registry.strategy import (
    STATUS,
    Context,
    FieldGetter,
    Obj,
    Strategy,
    copy_field,
    meta,
)
from pyocm.kube import names
from pyocm.kube.status import FieldError, invalid

FINALIZER_KUBERNETES = "kubernetes"
_STANDARD_FINALIZERS = (FINALIZER_KUBERNETES, "orphan", "foregroundDeletion")
NAME_LABEL = "kubernetes.io/metadata.name"


class ServiceAccountStrategy(Strategy):
    """Plain objects; the ``token`` subresource is served by its own handler."""

    tracks_generation = False


def _finalizer_errors(value: str, path: str) -> list[FieldError]:
    """A namespace finalizer is a qualified name, and a one-segment one must be standard."""
    errs = [invalid(path, value, msg) for msg in names.is_qualified_name(value)]
    if "/" not in value and value not in _STANDARD_FINALIZERS:
        errs.append(
            invalid(
                path, value, "name is neither a standard finalizer name nor is it fully qualified"
            )
        )
    return errs


def child(obj: Obj, key: str) -> dict[str, Any]:
    """``obj[key]`` as a dict, replacing an absent or null value with an empty one."""
    value = obj.get(key)
    if not isinstance(value, dict):
        value = obj[key] = {}
    return value


def _label_with_name(obj: Obj) -> None:
    # Kubernetes keeps this label equal to the name whatever the client sends.
    name = meta(obj).get("name")
    if name:
        child(meta(obj), "labels")[NAME_LABEL] = name


class NamespaceStrategy(Strategy):
    """``/status`` writes the status, ``/finalize`` the ``spec.finalizers``; the main
    resource writes neither."""

    subresources = (STATUS, "finalize")
    tracks_generation = False

    def name_validator(self, name: str) -> list[str]:
        return names.is_dns1123_label(name)

    def field_getters(self) -> Mapping[str, FieldGetter]:
        return {
            "status.phase": lambda o: str((o.get("status") or {}).get("phase") or ""),
            # Kept by Kubernetes for backward compatibility.
            "name": lambda o: str(meta(o).get("name") or ""),
        }

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        obj["status"] = {"phase": "Active"}
        spec = child(obj, "spec")
        finalizers = list(spec.get("finalizers") or [])
        if FINALIZER_KUBERNETES not in finalizers:
            finalizers.append(FINALIZER_KUBERNETES)
        spec["finalizers"] = finalizers
        _label_with_name(obj)

    def prepare_for_update(self, obj: Obj, old: Obj, ctx: Context) -> None:
        if ctx.subresource == STATUS:
            copy_field(obj, old, "spec")
            status = obj.get("status")
            if isinstance(status, dict) and not status.get("phase"):
                status["phase"] = "Active"
        elif ctx.subresource == "finalize":
            copy_field(obj, old, "status")
        else:
            copy_field(obj, old, "status")
            spec = child(obj, "spec")
            old_finalizers = (old.get("spec") or {}).get("finalizers")
            if old_finalizers is None:
                spec.pop("finalizers", None)
            else:
                spec["finalizers"] = copy.deepcopy(old_finalizers)
        _label_with_name(obj)

    def prepare_for_delete(self, obj: Obj) -> bool:
        """A deleted namespace turns Terminating and stays while ``spec.finalizers`` lasts."""
        child(obj, "status")["phase"] = "Terminating"
        return bool((obj.get("spec") or {}).get("finalizers"))

    def validate_create(self, obj: Obj, ctx: Context) -> list[FieldError]:
        errs: list[FieldError] = []
        for value in (obj.get("spec") or {}).get("finalizers") or []:
            errs += _finalizer_errors(str(value), "spec.finalizers")
        return errs

    def validate_update(self, obj: Obj, old: Obj, ctx: Context) -> list[FieldError]:
        if ctx.subresource == "finalize":
            finalizers = (obj.get("spec") or {}).get("finalizers") or []
            return [
                e
                for i, v in enumerate(finalizers)
                for e in _finalizer_errors(str(v), f"spec.finalizers[{i}]")
            ]
        if ctx.subresource == STATUS:
            return _phase_errors(obj)
        return []


def _phase_errors(obj: Obj) -> list[FieldError]:
    phase = (obj.get("status") or {}).get("phase") or ""
    if not meta(obj).get("deletionTimestamp"):
        if phase != "Active":
            return [
                invalid(
                    "status.Phase", phase, "may only be 'Active' if `deletionTimestamp` is empty"
                )
            ]
    elif phase != "Terminating":
        return [
            invalid(
                "status.Phase",
                phase,
                "may only be 'Terminating' if `deletionTimestamp` is not empty",
            )
        ]
    return []


class NodeStrategy(Strategy):
    """Nodes are registered with their status (the kubelet's, or a static inventory), so
    create keeps it; ``/status`` keeps the stored spec, the main resource the status."""

    subresources = (STATUS,)
    tracks_generation = False

    def field_getters(self) -> Mapping[str, FieldGetter]:
        return {
            "spec.unschedulable": lambda o: (
                "true" if (o.get("spec") or {}).get("unschedulable") else "false"
            )
        }

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        return None

    def prepare_for_update(self, obj: Obj, old: Obj, ctx: Context) -> None:
        copy_field(obj, old, "spec" if ctx.subresource == STATUS else "status")
