"""The create-only review APIs: nothing is stored, the answer is computed.

SubjectAccessReview evaluates exactly the user and groups it is given (callers such as
OCM's CSR renewal approver pass the groups recorded in a CSR, which already include
``system:authenticated``). The self reviews use the requesting user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.authorization import authorizer
from pyocm.apiserver.authorization.attributes import Attributes
from pyocm.apiserver.endpoints import body, responses
from pyocm.apiserver.state import ServerState
from pyocm.kube import status

if TYPE_CHECKING:
    from pyocm.apiserver.endpoints.resources import Target

Obj = dict[str, Any]


async def serve(request: web.Request, state: ServerState, target: Target) -> web.Response:
    if target.request.verb != "create":
        raise status.method_not_allowed(request.method, target.info.plural)
    obj = await body.read_object(request, target.info)
    kind = target.info.kind
    spec = obj.get("spec") or {}
    if not isinstance(spec, dict):
        raise _invalid(kind, [status.invalid("spec", spec, "must be an object")])
    if kind == "SubjectAccessReview":
        obj["status"] = _access(state, _subject(kind, spec), spec, namespace_required="")
    elif kind == "LocalSubjectAccessReview":
        obj["status"] = _access(
            state, _subject(kind, spec), spec, namespace_required=target.namespace
        )
    elif kind == "SelfSubjectAccessReview":
        obj["status"] = _access(state, target.user, spec, namespace_required="")
    elif kind == "SelfSubjectRulesReview":
        obj["status"] = _rules(state, target.user, spec)
    elif kind == "TokenReview":
        obj["status"] = await _token(state, spec)
    elif kind == "SelfSubjectReview":
        obj["status"] = {"userInfo": target.user.to_review()}
    else:
        raise status.path_not_found()
    obj.setdefault("metadata", {})["creationTimestamp"] = None
    return responses.json_response(obj, code=201)


def _invalid(kind: str, errors: list[status.FieldError]) -> status.ApiError:
    return status.invalid_object(kind=kind, group="authorization.k8s.io", name="", errors=errors)


def _subject(kind: str, spec: Obj) -> UserInfo:
    user = str(spec.get("user") or "")
    groups = spec.get("groups") or []
    if not user and not groups:
        raise _invalid(
            kind,
            [status.invalid("spec.user", "", "at least one of user or group must be specified")],
        )
    extra = {str(k): tuple(str(x) for x in (v or [])) for k, v in (spec.get("extra") or {}).items()}
    return UserInfo(
        name=user, groups=tuple(str(g) for g in groups), uid=str(spec.get("uid") or ""), extra=extra
    )


def _access(state: ServerState, user: UserInfo, spec: Obj, *, namespace_required: str) -> Obj:
    resource = spec.get("resourceAttributes")
    non_resource = spec.get("nonResourceAttributes")
    if bool(resource) == bool(non_resource):
        raise _invalid(
            "SubjectAccessReview",
            [
                status.invalid(
                    "spec.resourceAttributes",
                    resource,
                    "exactly one of nonResourceAttributes or resourceAttributes must be specified",
                )
            ],
        )
    if resource:
        ns = str(resource.get("namespace") or "")
        if namespace_required and ns != namespace_required:
            raise _invalid(
                "LocalSubjectAccessReview",
                [
                    status.invalid(
                        "spec.resourceAttributes.namespace", ns, "must match metadata.namespace"
                    )
                ],
            )
        attrs = Attributes(
            user=user,
            verb=str(resource.get("verb") or ""),
            resource_request=True,
            api_group=str(resource.get("group") or ""),
            api_version=str(resource.get("version") or ""),
            resource=str(resource.get("resource") or ""),
            subresource=str(resource.get("subresource") or ""),
            namespace=ns,
            name=str(resource.get("name") or ""),
        )
    else:
        assert isinstance(non_resource, dict)
        attrs = Attributes(
            user=user,
            verb=str(non_resource.get("verb") or ""),
            resource_request=False,
            path=str(non_resource.get("path") or ""),
        )
    decision = authorizer.authorize(state.rbac, attrs)
    out: Obj = {"allowed": decision.allowed}
    if decision.reason:
        out["reason"] = decision.reason
    return out


def _rules(state: ServerState, user: UserInfo, spec: Obj) -> Obj:
    return authorizer.rules_review_status(
        state.rbac, user, namespace=str(spec.get("namespace") or "")
    )


async def _token(state: ServerState, spec: Obj) -> Obj:
    token = str(spec.get("token") or "")
    if not token:
        raise status.invalid_object(
            kind="TokenReview",
            group="authentication.k8s.io",
            name="",
            errors=[status.required("spec.token")],
        )
    # As kube: the token must be good for one of the audiences asked about (by default
    # the API's), and the answer names those it is good for.
    audiences = [str(a) for a in spec.get("audiences") or []]
    try:
        user, shared = await state.authenticator.review_token(
            token, audiences=audiences or state.authenticator.api_audiences
        )
    except status.ApiError:
        return {"authenticated": False, "user": {}, "error": "invalid bearer token"}
    return {"authenticated": True, "user": user.to_review(), "audiences": list(shared)}
