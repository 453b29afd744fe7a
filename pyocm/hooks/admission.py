"""An AdmissionReview answered with a webhook's rule, as controller-runtime answers one.

kube-apiserver sends ``admission.k8s.io/v1`` or ``v1beta1`` (whichever the webhook
configuration's ``admissionReviewVersions`` allows first); the answer is in the version
asked, with the request's ``uid``:

* allowed: ``allowed: true`` and ``status.code`` 200 (a validator; a mutator that changes
  nothing answers no status);
* mutated: ``patchType: JSONPatch`` and the base64 RFC 6902 ``patch`` from the object sent
  to the object the rule returned;
* denied: ``allowed: false`` and ``status``, the rule's Status (code, reason, message,
  details), which kube-apiserver relays prefixed with the webhook's name.

A request the webhook is not registered for (DELETE, another resource) is allowed, as
controller-runtime's ``ValidateDelete`` of these webhooks does.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson

from pyocm.hooks import jsonpatch
from pyocm.hooks.request import Config, Denial, Obj, Operation, Request, Seams, UserInfo
from pyocm.hooks.webhooks import Webhook

REVIEW_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")


class NotAReview(ValueError):
    """The body is no AdmissionReview request: the webhook answers 400."""


def parse(document: Any) -> Request:
    """The :class:`Request` of an AdmissionReview ``document``."""
    if not isinstance(document, dict) or document.get("kind") != "AdmissionReview":
        raise NotAReview("the body is not an AdmissionReview")
    if document.get("apiVersion") not in REVIEW_VERSIONS:
        raise NotAReview(f"unsupported AdmissionReview version {document.get('apiVersion')!r}")
    request = document.get("request")
    if not isinstance(request, dict):
        raise NotAReview("the AdmissionReview has no request")
    try:
        operation = Operation(request.get("operation"))
    except ValueError:
        raise NotAReview(f"unknown operation {request.get('operation')!r}") from None
    resource = _mapping(request.get("resource"))
    obj, old = _object(request.get("object")), _object(request.get("oldObject"))
    if obj is None and operation in (Operation.CREATE, Operation.UPDATE):
        raise NotAReview(f"the {operation.value} request has no object")
    name = str(
        request.get("name") or _mapping((obj or old or {}).get("metadata")).get("name") or ""
    )
    return Request(
        operation=operation,
        group=str(resource.get("group") or ""),
        version=str(resource.get("version") or ""),
        resource=str(resource.get("resource") or ""),
        subresource=str(request.get("subResource") or ""),
        namespace=str(request.get("namespace") or ""),
        name=name,
        obj=obj,
        old=old,
        user=_user(_mapping(request.get("userInfo"))),
        dry_run=bool(request.get("dryRun")),
    )


async def answer(document: Obj, webhook: Webhook, config: Config, seams: Seams) -> Obj:
    """The AdmissionReview answering ``document`` (raises :class:`NotAReview`)."""
    request = parse(document)
    response: Obj = {"uid": _mapping(document.get("request")).get("uid", "")}
    response.update(await _decide(request, webhook, config, seams))
    return {"apiVersion": document["apiVersion"], "kind": "AdmissionReview", "response": response}


async def _decide(request: Request, webhook: Webhook, config: Config, seams: Seams) -> Obj:
    if not webhook.handles(request):
        return _allowed()
    try:
        result = await webhook.rule(request, config, seams)
    except Denial as denial:
        return {"allowed": False, "status": denial.status()}
    if not webhook.mutating:
        return _allowed()
    ops = jsonpatch.diff(request.obj, result)
    if not ops:
        return {"allowed": True}
    return {
        "allowed": True,
        "patchType": "JSONPatch",
        "patch": base64.b64encode(orjson.dumps(ops)).decode(),
    }


def errored(document: Any, code: int, message: str) -> Obj:
    """controller-runtime's ``Errored``: not allowed, the code and the error's text."""
    version = "admission.k8s.io/v1"
    uid = ""
    if isinstance(document, dict):
        if document.get("apiVersion") in REVIEW_VERSIONS:
            version = document["apiVersion"]
        uid = _mapping(document.get("request")).get("uid", "")
    return {
        "apiVersion": version,
        "kind": "AdmissionReview",
        "response": {
            "uid": uid,
            "allowed": False,
            "status": {"metadata": {}, "code": code, "message": message},
        },
    }


def _allowed() -> Obj:
    return {"allowed": True, "status": {"metadata": {}, "code": 200}}


def _user(info: Obj) -> UserInfo:
    extra = _mapping(info.get("extra"))
    return UserInfo(
        name=str(info.get("username") or ""),
        uid=str(info.get("uid") or ""),
        groups=tuple(str(g) for g in info.get("groups") or ()),
        extra={str(k): tuple(str(v) for v in values or ()) for k, values in extra.items()},
    )


def _object(value: Any) -> Obj | None:
    return value if isinstance(value, dict) else None


def _mapping(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}
