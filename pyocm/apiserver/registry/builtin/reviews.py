"""The review kinds: create-only questions answered on the spot and never stored.

``authorization.k8s.io/v1`` asks "may this subject do that?" (SubjectAccessReview and its
local and self variants) and "what may I do here?" (SelfSubjectRulesReview);
``authentication.k8s.io/v1`` asks "whose token is this?" (TokenReview) and "who am I?"
(SelfSubjectReview). :func:`validate_review` holds the request checks their REST handlers
make in Kubernetes: field errors (answered 422) come back as a list, and the checks
Kubernetes answers with 400 raise :class:`~pyocm.kube.status.ApiError`, after the field
errors as there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyocm.apiserver.registry.builtin import labelselector
from pyocm.apiserver.registry.resources import CREATE_ONLY, ResourceInfo
from pyocm.apiserver.registry.strategy import Context, Obj, Strategy, meta
from pyocm.kube.status import ErrorType, FieldError, bad_request, forbidden, invalid, required

AUTHORIZATION = "authorization.k8s.io"
AUTHENTICATION = "authentication.k8s.io"


def _spec(review: Obj) -> dict[str, Any]:
    spec = review.get("spec")
    return spec if isinstance(spec, dict) else {}


def _non_resource(value: Any) -> str:
    """``%#v`` of the (dereferenced) internal NonResourceAttributes pointer."""
    value = value if isinstance(value, dict) else {}
    return f'authorization.NonResourceAttributes{{Path:"{value.get("path") or ""}", Verb:"{value.get("verb") or ""}"}}'


def _rendered(path: str, rendered: str, detail: str) -> FieldError:
    # The value is already in Go's notation, which must appear unquoted.
    return FieldError(ErrorType.INVALID, path, f"{rendered}: {detail}")


def _selector_errors(
    selector: Any, path: str, check: Callable[[Any, str], list[FieldError]]
) -> list[FieldError]:
    """A field or label selector attribute: raw text or requirements, exactly one."""
    if not isinstance(selector, dict):
        return []
    raw, requirements = selector.get("rawSelector") or "", selector.get("requirements") or []
    errs = []
    if raw and requirements:
        errs.append(
            invalid(
                f"{path}.rawSelector", raw, "may not specified at the same time as requirements"
            )
        )
    if not raw and not requirements:
        errs.append(
            required(
                f"{path}.requirements",
                f"when {path} is specified, requirements or rawSelector is required",
            )
        )
    return errs + [
        e for i, r in enumerate(requirements) for e in check(r, f"{path}.requirements[{i}]")
    ]


def _field_requirement_errors(requirement: Any, path: str) -> list[FieldError]:
    """``ValidateFieldSelectorRequirement``, unknown operators allowed (newer clients)."""
    requirement = requirement if isinstance(requirement, dict) else {}
    errs = [] if requirement.get("key") else [required(f"{path}.key", "must be specified")]
    operator, values = requirement.get("operator"), requirement.get("values") or []
    if operator in ("In", "NotIn") and not values:
        errs.append(
            required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        )
    if operator in ("Exists", "DoesNotExist") and values:
        errs.append(
            forbidden(
                f"{path}.values",
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
        )
    return errs


def _label_requirement_errors(requirement: Any, path: str) -> list[FieldError]:
    return labelselector.validate_requirement(requirement, path, allow_unknown_operator=True)


def access_spec_errors(spec: dict[str, Any], *, with_subject: bool) -> list[FieldError]:
    """``Validate(Self)SubjectAccessReviewSpec``: exactly one kind of attributes; a
    subject (user or groups) unless the review is about the caller."""
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    errs = []
    if resource is not None and non_resource is not None:
        errs.append(
            _rendered(
                "spec.nonResourceAttributes",
                _non_resource(non_resource),
                "cannot be specified in combination with resourceAttributes",
            )
        )
    if resource is None and non_resource is None:
        errs.append(
            invalid(
                "spec.resourceAttributes",
                "null",
                "exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        )
    if with_subject and not spec.get("user") and not spec.get("groups"):
        errs.append(
            invalid(
                "spec.user",
                str(spec.get("user") or ""),
                "at least one of user or group must be specified",
            )
        )
    if isinstance(resource, dict):
        base = "spec.resourceAttributes"
        errs += _selector_errors(
            resource.get("fieldSelector"), f"{base}.fieldSelector", _field_requirement_errors
        )
        errs += _selector_errors(
            resource.get("labelSelector"), f"{base}.labelSelector", _label_requirement_errors
        )
    return errs


def _metadata_errors(review: Obj, *, except_namespace: bool) -> list[FieldError]:
    """Reviews carry no metadata (a local one only its namespace); empty values count as unset."""
    m = meta(review)
    ignored = ("managedFields", "namespace") if except_namespace else ("managedFields",)
    if not any(v for k, v in m.items() if k not in ignored):
        return []
    detail = "must be empty except for namespace" if except_namespace else "must be empty"
    return [invalid("metadata", m, detail)]


def validate_subject_access_review(review: Obj, *, namespace: str = "") -> list[FieldError]:
    return access_spec_errors(_spec(review), with_subject=True) + _metadata_errors(
        review, except_namespace=False
    )


def validate_self_subject_access_review(review: Obj, *, namespace: str = "") -> list[FieldError]:
    return access_spec_errors(_spec(review), with_subject=False) + _metadata_errors(
        review, except_namespace=False
    )


def validate_local_subject_access_review(review: Obj, *, namespace: str = "") -> list[FieldError]:
    """Also: resource attributes name the review's namespace, and the URL names it too."""
    spec = _spec(review)
    errs = access_spec_errors(spec, with_subject=True) + _metadata_errors(
        review, except_namespace=True
    )
    own = str(meta(review).get("namespace") or "")
    resource = spec.get("resourceAttributes")
    if isinstance(resource, dict) and str(resource.get("namespace") or "") != own:
        errs.append(
            invalid(
                "spec.resourceAttributes.namespace",
                str(resource.get("namespace") or ""),
                "must match metadata.namespace",
            )
        )
    if spec.get("nonResourceAttributes") is not None:
        errs.append(
            _rendered(
                "spec.nonResourceAttributes",
                _non_resource(spec["nonResourceAttributes"]),
                "disallowed on this kind of request",
            )
        )
    if errs:
        return errs
    if not namespace:
        raise bad_request(f"namespace is required on this type: {namespace}")
    if namespace != own:
        raise bad_request(f"spec.resourceAttributes.namespace must match namespace: {namespace}")
    return []


def validate_self_subject_rules_review(review: Obj, *, namespace: str = "") -> list[FieldError]:
    if not _spec(review).get("namespace"):
        raise bad_request("no namespace on request")
    return []


def validate_token_review(review: Obj, *, namespace: str = "") -> list[FieldError]:
    if namespace:
        raise bad_request(f"namespace is not allowed on this type: {namespace}")
    if not _spec(review).get("token"):
        raise bad_request("token is required for TokenReview in authentication")
    return []


def validate_self_subject_review(review: Obj, *, namespace: str = "") -> list[FieldError]:
    return []


Validator = Callable[..., list[FieldError]]
VALIDATORS: dict[str, Validator] = {
    "SubjectAccessReview": validate_subject_access_review,
    "SelfSubjectAccessReview": validate_self_subject_access_review,
    "LocalSubjectAccessReview": validate_local_subject_access_review,
    "SelfSubjectRulesReview": validate_self_subject_rules_review,
    "TokenReview": validate_token_review,
    "SelfSubjectReview": validate_self_subject_review,
}


def validate_review(kind: str, review: Obj, *, namespace: str = "") -> list[FieldError]:
    """Field errors of a review body; raises a 400 ApiError for what Kubernetes answers
    with Bad Request. ``namespace`` is the request's (the URL's) namespace."""
    return VALIDATORS[kind](review, namespace=namespace)


class ReviewStrategy(Strategy):
    """Lets generic code validate a review through the usual hook; nothing else applies."""

    tracks_generation = False

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind

    def validate_create(self, obj: Obj, ctx: Context) -> list[FieldError]:
        return validate_review(self.kind, obj, namespace=ctx.namespace)


def _review(group: str, kind: str, *, namespaced: bool = False) -> ResourceInfo:
    singular = kind.lower()
    return ResourceInfo(
        group=group,
        version="v1",
        kind=kind,
        plural=f"{singular}s",
        singular=singular,
        namespaced=namespaced,
        strategy=ReviewStrategy(kind),
        verbs=CREATE_ONLY,
        virtual=True,
    )


def review_resources() -> list[ResourceInfo]:
    return [
        _review(AUTHORIZATION, "LocalSubjectAccessReview", namespaced=True),
        _review(AUTHORIZATION, "SelfSubjectAccessReview"),
        _review(AUTHORIZATION, "SelfSubjectRulesReview"),
        _review(AUTHORIZATION, "SubjectAccessReview"),
        _review(AUTHENTICATION, "SelfSubjectReview"),
        _review(AUTHENTICATION, "TokenReview"),
    ]
