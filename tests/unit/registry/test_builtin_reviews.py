"""Review kinds: discovery entries and request validation."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.registry.builtin import reviews
from pyocm.apiserver.registry.strategy import Context
from pyocm.kube.status import ApiError, ErrorType

RESOURCE = {
    "namespace": "",
    "verb": "renew",
    "group": "register.open-cluster-management.io",
    "resource": "managedclusters",
    "subresource": "clientcertificates",
}


def review(kind: str, spec: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    group = (
        reviews.AUTHENTICATION
        if kind in ("TokenReview", "SelfSubjectReview")
        else reviews.AUTHORIZATION
    )
    return {"apiVersion": f"{group}/v1", "kind": kind, "metadata": metadata, "spec": spec}


def messages(kind: str, body: dict[str, Any], namespace: str = "") -> list[str]:
    return [e.message() for e in reviews.validate_review(kind, body, namespace=namespace)]


def test_resources_are_virtual_and_create_only() -> None:
    table = {(r.group, r.plural): r for r in reviews.review_resources()}
    assert set(table) == {
        ("authorization.k8s.io", "localsubjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectrulesreviews"),
        ("authorization.k8s.io", "subjectaccessreviews"),
        ("authentication.k8s.io", "selfsubjectreviews"),
        ("authentication.k8s.io", "tokenreviews"),
    }
    assert all(r.virtual and r.verbs == ("create",) and r.version == "v1" for r in table.values())
    assert [r.plural for r in table.values() if r.namespaced] == ["localsubjectaccessreviews"]
    assert table[("authorization.k8s.io", "subjectaccessreviews")].kind == "SubjectAccessReview"
    assert table[("authorization.k8s.io", "subjectaccessreviews")].singular == "subjectaccessreview"


def test_subject_access_review_from_the_csr_approver_passes() -> None:
    body = review(
        "SubjectAccessReview", {"user": "u", "groups": ["g"], "resourceAttributes": RESOURCE}
    )
    assert messages("SubjectAccessReview", body) == []


def test_subject_access_review_needs_one_kind_of_attributes_and_a_subject() -> None:
    assert messages("SubjectAccessReview", review("SubjectAccessReview", {})) == [
        'spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
        'spec.user: Invalid value: "": at least one of user or group must be specified',
    ]
    both = review(
        "SubjectAccessReview",
        {
            "groups": ["g"],
            "resourceAttributes": RESOURCE,
            "nonResourceAttributes": {"path": "/healthz", "verb": "get"},
        },
    )
    assert messages("SubjectAccessReview", both) == [
        'spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/healthz", Verb:"get"}: '
        "cannot be specified in combination with resourceAttributes"
    ]


def test_subject_access_review_metadata_must_be_empty() -> None:
    body = review("SubjectAccessReview", {"user": "u", "resourceAttributes": RESOURCE}, name="x")
    errs = reviews.validate_review("SubjectAccessReview", body)
    assert [(e.type, e.field, e.detail) for e in errs] == [
        (ErrorType.INVALID, "metadata", "must be empty")
    ]
    empty_values = review(
        "SubjectAccessReview", {"user": "u", "resourceAttributes": RESOURCE}, name="", labels={}
    )
    assert messages("SubjectAccessReview", empty_values) == []


def test_self_subject_access_review_as_kubectl_sends_it() -> None:
    spec = {
        "resourceAttributes": {
            "namespace": "default",
            "verb": "create",
            "group": "cluster.open-cluster-management.io",
            "resource": "managedclusters",
        }
    }
    assert messages("SelfSubjectAccessReview", review("SelfSubjectAccessReview", spec)) == []
    assert messages("SelfSubjectAccessReview", review("SelfSubjectAccessReview", {})) == [
        'spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified'
    ]


def test_selector_attributes() -> None:
    attrs = dict(
        RESOURCE,
        fieldSelector={},
        labelSelector={"rawSelector": "a=b", "requirements": [{"key": "a", "operator": "In"}]},
    )
    body = review("SelfSubjectAccessReview", {"resourceAttributes": attrs})
    assert messages("SelfSubjectAccessReview", body) == [
        "spec.resourceAttributes.fieldSelector.requirements: Required value: when spec.resourceAttributes.fieldSelector is specified, requirements or rawSelector is required",
        'spec.resourceAttributes.labelSelector.rawSelector: Invalid value: "a=b": may not specified at the same time as requirements',
        "spec.resourceAttributes.labelSelector.requirements[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
    ]
    unknown = dict(
        RESOURCE,
        fieldSelector={"requirements": [{"key": "spec.x", "operator": "Matches", "values": ["1"]}]},
    )
    assert (
        messages(
            "SelfSubjectAccessReview",
            review("SelfSubjectAccessReview", {"resourceAttributes": unknown}),
        )
        == []
    )


def test_local_subject_access_review_namespaces() -> None:
    attrs = dict(RESOURCE, namespace="ns1")
    good = review(
        "LocalSubjectAccessReview", {"user": "u", "resourceAttributes": attrs}, namespace="ns1"
    )
    assert messages("LocalSubjectAccessReview", good, "ns1") == []
    mismatch = review(
        "LocalSubjectAccessReview", {"user": "u", "resourceAttributes": attrs}, namespace="ns2"
    )
    assert messages("LocalSubjectAccessReview", mismatch, "ns2") == [
        'spec.resourceAttributes.namespace: Invalid value: "ns1": must match metadata.namespace'
    ]
    non_resource = review(
        "LocalSubjectAccessReview",
        {"user": "u", "nonResourceAttributes": {"path": "/x", "verb": "get"}},
        namespace="ns1",
    )
    assert messages("LocalSubjectAccessReview", non_resource, "ns1") == [
        'spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: disallowed on this kind of request'
    ]
    with pytest.raises(ApiError) as caught:
        reviews.validate_review("LocalSubjectAccessReview", good, namespace="other")
    assert (caught.value.code, caught.value.message) == (
        400,
        "spec.resourceAttributes.namespace must match namespace: other",
    )


@pytest.mark.parametrize(
    ("kind", "spec", "namespace", "message"),
    [
        pytest.param(
            "SelfSubjectRulesReview", {}, "", "no namespace on request", id="rules-need-namespace"
        ),
        pytest.param(
            "TokenReview",
            {},
            "",
            "token is required for TokenReview in authentication",
            id="token-required",
        ),
        pytest.param(
            "TokenReview",
            {"token": "t"},
            "ns",
            "namespace is not allowed on this type: ns",
            id="token-cluster-scoped",
        ),
    ],
)
def test_bad_requests(kind: str, spec: dict[str, Any], namespace: str, message: str) -> None:
    with pytest.raises(ApiError) as caught:
        reviews.validate_review(kind, review(kind, spec), namespace=namespace)
    assert (caught.value.code, caught.value.reason, caught.value.message) == (
        400,
        "BadRequest",
        message,
    )


def test_valid_rules_token_and_self_reviews() -> None:
    assert (
        messages(
            "SelfSubjectRulesReview", review("SelfSubjectRulesReview", {"namespace": "default"})
        )
        == []
    )
    assert messages("TokenReview", review("TokenReview", {"token": "abc"})) == []
    assert messages("SelfSubjectReview", review("SelfSubjectReview", {})) == []


def test_strategy_validates_through_the_usual_hook() -> None:
    strategy = reviews.ReviewStrategy("SubjectAccessReview")
    errs = strategy.validate_create(
        review("SubjectAccessReview", {"resourceAttributes": RESOURCE}),
        Context(user=UserInfo(name="x")),
    )
    assert [e.field for e in errs] == ["spec.user"]
