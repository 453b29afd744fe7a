"""``metav1.Status`` objects and the field errors that make up 422 Invalid answers.

:class:`ApiError` is the one exception type that crosses from the registry to the HTTP
layer; it carries the exact Status body Kubernetes would send.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

import orjson


class ErrorType(Enum):
    """``field.ErrorType`` from apimachinery: (cause reason, message prefix)."""

    REQUIRED = ("FieldValueRequired", "Required value")
    INVALID = ("FieldValueInvalid", "Invalid value")
    NOT_SUPPORTED = ("FieldValueNotSupported", "Unsupported value")
    FORBIDDEN = ("FieldValueForbidden", "Forbidden")
    DUPLICATE = ("FieldValueDuplicate", "Duplicate value")
    TOO_LONG = ("FieldValueTooLong", "Too long")
    TOO_MANY = ("FieldValueTooMany", "Too many")
    NOT_FOUND = ("FieldValueNotFound", "Not found")
    TYPE_INVALID = ("FieldValueTypeInvalid", "Invalid value")

    @property
    def reason(self) -> str:
        return self.value[0]

    @property
    def label(self) -> str:
        return self.value[1]


_NO_VALUE = object()


@dataclass(frozen=True)
class FieldError:
    """One problem with one field, rendered the way apimachinery renders ``field.Error``."""

    type: ErrorType
    field: str
    detail: str = ""
    value: Any = _NO_VALUE

    def message(self) -> str:
        """apimachinery's ``Error()``: the field, then :meth:`body`."""
        return f"{self.field}: {self.body()}" if self.field else self.body()

    def body(self) -> str:
        """apimachinery's ``ErrorBody()``: what went wrong, without the field."""
        parts = [self.type.label]
        # As apimachinery's ErrorBody: these kinds never echo the value (a too-long
        # value may be a secret, or megabytes).
        if self.value is not _NO_VALUE and self.type not in (
            ErrorType.REQUIRED,
            ErrorType.FORBIDDEN,
            ErrorType.TOO_LONG,
        ):
            parts.append(_render_value(self.value))
        if self.detail:
            parts.append(self.detail)
        return ": ".join(parts)

    def cause(self) -> dict[str, str]:
        # As apimachinery's NewInvalid: the cause's message is the body, and the field
        # stands beside it (kubectl prints "field: message").
        return {"reason": self.type.reason, "message": self.body(), "field": self.field}


def required(field: str, detail: str = "") -> FieldError:
    return FieldError(ErrorType.REQUIRED, field, detail)


def invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(ErrorType.INVALID, field, detail, value)


def forbidden(field: str, detail: str) -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, field, detail)


def not_supported(field: str, value: Any, supported: list[str]) -> FieldError:
    quoted = ", ".join(f'"{s}"' for s in supported)
    return FieldError(ErrorType.NOT_SUPPORTED, field, f"supported values: {quoted}", value)


def duplicate(field: str, value: Any) -> FieldError:
    return FieldError(ErrorType.DUPLICATE, field, "", value)


def too_long(field: str, value: Any, limit: int) -> FieldError:
    return FieldError(ErrorType.TOO_LONG, field, f"may not be more than {limit} bytes", value)


def _render_value(value: Any) -> str:
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return repr(value)


class ApiError(Exception):
    """An error answered to the client as a ``Status`` object."""

    def __init__(
        self,
        *,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            body["details"] = self.details
        return body


def qualified(resource: str, group: str) -> str:
    """``managedclusters.cluster.open-cluster-management.io``; core kinds have no suffix."""
    return f"{resource}.{group}" if group else resource


def _details(*, name: str, group: str, kind: str) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name, "kind": kind}
    if group:
        details["group"] = group
    return details


def not_found(*, resource: str, group: str, name: str) -> ApiError:
    return ApiError(
        code=404,
        reason="NotFound",
        message=f'{qualified(resource, group)} "{name}" not found',
        details=_details(name=name, group=group, kind=resource),
    )


def path_not_found() -> ApiError:
    return ApiError(
        code=404, reason="NotFound", message="the server could not find the requested resource"
    )


def already_exists(*, resource: str, group: str, name: str) -> ApiError:
    return ApiError(
        code=409,
        reason="AlreadyExists",
        message=f'{qualified(resource, group)} "{name}" already exists',
        details=_details(name=name, group=group, kind=resource),
    )


def conflict(*, resource: str, group: str, name: str, detail: str = "") -> ApiError:
    detail = (
        detail
        or "the object has been modified; please apply your changes to the latest version and try again"
    )
    return ApiError(
        code=409,
        reason="Conflict",
        message=f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {detail}',
        details=_details(name=name, group=group, kind=resource),
    )


def invalid_object(*, kind: str, group: str, name: str, errors: list[FieldError]) -> ApiError:
    summary = (
        errors[0].message()
        if len(errors) == 1
        else "[" + ", ".join(e.message() for e in errors) + "]"
    )
    qualified_kind = f"{kind}.{group}" if group else kind
    details = _details(name=name, group=group, kind=kind)
    details["causes"] = [e.cause() for e in errors]
    return ApiError(
        code=422,
        reason="Invalid",
        message=f'{qualified_kind} "{name}" is invalid: {summary}',
        details=details,
    )


def bad_request(message: str) -> ApiError:
    return ApiError(code=400, reason="BadRequest", message=message)


def forbidden_error(
    *,
    message: str,
    resource: str = "",
    group: str = "",
    name: str = "",
    causes: list[dict[str, str]] | None = None,
) -> ApiError:
    details: dict[str, Any] | None = None
    if resource or name or causes:
        details = _details(name=name, group=group, kind=resource)
        if causes:
            details["causes"] = causes
    return ApiError(code=403, reason="Forbidden", message=message, details=details)


def unauthorized() -> ApiError:
    return ApiError(code=401, reason="Unauthorized", message="Unauthorized")


def method_not_allowed(verb: str, resource: str) -> ApiError:
    return ApiError(
        code=405,
        reason="MethodNotAllowed",
        message=f"{verb} is not supported on resources of kind {resource!r}"
        if resource
        else f"{verb} is not supported",
    )


def unsupported_media_type(content_type: str, accepted: list[str]) -> ApiError:
    return ApiError(
        code=415,
        reason="UnsupportedMediaType",
        message=f"the body of the request was in an unknown format - accepted media types include: {', '.join(accepted)}",
        details={"causes": [{"reason": "UnexpectedServerResponse", "message": content_type}]},
    )


def too_large(limit: int) -> ApiError:
    return ApiError(
        code=413,
        reason="RequestEntityTooLarge",
        message=f"Request entity too large: limit is {limit}",
    )


def gone(message: str) -> ApiError:
    return ApiError(code=410, reason="Expired", message=message)


def timeout(message: str, *, causes: list[dict[str, str]] | None = None) -> ApiError:
    return ApiError(
        code=504, reason="Timeout", message=message, details={"causes": causes} if causes else None
    )


def internal(message: str) -> ApiError:
    return ApiError(code=500, reason="InternalError", message=f"Internal error occurred: {message}")


def success(*, name: str, group: str, kind: str, uid: str = "") -> dict[str, Any]:
    details = _details(name=name, group=group, kind=kind)
    if uid:
        details["uid"] = uid
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }
