"""``apiextensions.k8s.io/v1`` CustomResourceDefinition.

The schema rules live in :mod:`pyocm.apiserver.apiextensions.crd_validation`; this strategy
calls them at the right moments, the way Kubernetes' CRD strategy does: defaults before
anything else (they decide which version is stored), ``status.storedVersions`` kept
growing with every storage version ever used, and the status written only through
``/status``. Conditions and accepted names are the CRD controllers' business.
CRDs, unlike most built-ins, carry a generation and refuse updates without a
``metadata.resourceVersion``.
"""

from __future__ import annotations

from typing import Any

from pyocm.apiserver.registry.strategy import STATUS, Context, Obj, Strategy
from pyocm.kube import timefmt
from pyocm.kube.status import FieldError

CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"


def storage_version(crd: Obj) -> str:
    for version in (crd.get("spec") or {}).get("versions") or []:
        if isinstance(version, dict) and version.get("storage"):
            return str(version.get("name") or "")
    return ""


def record_storage_version(crd: Obj) -> None:
    """Append the current storage version to ``status.storedVersions`` if it is new."""
    version = storage_version(crd)
    if not version:
        return
    status = crd.get("status")
    if not isinstance(status, dict):
        status = crd["status"] = {}
    stored: list[Any] = list(status.get("storedVersions") or [])
    if version not in stored:
        stored.append(version)
    status["storedVersions"] = stored


def _apply_defaults(crd: Obj) -> None:
    # Imported here: the validator is a large module of its own, loaded on first use.
    from pyocm.apiserver.apiextensions import crd_validation

    crd_validation.default_crd(crd)


class CustomResourceDefinitionStrategy(Strategy):
    subresources = (STATUS,)
    #: apiextensions-apiserver validates metadata with apimachinery's generic rules, not
    #: core's (whose finalizer rule would refuse its own customresourcecleanup finalizer).
    builtin = False
    tracks_generation = True
    allow_unconditional_update = False

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        _apply_defaults(obj)
        obj["status"] = {}
        record_storage_version(obj)

    def prepare_for_update(self, obj: Obj, old: Obj, ctx: Context) -> None:
        if ctx.subresource != STATUS:
            _apply_defaults(obj)
        super().prepare_for_update(obj, old, ctx)
        if ctx.subresource != STATUS:
            record_storage_version(obj)

    def validate_create(self, obj: Obj, ctx: Context) -> list[FieldError]:
        from pyocm.apiserver.apiextensions import crd_validation

        return crd_validation.validate_crd(obj)

    def validate_update(self, obj: Obj, old: Obj, ctx: Context) -> list[FieldError]:
        from pyocm.apiserver.apiextensions import crd_validation

        if ctx.subresource == STATUS:
            return []
        return crd_validation.validate_crd_update(obj, old)

    def spec_of(self, obj: Obj) -> Any:
        return obj.get("spec")

    def prepare_for_delete(self, obj: Obj) -> bool:
        """A first delete marks the CRD Terminating behind the cleanup finalizer, as
        apiextensions-apiserver's REST does; its controller then deletes every custom
        resource and drops the finalizer, which completes the deletion."""
        meta = obj.setdefault("metadata", {})
        if meta.get("deletionTimestamp"):
            return False
        finalizers = list(meta.get("finalizers") or [])
        if CLEANUP_FINALIZER not in finalizers:
            meta["finalizers"] = [*finalizers, CLEANUP_FINALIZER]
        set_crd_condition(
            obj,
            type="Terminating",
            status="True",
            reason="InstanceDeletionPending",
            message="CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        )
        return True


def set_crd_condition(crd: Obj, *, type: str, status: str, reason: str, message: str) -> None:
    """Add or replace one status condition (lastTransitionTime moves when status changes)."""
    found = crd.setdefault("status", {}).setdefault("conditions", [])
    for condition in found:
        if condition.get("type") == type:
            if condition.get("status") != status:
                condition["lastTransitionTime"] = timefmt.now_rfc3339()
            condition.update(status=status, reason=reason, message=message)
            return
    found.append(
        {
            "type": type,
            "status": status,
            "lastTransitionTime": timefmt.now_rfc3339(),
            "reason": reason,
            "message": message,
        }
    )
