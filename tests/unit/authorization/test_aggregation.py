"""ClusterRole aggregation, as kube-controller-manager's aggregation controller computes it."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.apiserver.authorization.aggregation import (
    SelectorError,
    aggregate,
    aggregate_changes,
    all_selectors,
    may_affect,
    selector_matches,
)

Obj = dict[str, Any]


def cr(
    name: str, *rules: Obj, labels: dict[str, str] | None = None, selectors: list[Obj] | None = None
) -> Obj:
    role: Obj = {"metadata": {"name": name, "labels": labels or {}}, "rules": list(rules)}
    if selectors is not None:
        role["aggregationRule"] = {"clusterRoleSelectors": selectors}
    return role


def r(verb: str, resource: str) -> Obj:
    return {"verbs": [verb], "apiGroups": [""], "resources": [resource]}


def test_union_in_name_order_without_duplicates_or_itself() -> None:
    roles = [
        cr("zeta", r("get", "secrets"), r("get", "pods"), labels={"agg": "yes"}),
        cr("alpha", r("get", "pods"), labels={"agg": "yes"}),
        cr("unlabelled", r("delete", "pods")),
        cr(
            "combined",
            r("stale", "x"),
            labels={"agg": "yes"},
            selectors=[{"matchLabels": {"agg": "yes"}}],
        ),
    ]
    assert aggregate(roles) == {"combined": [r("get", "pods"), r("get", "secrets")]}


def test_selectors_are_taken_in_turn() -> None:
    roles = [
        cr("a", r("get", "a"), labels={"first": "true"}),
        cr("b", r("get", "b"), labels={"second": "true", "first": "true"}),
        cr("c", r("get", "c"), labels={"second": "true"}),
        cr(
            "agg",
            selectors=[{"matchLabels": {"second": "true"}}, {"matchLabels": {"first": "true"}}],
        ),
    ]
    assert aggregate(roles)["agg"] == [r("get", "b"), r("get", "c"), r("get", "a")]


def test_empty_and_absent_lists_are_the_same_rule() -> None:
    roles = [
        cr(
            "a",
            {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": []},
            labels={"x": "1"},
        ),
        cr("b", r("get", "pods"), labels={"x": "1"}),
        cr("agg", selectors=[{"matchLabels": {"x": "1"}}]),
    ]
    assert aggregate(roles)["agg"] == [r("get", "pods")]


def test_nested_aggregation_converges_in_one_call() -> None:
    roles = [
        cr("admin", selectors=[{"matchLabels": {"to-admin": "true"}}]),
        cr("edit", labels={"to-admin": "true"}, selectors=[{"matchLabels": {"to-edit": "true"}}]),
        cr("view", labels={"to-edit": "true"}, selectors=[{"matchLabels": {"to-view": "true"}}]),
        cr("admin-part", r("create", "roles"), labels={"to-admin": "true"}),
        cr("edit-part", r("create", "secrets"), labels={"to-edit": "true"}),
        cr("view-part", r("get", "configmaps"), labels={"to-view": "true"}),
    ]
    assert aggregate(roles) == {
        "admin": [r("create", "roles"), r("create", "secrets"), r("get", "configmaps")],
        "edit": [r("create", "secrets"), r("get", "configmaps")],
        "view": [r("get", "configmaps")],
    }


def test_cycles_end_on_stored_rules() -> None:
    roles = [
        cr(
            "a",
            r("get", "a"),
            labels={"to-b": "true"},
            selectors=[{"matchLabels": {"to-a": "true"}}],
        ),
        cr(
            "b",
            r("get", "b"),
            labels={"to-a": "true"},
            selectors=[{"matchLabels": {"to-b": "true"}}],
        ),
    ]
    assert aggregate(roles) == {"a": [r("get", "a")], "b": [r("get", "a")]}


def test_present_rule_without_selectors_gathers_nothing() -> None:
    roles = [cr("a", r("get", "a")), cr("agg", r("get", "old"), selectors=[])]
    assert aggregate(roles) == {"agg": []}


def test_empty_selector_selects_every_other_role() -> None:
    roles = [
        cr("a", r("get", "a")),
        cr("b", r("get", "b")),
        cr("agg", r("get", "old"), selectors=[{}]),
    ]
    assert aggregate(roles)["agg"] == [r("get", "a"), r("get", "b")]


def test_invalid_selector_leaves_the_role_out() -> None:
    roles = [
        cr("a", r("get", "a")),
        cr("agg", selectors=[{"matchExpressions": [{"key": "k", "operator": "Near"}]}]),
    ]
    assert aggregate(roles) == {}


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        pytest.param(None, {}, False, id="null-selects-nothing"),
        pytest.param({}, {"a": "b"}, True, id="empty-selects-everything"),
        pytest.param({"matchLabels": {"a": "b"}}, {"a": "b", "c": "d"}, True, id="labels-subset"),
        pytest.param({"matchLabels": {"a": "b"}}, {"a": "c"}, False, id="labels-differ"),
        pytest.param({"matchLabels": {"a": "b"}}, {}, False, id="labels-missing"),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["x", "y"]}]},
            {"a": "y"},
            True,
            id="in",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "In", "values": ["x"]}]},
            {},
            False,
            id="in-missing",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]},
            {},
            True,
            id="notin-missing",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "NotIn", "values": ["x"]}]},
            {"a": "x"},
            False,
            id="notin",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "Exists"}]}, {"a": ""}, True, id="exists"
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]},
            {"a": ""},
            False,
            id="does-not-exist",
        ),
        pytest.param(
            {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "c", "operator": "Exists"}]},
            {"a": "b"},
            False,
            id="all-requirements-must-hold",
        ),
    ],
)
def test_selector_matches(selector: Obj | None, labels: dict[str, str], matches: bool) -> None:
    assert selector_matches(selector, labels) is matches


@pytest.mark.parametrize(
    "expr",
    [
        pytest.param({"key": "a", "operator": "In", "values": []}, id="in-without-values"),
        pytest.param({"key": "a", "operator": "Exists", "values": ["x"]}, id="exists-with-values"),
        pytest.param({"key": "a", "operator": "Gt", "values": ["1"]}, id="unknown-operator"),
    ],
)
def test_invalid_requirements(expr: Obj) -> None:
    with pytest.raises(SelectorError):
        selector_matches({"matchExpressions": [expr]}, {"a": "1"})


def test_aggregate_changes_keeps_only_stale_roles() -> None:
    roles = [
        cr("a", r("get", "a"), labels={"x": "1"}),
        cr("current", r("get", "a"), selectors=[{"matchLabels": {"x": "1"}}]),
        cr("stale", r("get", "old"), selectors=[{"matchLabels": {"x": "1"}}]),
    ]
    assert aggregate_changes(roles) == {"stale": [r("get", "a")]}


def test_only_roles_an_aggregate_selects_or_that_aggregate_may_affect_one() -> None:
    roles = [cr("admin", selectors=[{"matchLabels": {"to-admin": "true"}}]), cr("plain")]
    selectors = all_selectors(roles)
    assert selectors == [{"matchLabels": {"to-admin": "true"}}]
    assert may_affect(cr("extra", r("get", "a"), labels={"to-admin": "true"}), selectors)
    assert may_affect(cr("new-aggregate", selectors=[]), selectors)
    assert not may_affect(cr("per-cluster", labels={"cluster": "c1"}), selectors)
    # An empty selector selects every role; one that cannot be evaluated counts as selecting.
    assert may_affect(cr("per-cluster"), all_selectors([cr("everything", selectors=[{}])]))
    bad = [{"matchExpressions": [{"key": "k", "operator": "Near"}]}]
    assert may_affect(cr("anything"), bad)
