"""``metadata`` validation on create and update, as apimachinery's ``ValidateObjectMeta``.

Built-in kinds add core validation's finalizer rule (a finalizer without ``/`` must be one
of the standard names); custom resources do not, so callers say which they validate.
Errors come out in apimachinery's order and at its field paths, because clients show the
422 causes verbatim. Server-owned fields that an update silently keeps (creation time,
deletion time, generation) are the store's business; this module only reports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from pyocm.kube import names, selectors, status, timefmt

ANNOTATIONS_SIZE_LIMIT = 256 * 1024
FIELD_MANAGER_MAX_LENGTH = 128
SUBRESOURCE_MAX_LENGTH = 256
STANDARD_FINALIZERS = ("kubernetes", "orphan", "foregroundDeletion")
FIELD_IMMUTABLE = "field is immutable"
_IMMUTABLE = (
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)
# Events cannot own objects: the garbage collector would delete what they point at.
_BANNED_OWNERS = {("v1", "Event")}

NameValidator = Callable[[str], list[str]]
Meta = Mapping[str, Any]


def validate_object_meta(
    meta: Meta,
    *,
    namespaced: bool,
    name_validator: NameValidator,
    field_path: str = "metadata",
    builtin: bool = True,
) -> list[status.FieldError]:
    """Validate ``meta`` of an object about to be created (after name generation).

    ``generateName`` is checked with its trailing ``-`` masked, as apimachinery checks
    prefixes. ``builtin`` adds core validation's rule for un-prefixed finalizers.
    """
    errors: list[status.FieldError] = []
    name, generate_name = meta.get("name") or "", meta.get("generateName") or ""
    if generate_name:
        errors += _each(
            f"{field_path}.generateName", generate_name, name_validator(_mask(generate_name))
        )
    if not name:
        errors.append(status.required(f"{field_path}.name", "name or generateName is required"))
    else:
        errors += _each(f"{field_path}.name", name, name_validator(name))
    errors += _namespace(
        meta.get("namespace") or "", namespaced=namespaced, path=f"{field_path}.namespace"
    )
    if _generation(meta) < 0:
        detail = "must be greater than or equal to 0"
        errors.append(status.invalid(f"{field_path}.generation", _generation(meta), detail))
    errors += _common(meta, field_path)
    finalizers = list(meta.get("finalizers") or [])
    errors += validate_finalizers(finalizers, f"{field_path}.finalizers")
    if builtin:
        errors += _kube_finalizers(finalizers, f"{field_path}.finalizers")
    return errors


def validate_object_meta_update(
    new: Meta, old: Meta, *, field_path: str = "metadata", builtin: bool = True
) -> list[status.FieldError]:
    """Validate ``new`` metadata replacing ``old``: identity and timestamps are immutable,
    generation cannot go back, and a deleting object accepts no new finalizers.

    ``resourceVersion`` preconditions are not checked here; the store owns them.
    """
    errors = _no_new_finalizers(new, old, f"{field_path}.finalizers")
    if _generation(new) < _generation(old):
        detail = "must not be decremented"
        errors.append(status.invalid(f"{field_path}.generation", _generation(new), detail))
    errors += [
        status.invalid(f"{field_path}.{key}", new.get(key), FIELD_IMMUTABLE)
        for key in _IMMUTABLE
        if not _same_value(key, new.get(key), old.get(key))
    ]
    errors += _common(new, field_path)
    if builtin:
        errors += _kube_finalizers(list(new.get("finalizers") or []), f"{field_path}.finalizers")
    return errors


def _no_new_finalizers(new: Meta, old: Meta, path: str) -> list[status.FieldError]:
    """Once deletion started, finalizers may only be removed: adding one would let a
    controller block a deletion it never saw begin."""
    if not old.get("deletionTimestamp"):
        return []
    added = sorted(set(new.get("finalizers") or []) - set(old.get("finalizers") or []))
    if not added:
        return []
    shown = "[]string{" + ", ".join(f'"{f}"' for f in added) + "}"
    detail = f"no new finalizers can be added if the object is being deleted, found new finalizers {shown}"
    return [status.forbidden(path, detail)]


def validate_finalizers(finalizers: Sequence[str], field_path: str) -> list[status.FieldError]:
    """Every finalizer a qualified name; ``orphan`` and ``foregroundDeletion`` exclusive.

    Name errors sit at the list's path without an index, as in apimachinery.
    """
    errors: list[status.FieldError] = []
    for finalizer in finalizers:
        errors += _each(field_path, finalizer, names.is_qualified_name(finalizer))
    if "orphan" in finalizers and "foregroundDeletion" in finalizers:
        errors.append(
            status.invalid(
                field_path,
                list(finalizers),
                "finalizer orphan and foregroundDeletion cannot be both set",
            )
        )
    return errors


def validate_annotations(
    annotations: Mapping[str, str], field_path: str
) -> list[status.FieldError]:
    """Keys are qualified names compared case-insensitively; all keys and values together
    may not exceed 256 KiB."""
    errors: list[status.FieldError] = []
    for key in sorted(annotations):
        errors += _each(field_path, key, names.is_qualified_name(key.lower()))
    size = sum(len(k.encode()) + len(str(v).encode()) for k, v in annotations.items())
    if size > ANNOTATIONS_SIZE_LIMIT:
        # Kubernetes omits the (huge) value from this message.
        errors.append(
            status.FieldError(
                status.ErrorType.TOO_LONG,
                field_path,
                f"may not be more than {ANNOTATIONS_SIZE_LIMIT} bytes",
            )
        )
    return errors


def validate_owner_references(
    refs: Sequence[Mapping[str, Any]], field_path: str
) -> list[status.FieldError]:
    """Each reference names apiVersion, kind, name and uid; at most one is the controller."""
    errors: list[status.FieldError] = []
    controller = ""
    for ref in refs:
        errors += _owner_reference(ref, field_path)
        if ref.get("controller") is True:
            current = f"{ref.get('kind', '')}/{ref.get('name', '')}"
            if controller:
                detail = (
                    'Only one reference can have Controller set to true. Found "true" in '
                    f"references for {controller} and {current}"
                )
                errors.append(status.invalid(field_path, list(refs), detail))
            else:
                controller = current
    return errors


def _owner_reference(ref: Mapping[str, Any], path: str) -> list[status.FieldError]:
    api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
    version = api_version.rsplit("/", 1)[-1]
    errors = [
        status.invalid(f"{path}.{field}", ref.get(field) or "", detail)
        for field, empty, detail in (
            ("apiVersion", not version, "version must not be empty"),
            ("kind", not kind, "kind must not be empty"),
            ("name", not ref.get("name"), "name must not be empty"),
            ("uid", not ref.get("uid"), "uid must not be empty"),
        )
        if empty
    ]
    if (api_version, kind) in _BANNED_OWNERS:
        errors.append(
            status.invalid(
                path, dict(ref), f"/{version}, Kind={kind} is disallowed from being an owner"
            )
        )
    return errors


def _common(meta: Meta, field_path: str) -> list[status.FieldError]:
    """The checks create and update share: labels, annotations, owners, managedFields."""
    return [
        *selectors.validate_labels(meta.get("labels") or {}, f"{field_path}.labels"),
        *validate_annotations(meta.get("annotations") or {}, f"{field_path}.annotations"),
        *validate_owner_references(
            meta.get("ownerReferences") or [], f"{field_path}.ownerReferences"
        ),
        *_managed_fields(meta.get("managedFields") or [], f"{field_path}.managedFields"),
    ]


def _managed_fields(entries: Sequence[Mapping[str, Any]], path: str) -> list[status.FieldError]:
    errors: list[status.FieldError] = []
    for i, entry in enumerate(entries):
        at = f"{path}[{i}]"
        if entry.get("operation") not in ("Apply", "Update"):
            errors.append(
                status.invalid(
                    f"{at}.operation", entry.get("operation") or "", "must be `Apply` or `Update`"
                )
            )
        if entry.get("fieldsType") and entry["fieldsType"] != "FieldsV1":
            errors.append(
                status.invalid(f"{at}.fieldsType", entry["fieldsType"], "must be `FieldsV1`")
            )
        manager = str(entry.get("manager") or "")
        if len(manager) > FIELD_MANAGER_MAX_LENGTH:
            errors.append(status.too_long(f"{at}.manager", manager, FIELD_MANAGER_MAX_LENGTH))
        elif not manager.isprintable():
            errors.append(
                status.invalid(f"{at}.manager", manager, "must only contain printable characters")
            )
        if len(str(entry.get("subresource") or "")) > SUBRESOURCE_MAX_LENGTH:
            errors.append(
                status.too_long(f"{at}.subresource", entry["subresource"], SUBRESOURCE_MAX_LENGTH)
            )
    return errors


def _namespace(namespace: str, *, namespaced: bool, path: str) -> list[status.FieldError]:
    if not namespaced:
        return [status.forbidden(path, "not allowed on this type")] if namespace else []
    if not namespace:
        return [status.required(path)]
    return _each(path, namespace, names.is_dns1123_label(namespace))


def _kube_finalizers(finalizers: Sequence[str], path: str) -> list[status.FieldError]:
    """Core validation: a finalizer with no domain must be one Kubernetes defines."""
    return [
        status.invalid(
            f"{path}[{i}]", f, "name is neither a standard finalizer name nor is it fully qualified"
        )
        for i, f in enumerate(finalizers)
        if "/" not in f and f not in STANDARD_FINALIZERS
    ]


def _generation(meta: Meta) -> int:
    value = meta.get("generation")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _each(path: str, value: Any, messages: list[str]) -> list[status.FieldError]:
    return [status.invalid(path, value, msg) for msg in messages]


def _mask(prefix: str) -> str:
    """apimachinery's ``maskTrailingDash``: a prefix may end in ``-``, a name may not.

    It really drops two characters before adding ``a``; kept for identical results.
    """
    if len(prefix) > 1 and prefix.endswith("-"):
        return prefix[:-2] + "a"
    return prefix


def _same_value(key: str, new: Any, old: Any) -> bool:
    """Go's semantic equality on the decoded fields: timestamps compare as instants at
    second precision, an absent string equals ``""``, an absent pointer does not equal 0."""
    if key == "deletionGracePeriodSeconds":
        return bool(new == old)
    if new == old:  # the common case, without parsing anything
        return True
    if key.endswith("Timestamp") and isinstance(new, str) and isinstance(old, str):
        try:
            return _second(new) == _second(old)
        except ValueError:
            return new == old
    return (new or "") == (old or "")


def _second(text: str) -> datetime:
    return timefmt.parse_time(text).replace(microsecond=0)
