"""Every failure the client meets, as one of two exceptions.

An answer the server gave (a ``Status`` body, or any other body with a failure code)
becomes :class:`~pyocm.kube.status.ApiError`, here and nowhere else; a server that could
not be reached or trusted is :class:`ApiConnectionError`. Callers branch on
``ApiError.code`` and ``reason`` as client-go callers use ``apierrors.IsNotFound``.
"""

from __future__ import annotations

from typing import Any

import orjson

from pyocm.kube.status import ApiError


class ApiConnectionError(ConnectionError):
    """The API server could not be reached, or its identity could not be verified."""


def api_error(code: int, content: bytes, reason: str | None) -> ApiError:
    """The error a failure answer stands for: its ``Status`` when it sent one, else
    the code's usual reason with the start of whatever text came back."""
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        body = None
    if isinstance(body, dict) and body.get("kind") == "Status":
        return status_error(body, fallback_code=code)
    text = content.decode(errors="replace").strip()[:200] or reason or ""
    return ApiError(code=code, reason=_REASONS.get(code, "Unknown"), message=text)


def status_error(status: dict[str, Any], *, fallback_code: int) -> ApiError:
    """The error of a ``Status`` object (a failure body, or a watch's ``ERROR`` event);
    ``details`` keeps the causes, such as server-side apply's field conflicts."""
    code = int(status.get("code") or fallback_code)
    return ApiError(
        code=code,
        reason=str(status.get("reason") or _REASONS.get(code, "Unknown")),
        message=str(status.get("message") or ""),
        details=status.get("details") or None,
    )


_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}
