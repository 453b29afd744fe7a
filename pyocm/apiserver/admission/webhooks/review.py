"""The AdmissionReview a webhook receives, what its answer must look like, and the
errors a client then sees, in kube-apiserver's words
(``admission/plugin/webhook/request/admissionreview.go``, ``errors/statuserror.go``,
``util/webhook`` ``ErrCallingWebhook``).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from pyocm.apiserver.admission.webhooks.config import Webhook
from pyocm.apiserver.admission.webhooks.matching import Attributes, Invocation
from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.registry.strategy import Context
from pyocm.kube import status

Obj = dict[str, Any]
ADMISSION_GROUP = "admission.k8s.io"


class CallError(Exception):
    """``ErrCallingWebhook``: the call itself failed; failurePolicy decides."""

    def __init__(self, webhook: str, reason: str) -> None:
        super().__init__(f'failed calling webhook "{webhook}": {reason}')
        self.webhook = webhook
        self.reason = reason


def internal_error(err: Exception | str) -> status.ApiError:
    """``apierrors.NewInternalError``: 500, the error as the one cause."""
    text = str(err)
    return status.ApiError(
        code=500,
        reason="InternalError",
        message=f"Internal error occurred: {text}",
        details={"causes": [{"message": text}]},
    )


def review_version(hook: Webhook) -> str:
    """v1 when the webhook accepts it, else v1beta1 (validation ensured one of them)."""
    return "v1" if "v1" in hook.review_versions or not hook.review_versions else "v1beta1"


@dataclass(frozen=True)
class Review:
    uid: str
    version: str
    body: Obj


def build(
    invocation: Invocation,
    attrs: Attributes,
    ctx: Context,
    *,
    obj: Obj | None,
    old: Obj | None,
    delete_options: Obj | None = None,
) -> Review:
    """The request for one call: ``obj``/``old`` are already in the invocation's version."""
    uid = str(uuid.uuid4())
    matched, requested = invocation.info, attrs.info
    request: Obj = {
        "uid": uid,
        "kind": _gvk(matched.group, matched.version, matched.kind),
        "resource": _gvr(matched.group, matched.version, matched.plural),
        "requestKind": _gvk(requested.group, requested.version, requested.kind),
        "requestResource": _gvr(requested.group, requested.version, requested.plural),
        "operation": attrs.operation,
        "userInfo": user_info(ctx.user),
        "object": obj,
        "oldObject": old,
        "dryRun": ctx.dry_run,
        "options": operation_options(attrs.operation, ctx, delete_options),
    }
    if attrs.subresource:
        request["subResource"] = attrs.subresource
        request["requestSubResource"] = attrs.subresource
    if attrs.name:
        request["name"] = attrs.name
    if attrs.namespace:
        request["namespace"] = attrs.namespace
    version = review_version(invocation.webhook)
    body = {"kind": "AdmissionReview", "apiVersion": f"{ADMISSION_GROUP}/{version}"}
    return Review(uid, version, {**body, "request": request})


def _gvk(group: str, version: str, kind: str) -> Obj:
    return {"group": group, "version": version, "kind": kind}


def _gvr(group: str, version: str, resource: str) -> Obj:
    return {"group": group, "version": version, "resource": resource}


def user_info(user: UserInfo) -> Obj:
    """authentication/v1 UserInfo: empty fields are omitted, as Go's omitempty does."""
    out: Obj = {"username": user.name}
    if user.uid:
        out["uid"] = user.uid
    if user.groups:
        out["groups"] = list(user.groups)
    if user.extra:
        out["extra"] = {k: list(v) for k, v in user.extra.items()}
    return out


def operation_options(operation: str, ctx: Context, delete_options: Obj | None) -> Obj | None:
    """The request's options as kube records them: CreateOptions for a create (and an
    apply or PUT that creates), UpdateOptions for an update or patch, DeleteOptions."""
    kind = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}
    if operation not in kind:
        return None
    out: Obj = {"kind": kind[operation], "apiVersion": "meta.k8s.io/v1"}
    if operation == "DELETE":
        out.update(delete_options or {})
    if ctx.dry_run:
        out["dryRun"] = ["All"]
    if operation != "DELETE":
        if ctx.field_manager:
            out["fieldManager"] = ctx.field_manager
        if ctx.field_validation:
            out["fieldValidation"] = ctx.field_validation
    return out


@dataclass(frozen=True)
class Response:
    allowed: bool
    result: Obj | None
    patch: str
    patch_type: str
    warnings: list[str] = field(default_factory=list)


def parse_response(hook: Webhook, review: Review, answer: Any, *, mutating: bool) -> Response:
    """``VerifyAdmissionResponse``: v1 answers must echo the uid and be a v1
    AdmissionReview; v1beta1 answers are taken as they come, as kube does."""
    if not isinstance(answer, dict):
        raise CallError(hook.name, "failed to call webhook: the response is not a JSON object")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise _invalid(hook, "webhook response was absent")
    if review.version == "v1":
        if response.get("uid") != review.uid:
            raise _invalid(
                hook, f'expected response.uid="{review.uid}", got "{response.get("uid") or ""}"'
            )
        got = _gvk_text(answer)
        if got != "admission.k8s.io/v1, Kind=AdmissionReview":
            raise _invalid(
                hook,
                f"expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {got}",
            )
    patch, patch_type = str(response.get("patch") or ""), str(response.get("patchType") or "")
    if mutating and patch and not patch_type:
        raise _invalid(hook, "webhook returned response.patch but not response.patchType")
    if mutating and patch_type and not patch:
        raise _invalid(hook, "webhook returned response.patchType but not response.patch")
    result = response.get("status")
    return Response(
        allowed=response.get("allowed") is True,
        result=result if isinstance(result, dict) else None,
        patch=patch,
        patch_type=patch_type,
        warnings=[str(w) for w in response.get("warnings") or [] if isinstance(w, str)],
    )


def _gvk_text(answer: Obj) -> str:
    """Go's ``GroupVersionKind.String()``."""
    group, _, version = str(answer.get("apiVersion") or "").rpartition("/")
    return f"{group}/{version}, Kind={answer.get('kind') or ''}"


def _invalid(hook: Webhook, detail: str) -> CallError:
    return CallError(hook.name, f"received invalid webhook response: {detail}")


def denied(hook: Webhook, result: Obj | None) -> status.ApiError:
    """``webhookerrors.ToStatusErr``: the webhook's Status, with a code of at least 400
    and its message prefixed by who denied the request."""
    result = dict(result or {})
    code = result.get("code")
    code = code if isinstance(code, int) and code >= 400 else 400
    reason = str(result.get("reason") or "")
    message = str(result.get("message") or "")
    denied_by = f'admission webhook "{hook.name}" denied the request'
    if message:
        text = f"{denied_by}: {message}"
    elif reason:
        text = f"{denied_by}: {reason}"
    else:
        text = f"{denied_by} without explanation"
    details = result.get("details")
    return status.ApiError(
        code=code,
        reason=reason,
        message=text,
        details=details if isinstance(details, dict) else None,
    )


def dry_run_unsupported(hook: Webhook) -> status.ApiError:
    """``webhookerrors.NewDryRunUnsupportedErr``."""
    return status.bad_request(f'admission webhook "{hook.name}" does not support dry run')
