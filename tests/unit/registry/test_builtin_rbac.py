"""RBAC strategies: rules, aggregation, role references and subjects."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.registry.builtin import rbac
from pyocm.apiserver.registry.strategy import Context
from pyocm.kube.status import ErrorType

CTX = Context(user=UserInfo(name="admin"))
GROUP = "rbac.authorization.k8s.io"


def role(*rules: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": "system:r"}, "rules": list(rules), **extra}


def binding(ref: dict[str, Any], *subjects: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "b"}, "roleRef": ref, "subjects": list(subjects)}


def test_valid_roles_pass() -> None:
    resource_rule = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}
    url_rule = {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}
    assert rbac.RoleStrategy().validate_create(role(resource_rule), CTX) == []
    assert rbac.ClusterRoleStrategy().validate_create(role(resource_rule, url_rule), CTX) == []


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        pytest.param(
            {"apiGroups": [""], "resources": ["pods"]},
            [
                (
                    ErrorType.REQUIRED,
                    "rules[0].verbs",
                    "rules[0].verbs: Required value: verbs must contain at least one value",
                )
            ],
            id="no-verbs",
        ),
        pytest.param(
            {"verbs": ["get"], "resources": ["pods"]},
            [
                (
                    ErrorType.REQUIRED,
                    "rules[0].apiGroups",
                    "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
                )
            ],
            id="no-groups",
        ),
        pytest.param(
            {"verbs": ["get"], "apiGroups": [""]},
            [
                (
                    ErrorType.REQUIRED,
                    "rules[0].resources",
                    "rules[0].resources: Required value: resource rules must supply at least one resource",
                )
            ],
            id="no-resources",
        ),
        pytest.param(
            {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez"]},
            [
                (
                    ErrorType.INVALID,
                    "rules[0].nonResourceURLs",
                    'rules[0].nonResourceURLs: Invalid value: []string{"/healthz", "/livez"}: namespaced rules cannot apply to non-resource URLs',
                )
            ],
            id="urls-in-role",
        ),
    ],
)
def test_role_rule_errors(rule: dict[str, Any], expected: list[tuple[ErrorType, str, str]]) -> None:
    errs = rbac.RoleStrategy().validate_create(role(rule), CTX)
    assert [(e.type, e.field, e.message()) for e in errs] == expected


def test_cluster_role_cannot_mix_urls_and_resources() -> None:
    rule = {"verbs": ["get"], "nonResourceURLs": ["/x"], "resources": ["pods"]}
    errs = rbac.ClusterRoleStrategy().validate_create(role(rule), CTX)
    assert [e.message() for e in errs] == [
        'rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both regular resources and non-resource URLs'
    ]


def test_aggregation_rule() -> None:
    strategy = rbac.ClusterRoleStrategy()
    good = role(
        aggregationRule={
            "clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/aggregate": "true"}}]
        }
    )
    assert strategy.validate_create(good, CTX) == []
    empty = strategy.validate_create(role(aggregationRule={}), CTX)
    assert [e.message() for e in empty] == [
        "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"
    ]
    bad = role(
        aggregationRule={
            "clusterRoleSelectors": [{"matchExpressions": [{"key": "a", "operator": "In"}]}]
        }
    )
    assert [(e.type, e.field) for e in strategy.validate_create(bad, CTX)] == [
        (ErrorType.REQUIRED, "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].values"),
        (ErrorType.INVALID, "aggregationRule.clusterRoleSelectors[0]"),
    ]


def test_binding_defaults_fill_api_groups() -> None:
    obj = binding(
        {"kind": "ClusterRole", "name": "view"},
        {"kind": "User", "name": "u"},
        {"kind": "Group", "name": "g"},
        {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"},
    )
    rbac.ClusterRoleBindingStrategy().prepare_for_create(obj, CTX)
    assert obj["roleRef"] == {"kind": "ClusterRole", "name": "view", "apiGroup": GROUP}
    assert [s.get("apiGroup") for s in obj["subjects"]] == [GROUP, GROUP, None]
    assert rbac.ClusterRoleBindingStrategy().validate_create(obj, CTX) == []


def test_role_ref_kinds() -> None:
    ref = {"apiGroup": GROUP, "kind": "Role", "name": "r"}
    assert rbac.RoleBindingStrategy().validate_create(binding(ref), CTX) == []
    errs = rbac.ClusterRoleBindingStrategy().validate_create(binding(ref), CTX)
    assert [e.message() for e in errs] == [
        'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"'
    ]


def test_role_ref_required_fields() -> None:
    errs = rbac.RoleBindingStrategy().validate_create(binding({"apiGroup": "example.com"}), CTX)
    assert [e.message() for e in errs] == [
        'roleRef.apiGroup: Unsupported value: "example.com": supported values: "rbac.authorization.k8s.io"',
        'roleRef.kind: Unsupported value: "": supported values: "Role", "ClusterRole"',
        "roleRef.name: Required value",
    ]


def test_role_ref_is_immutable() -> None:
    old = binding({"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"})
    new = binding({"apiGroup": GROUP, "kind": "ClusterRole", "name": "edit"})
    errs = rbac.RoleBindingStrategy().validate_update(new, old, CTX)
    assert [e.message() for e in errs] == [
        'roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef'
    ]


@pytest.mark.parametrize(
    ("subject", "namespaced", "messages"),
    [
        pytest.param(
            {"kind": "ServiceAccount", "name": "sa"},
            False,
            ["subjects[0].namespace: Required value"],
            id="sa-needs-namespace-in-cluster-binding",
        ),
        pytest.param({"kind": "ServiceAccount", "name": "sa"}, True, [], id="sa-in-role-binding"),
        pytest.param(
            {"kind": "ServiceAccount", "name": "sa", "apiGroup": GROUP},
            True,
            [
                'subjects[0].apiGroup: Unsupported value: "rbac.authorization.k8s.io": supported values: ""'
            ],
            id="sa-core-group",
        ),
        pytest.param(
            {"kind": "User", "name": "u", "apiGroup": "x"},
            True,
            [
                'subjects[0].apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io"'
            ],
            id="user-group",
        ),
        pytest.param(
            {"kind": "Robot", "name": "r"},
            True,
            [
                'subjects[0].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"'
            ],
            id="unknown-kind",
        ),
        pytest.param(
            {"kind": "Group", "apiGroup": GROUP},
            True,
            ["subjects[0].name: Required value"],
            id="group-name",
        ),
    ],
)
def test_subjects(subject: dict[str, Any], namespaced: bool, messages: list[str]) -> None:
    strategy = rbac.RoleBindingStrategy() if namespaced else rbac.ClusterRoleBindingStrategy()
    obj = binding({"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"}, subject)
    assert [e.message() for e in strategy.validate_create(obj, CTX)] == messages


def test_rbac_names_are_path_segments_and_put_creates() -> None:
    strategy = rbac.ClusterRoleStrategy()
    assert strategy.name_validator("system:controller:x") == []
    assert strategy.name_validator("a/b") == ["may not contain '/'"]
    assert strategy.allow_create_on_update is True
    assert strategy.tracks_generation is False
