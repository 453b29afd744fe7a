"""Events: the core ``v1`` kind and its ``events.k8s.io/v1`` view, one store for both.

Kubernetes stores one internal Event and serves it in two shapes; here objects are
stored in the core shape and :func:`to_core` / :func:`from_core` rename the fields that
differ. Validation follows ``ValidateEventCreate``/``ValidateEventUpdate``: writes through
core ``v1`` get only the lenient legacy checks, writes through ``events.k8s.io/v1`` the
strict ones too. Field paths in errors name the internal fields (``reportingController``,
``message``, ``firstTimestamp``) whichever shape the client sent, as Kubernetes does.
Both strategies accept either shape, so they work whether or not the caller converts first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyocm.apiserver.registry.strategy import Context, FieldGetter, Obj, Strategy, meta
from pyocm.kube import names, timefmt
from pyocm.kube.status import ErrorType, FieldError, bad_request, invalid, required

GROUP = "events.k8s.io"
#: (core/v1 field, events.k8s.io/v1 field) for every field whose name differs.
RENAMES = (
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("reportingComponent", "reportingController"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
)
_TO_CORE = {new: old for old, new in RENAMES}
_FROM_CORE = dict(RENAMES)
_LIMITS = (("reportingInstance", 128), ("action", 128), ("reason", 128))
_MESSAGE_LIMIT = 1024
_REFERENCE_FIELDS = (
    "kind",
    "namespace",
    "name",
    "uid",
    "apiVersion",
    "resourceVersion",
    "fieldPath",
)


def _renamed(obj: Obj, names: Mapping[str, str], api_version: str) -> Obj:
    out = {names.get(key, key): value for key, value in obj.items()}
    out["apiVersion"] = api_version
    return out


def to_core(obj: Obj) -> Obj:
    """An ``events.k8s.io/v1`` Event in the core ``v1`` shape (a new dict, values shared)."""
    return _renamed(obj, _TO_CORE, "v1")


def from_core(obj: Obj) -> Obj:
    """A core ``v1`` Event in the ``events.k8s.io/v1`` shape (a new dict, values shared)."""
    return _renamed(obj, _FROM_CORE, f"{GROUP}/v1")


def is_events_shape(obj: Obj) -> bool:
    return str(obj.get("apiVersion") or "").startswith(f"{GROUP}/") or any(
        k in obj for k in _TO_CORE
    )


def as_core(obj: Obj) -> Obj:
    return to_core(obj) if is_events_shape(obj) else obj


# --- timestamps --------------------------------------------------------------------


def normalize_times(obj: Obj) -> None:
    """Rewrite ``Time`` fields as RFC 3339 seconds and ``MicroTime`` fields with six
    fractional digits, in UTC, as the server re-encodes them; bad ones are a 400."""
    for key in (
        "firstTimestamp",
        "lastTimestamp",
        "deprecatedFirstTimestamp",
        "deprecatedLastTimestamp",
    ):
        _normalize(obj, key, micro=False)
    _normalize(obj, "eventTime", micro=True)
    series = obj.get("series")
    if isinstance(series, dict):
        _normalize(series, "lastObservedTime", micro=True)


def _normalize(holder: dict[str, Any], key: str, *, micro: bool) -> None:
    value = holder.get(key)
    if not isinstance(value, str):
        return
    try:
        holder[key] = timefmt.normalize_micro(value) if micro else timefmt.normalize_time(value)
    except ValueError as err:
        raise bad_request(f'Event in version "v1" cannot be handled as a Event: {err}') from None


def _is_zero(value: Any) -> bool:
    return not value or str(value).startswith("0001-01-01T00:00:00")


# --- validation --------------------------------------------------------------------


def legacy_errors(event: Obj) -> list[FieldError]:
    """``legacyValidateEvent`` on a core-shaped event: every write gets these."""
    namespace = str(meta(event).get("namespace") or "")
    involved_ns = str((event.get("involvedObject") or {}).get("namespace") or "")
    mismatch = invalid("involvedObject.namespace", involved_ns, "does not match event.namespace")
    errs: list[FieldError] = []
    if _is_zero(event.get("eventTime")):
        if (not involved_ns and namespace not in ("", "default")) or (
            involved_ns and namespace != involved_ns
        ):
            errs.append(mismatch)
    else:
        if not involved_ns and namespace not in ("default", "kube-system"):
            errs.append(mismatch)
        errs += _reporting_errors(event)
    errs += [invalid("namespace", namespace, msg) for msg in names.is_dns1123_subdomain(namespace)]
    return errs


def _reporting_errors(event: Obj) -> list[FieldError]:
    """What "new" events (with an ``eventTime``) must also carry."""
    controller = str(event.get("reportingComponent") or "")
    errs = [] if controller else [required("reportingController")]
    errs += [
        invalid("reportingController", controller, msg)
        for msg in names.is_qualified_name(controller)
    ]
    for key, limit in _LIMITS:
        value = str(event.get(key) or "")
        if not value:
            errs.append(required(key))
        if len(value.encode()) > limit:
            errs.append(invalid(key, "", f"can have at most {limit} characters"))
    if len(str(event.get("message") or "").encode()) > _MESSAGE_LIMIT:
        errs.append(invalid("message", "", f"can have at most {_MESSAGE_LIMIT} characters"))
    return errs


def _series_errors(event: Obj) -> list[FieldError]:
    series = event.get("series")
    if not isinstance(series, dict):
        return []
    errs = []
    count = series.get("count")
    if not isinstance(count, int) or count < 2:
        errs.append(invalid("series.count", "", "should be at least 2"))
    if _is_zero(series.get("lastObservedTime")):
        errs.append(required("series.lastObservedTime"))
    return errs


def strict_create_errors(event: Obj) -> list[FieldError]:
    """The checks ``events.k8s.io/v1`` adds on create; the deprecated fields must be unset."""
    errs = _series_errors(event)
    if _is_zero(event.get("eventTime")):
        errs.append(required("eventTime"))
    kind = event.get("type") or ""
    if kind not in ("Normal", "Warning"):
        errs.append(invalid("type", "", f"has invalid value: {kind}"))
    for key in ("firstTimestamp", "lastTimestamp"):
        if not _is_zero(event.get(key)):
            errs.append(invalid(key, "", "needs to be unset"))
    if event.get("count"):
        errs.append(invalid("count", "", "needs to be unset"))
    source = event.get("source") or {}
    if source.get("component") or source.get("host"):
        errs.append(invalid("source", "", "needs to be unset"))
    return errs


#: (error path, core field, how Go's ``%#v``/``String()`` shows the value).
_IMMUTABLE: tuple[tuple[str, str, str], ...] = (
    ("involvedObject", "involvedObject", "reference"),
    ("reason", "reason", "string"),
    ("message", "message", "string"),
    ("source", "source", "source"),
    ("firstTimestamp", "firstTimestamp", "time"),
    ("lastTimestamp", "lastTimestamp", "time"),
    ("count", "count", "int"),
    ("type", "type", "string"),
    ("eventTime", "eventTime", "time"),
    ("action", "action", "string"),
    ("related", "related", "pointer"),
    ("reportingController", "reportingComponent", "string"),
    ("reportingInstance", "reportingInstance", "string"),
)


def strict_update_errors(event: Obj, old: Obj) -> list[FieldError]:
    """The checks ``events.k8s.io/v1`` adds on update: almost everything is immutable."""
    errs = _series_errors(event) if event.get("series") != old.get("series") else []
    for path, key, shape in _IMMUTABLE:
        new_value, old_value = _comparable(event.get(key), shape), _comparable(old.get(key), shape)
        if new_value != old_value:
            errs.append(
                FieldError(
                    ErrorType.INVALID,
                    path,
                    f"{_go_value(event.get(key), shape)}: field is immutable",
                )
            )
    return errs


def _comparable(value: Any, shape: str) -> Any:
    if shape == "int":
        return int(value or 0)
    if shape in ("reference", "source"):
        return {k: v for k, v in (value or {}).items() if v}
    return value or None


def _go_value(value: Any, shape: str) -> str:
    """Render ``value`` as Kubernetes' error text does for that Go type."""
    if shape == "int":
        return str(int(value or 0))
    if shape == "time":
        return _go_time(value)
    if shape == "source":
        return _go_struct("core.EventSource", value, ("component", "host"))
    if shape == "reference" or (shape == "pointer" and value):
        return _go_struct("core.ObjectReference", value, _REFERENCE_FIELDS)
    if shape == "pointer":
        return '"null"'
    return '"' + str(value or "").replace("\\", "\\\\").replace('"', '\\"') + '"'


_GO_NAMES = {"uid": "UID", "apiVersion": "APIVersion"}


def _go_struct(type_name: str, value: Any, fields: tuple[str, ...]) -> str:
    """``%#v`` of an internal struct whose fields are all strings."""
    value = value or {}
    parts = [f'{_GO_NAMES.get(f, f[0].upper() + f[1:])}:"{value.get(f) or ""}"' for f in fields]
    return f"{type_name}{{{', '.join(parts)}}}"


def _go_time(value: Any) -> str:
    """``time.Time.String()`` in UTC: ``2024-01-02 03:04:05.5 +0000 UTC``."""
    if _is_zero(value):
        return "0001-01-01 00:00:00 +0000 UTC"
    moment = timefmt.parse_time(str(value))
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}".rstrip("0")
    return f"{text} +0000 UTC"


# --- strategies --------------------------------------------------------------------


def _reference(field_name: str) -> FieldGetter:
    return lambda o: str((as_core(o).get("involvedObject") or {}).get(field_name) or "")


def _top(field_name: str) -> FieldGetter:
    return lambda o: str(as_core(o).get(field_name) or "")


def _source(o: Obj) -> str:
    event = as_core(o)
    return str(
        (event.get("source") or {}).get("component") or event.get("reportingComponent") or ""
    )


class CoreEventStrategy(Strategy):
    """Core ``v1`` Events: legacy validation only, any path-segment name, PUT may create."""

    tracks_generation = False
    allow_create_on_update = True
    strict = False

    def name_validator(self, name: str) -> list[str]:
        return names.is_path_segment_name(name)

    def field_getters(self) -> Mapping[str, FieldGetter]:
        fields = {f"involvedObject.{f}": _reference(f) for f in _REFERENCE_FIELDS}
        return {
            **fields,
            "reason": _top("reason"),
            "reportingComponent": _top("reportingComponent"),
            "source": _source,
            "type": _top("type"),
        }

    def to_storage(self, obj: Obj) -> Obj:
        return as_core(obj)

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        normalize_times(obj)

    def prepare_for_update(self, obj: Obj, old: Obj, ctx: Context) -> None:
        normalize_times(obj)

    def validate_create(self, obj: Obj, ctx: Context) -> list[FieldError]:
        event = as_core(obj)
        return legacy_errors(event) + (strict_create_errors(event) if self.strict else [])

    def validate_update(self, obj: Obj, old: Obj, ctx: Context) -> list[FieldError]:
        event = as_core(obj)
        errs = legacy_errors(event)
        return errs + (strict_update_errors(event, as_core(old)) if self.strict else [])


class EventStrategy(CoreEventStrategy):
    """``events.k8s.io/v1`` Events: strict validation, DNS-subdomain names, and the field
    selectors Kubernetes maps onto the core ones (``regarding.*``, ``reportingController``)."""

    strict = True

    def name_validator(self, name: str) -> list[str]:
        return names.is_dns1123_subdomain(name)

    def from_storage(self, obj: Obj) -> Obj:
        return obj if is_events_shape(obj) else from_core(obj)

    def field_getters(self) -> Mapping[str, FieldGetter]:
        fields = {f"regarding.{f}": _reference(f) for f in _REFERENCE_FIELDS}
        return {
            **fields,
            "reason": _top("reason"),
            "reportingController": _top("reportingComponent"),
            "type": _top("type"),
        }
