"""Label and field selectors: grammar, matching, printing and errors as apimachinery."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.kube import selectors
from pyocm.kube.selectors import Operator, SelectorError
from pyocm.kube.status import ErrorType

CLUSTER = {"open-cluster-management.io/cluster-name": "c1", "env": "prod", "tier": "3"}


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        pytest.param("", "", id="empty"),
        pytest.param("   ", "", id="blanks"),
        pytest.param(
            "open-cluster-management.io/cluster-name = c1",
            "open-cluster-management.io/cluster-name=c1",
            id="clusteradm-spaces",
        ),
        pytest.param("a==b,c!=d", "a==b,c!=d", id="double-equals-and-not-equals"),
        pytest.param(
            "x in (foo,,baz),y,z notin ()",
            "x in (,baz,foo),y,z notin ()",
            id="sets-with-empty-values",
        ),
        pytest.param("b, !a", "!a,b", id="sorted-by-key"),
        pytest.param("k>5,k<10", "k>5,k<10", id="gt-lt"),
        pytest.param("in in (in,notin)", "in in (in,notin)", id="keywords-as-values"),
        pytest.param("k in (b,a,b)", "k in (a,b)", id="set-deduplicated-and-sorted"),
        pytest.param("k=", "k=", id="empty-value"),
        pytest.param("\tk\n=\rv ", "k=v", id="all-whitespace-kinds"),
    ],
)
def test_parse_and_print(text: str, canonical: str) -> None:
    assert str(selectors.parse_label_selector(text)) == canonical


def test_empty_selector_is_everything() -> None:
    selector = selectors.parse_label_selector("")
    assert selector.empty
    assert selector.matches({})
    assert selector.matches(None)


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        pytest.param("open-cluster-management.io/cluster-name = c1", CLUSTER, True, id="equals"),
        pytest.param("env==dev", CLUSTER, False, id="double-equals-mismatch"),
        pytest.param("env!=dev", CLUSTER, True, id="not-equals"),
        pytest.param("missing!=x", CLUSTER, True, id="not-equals-absent-key"),
        pytest.param("env in (dev,prod)", CLUSTER, True, id="in"),
        pytest.param("missing in (a)", CLUSTER, False, id="in-absent-key"),
        pytest.param("env notin (prod)", CLUSTER, False, id="notin"),
        pytest.param("missing notin (prod)", CLUSTER, True, id="notin-absent-key"),
        pytest.param("env", CLUSTER, True, id="exists"),
        pytest.param("!env", CLUSTER, False, id="does-not-exist"),
        pytest.param(
            "open-cluster-management.io/cluster-name,!addon.open-cluster-management.io/name",
            CLUSTER,
            True,
            id="hub-informer-selector",
        ),
        pytest.param("tier>2", CLUSTER, True, id="gt"),
        pytest.param("tier<3", CLUSTER, False, id="lt-equal-is-false"),
        pytest.param("env>1", CLUSTER, False, id="gt-non-integer-label"),
        pytest.param("missing<1", CLUSTER, False, id="lt-absent-key"),
        pytest.param("k in ()", {"k": ""}, True, id="empty-set-matches-empty-value"),
        pytest.param("k=", {"k": ""}, True, id="empty-value-matches"),
        pytest.param("env=prod,tier=4", CLUSTER, False, id="and"),
    ],
)
def test_matches(text: str, labels: dict[str, str], expected: bool) -> None:
    assert selectors.parse_label_selector(text).matches(labels) is expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "a b",
            "unable to parse requirement: found 'b', expected: '=', '!=', '==', 'in', notin'",
            id="missing-operator",
        ),
        pytest.param("a=b=c", "found '=', expected: ',' or 'end of string'", id="two-operators"),
        pytest.param("a,", "found '', expected: identifier after ','", id="trailing-comma"),
        pytest.param(
            ",a", "found ',', expected: !, identifier, or 'end of string'", id="leading-comma"
        ),
        pytest.param(
            "!", "unable to parse requirement: found '', expected: identifier", id="bare-not"
        ),
        pytest.param(
            "k notin x",
            "unable to parse requirement: found 'x' expected: '('",
            id="set-without-paren",
        ),
        pytest.param(
            "k in (a",
            "unable to parse requirement: found '', expected: ',' or ')'",
            id="unclosed-set",
        ),
        pytest.param(
            "k in (a b)",
            "unable to parse requirement: found 'b', expected: ',' or ')'",
            id="set-missing-comma",
        ),
        pytest.param(
            "k in (=)",
            "unable to parse requirement: found '=', expected: ',', ')' or identifier",
            id="set-operator",
        ),
        pytest.param(
            "k=(",
            "unable to parse requirement: found '(', expected: identifier",
            id="value-is-symbol",
        ),
        pytest.param(
            "k>x",
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
            id="gt-non-integer",
        ),
        pytest.param("!k=v", "found '=', expected: ',' or 'end of string'", id="not-with-value"),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as caught:
        selectors.parse_label_selector(text)
    assert str(caught.value) == message


def test_invalid_key_error_has_nil_path_like_kubernetes() -> None:
    with pytest.raises(SelectorError) as caught:
        selectors.parse_label_selector("a/b/c=1")
    assert str(caught.value).startswith(
        'unable to parse requirement: <nil>: Invalid value: "a/b/c": a qualified name must'
    )


def test_invalid_value_error_names_values_path_and_key() -> None:
    with pytest.raises(SelectorError) as caught:
        selectors.parse_label_selector("k=v@")
    assert str(caught.value).startswith(
        'unable to parse requirement: values[0][k]: Invalid value: "v@": a valid label must be an empty string'
    )


def test_selector_error_is_value_error() -> None:
    assert issubclass(SelectorError, ValueError)


@pytest.mark.parametrize(
    ("obj", "text", "labels", "expected"),
    [
        pytest.param({}, "", {"a": "b"}, True, id="empty-object-is-everything"),
        pytest.param(
            {"matchLabels": {"b": "2", "a": "1"}},
            "a=1,b=2",
            {"a": "1", "b": "2"},
            True,
            id="match-labels",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "dev"]}]},
            "env in (dev,prod)",
            {"env": "dev"},
            True,
            id="in",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]},
            "env notin (prod)",
            {"env": "prod"},
            False,
            id="notin",
        ),
        pytest.param(
            {
                "matchExpressions": [
                    {"key": "a", "operator": "Exists"},
                    {"key": "b", "operator": "DoesNotExist"},
                ]
            },
            "a,!b",
            {"a": "x"},
            True,
            id="exists-and-does-not-exist",
        ),
    ],
)
def test_from_label_selector(
    obj: dict[str, Any], text: str, labels: dict[str, str], expected: bool
) -> None:
    selector = selectors.from_label_selector(obj)
    assert str(selector) == text
    assert selector.matches(labels) is expected


def test_nil_label_selector_selects_nothing() -> None:
    selector = selectors.from_label_selector(None)
    assert selector is selectors.NOTHING
    assert not selector.empty
    assert not selector.matches({})
    assert not selector.matches({"a": "b"})


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "Foo"}]},
            '"Foo" is not a valid label selector operator',
            id="unknown-operator",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "In", "values": []}]},
            "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
            id="in-without-values",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
            'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist',
            id="exists-with-values",
        ),
    ],
)
def test_from_label_selector_errors(obj: dict[str, Any], message: str) -> None:
    with pytest.raises(SelectorError) as caught:
        selectors.from_label_selector(obj)
    assert str(caught.value) == message


def test_new_requirement_aggregates_several_errors() -> None:
    with pytest.raises(SelectorError) as caught:
        selectors.new_requirement("k", Operator.EQUALS, ["a", "b"])
    assert (
        str(caught.value)
        == 'values: Invalid value: []string{"a", "b"}: exact-match compatibility requires one single value'
    )
    with pytest.raises(SelectorError) as caught:
        selectors.new_requirement("-k", Operator.EXISTS, ["v"])
    message = str(caught.value)
    assert message.startswith('[key: Invalid value: "-k": name part must consist')
    assert message.endswith(
        'values: Invalid value: []string{"v"}: values set must be empty for exists and does not exist]'
    )


def test_validate_label_selector() -> None:
    errors = selectors.validate_label_selector(
        {
            "matchLabels": {"ok": "v@"},
            "matchExpressions": [
                {"key": "a", "operator": "In"},
                {"key": "b", "operator": "Exists", "values": ["x"]},
                {"key": "c", "operator": "Bogus"},
            ],
        },
        "spec.selector",
    )
    summary = [(e.type, e.field) for e in errors]
    assert summary == [
        (ErrorType.INVALID, "spec.selector.matchLabels"),
        (ErrorType.REQUIRED, "spec.selector.matchExpressions[0].values"),
        (ErrorType.FORBIDDEN, "spec.selector.matchExpressions[1].values"),
        (ErrorType.INVALID, "spec.selector.matchExpressions[2].operator"),
    ]
    assert errors[1].message() == (
        "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
    )
    assert (
        errors[3].message()
        == 'spec.selector.matchExpressions[2].operator: Invalid value: "Bogus": not a valid selector operator'
    )


def test_validate_label_selector_accepts_valid_and_absent() -> None:
    assert selectors.validate_label_selector(None, "spec.selector") == []
    assert selectors.validate_label_selector({"matchLabels": {"a": "b"}}, "spec.selector") == []


# --- field selectors ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "canonical", "fields"),
    [
        pytest.param("", "", (), id="empty"),
        pytest.param("metadata.name=c1", "metadata.name=c1", ("metadata.name",), id="equals"),
        pytest.param(
            "metadata.name==c1", "metadata.name=c1", ("metadata.name",), id="double-equals"
        ),
        pytest.param(
            "status.phase!=Active,metadata.name=c1",
            "metadata.name=c1,status.phase!=Active",
            ("metadata.name", "status.phase"),
            id="sorted-terms",
        ),
        pytest.param(
            "involvedObject.kind=Pod,involvedObject.uid=u,involvedObject.name=n,involvedObject.namespace=",
            "involvedObject.kind=Pod,involvedObject.name=n,involvedObject.namespace=,involvedObject.uid=u",
            (
                "involvedObject.kind",
                "involvedObject.name",
                "involvedObject.namespace",
                "involvedObject.uid",
            ),
            id="kubectl-describe",
        ),
        pytest.param(r"a=x\,y\=z\\", r"a=x\,y\=z\\", ("a",), id="escapes-round-trip"),
        pytest.param("a=1,a=2", "a=1,a=2", ("a",), id="fields-deduplicated"),
    ],
)
def test_field_selector_parse(text: str, canonical: str, fields: tuple[str, ...]) -> None:
    selector = selectors.parse_field_selector(text)
    assert str(selector) == canonical
    assert selector.fields() == fields


def test_field_selector_unescapes_values() -> None:
    selector = selectors.parse_field_selector(r"a=x\,y\=z\\")
    assert selector.terms == (selectors.FieldRequirement("a", "x,y=z\\"),)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("foo", "invalid selector: 'foo'; can't understand 'foo'", id="no-operator"),
        pytest.param(
            "a=b=c", "invalid field selector: unescaped character in value: 61", id="bare-equals"
        ),
        pytest.param(
            r"a=b\x", r"invalid field selector: invalid escape sequence: \x", id="unknown-escape"
        ),
        pytest.param(
            "a=b\\", "invalid field selector: invalid escape sequence: \\", id="trailing-backslash"
        ),
    ],
)
def test_field_selector_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as caught:
        selectors.parse_field_selector(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("text", "fields", "expected"),
    [
        pytest.param("metadata.name=c1", {"metadata.name": "c1"}, True, id="equal"),
        pytest.param("metadata.name=c1", {"metadata.name": "c2"}, False, id="different"),
        pytest.param("status.phase!=Active", {"status.phase": "Terminating"}, True, id="not-equal"),
        pytest.param("metadata.namespace=", {}, True, id="absent-reads-empty"),
        pytest.param("a=1,b=2", {"a": "1", "b": "3"}, False, id="and"),
        pytest.param("", {}, True, id="empty-matches-all"),
    ],
)
def test_field_selector_matches_mapping(text: str, fields: dict[str, str], expected: bool) -> None:
    assert selectors.parse_field_selector(text).matches(fields) is expected


def test_field_selector_matches_getter() -> None:
    seen: list[str] = []

    def get(name: str) -> str | None:
        seen.append(name)
        return {"spec.signerName": "kubernetes.io/kube-apiserver-client"}.get(name)

    selector = selectors.parse_field_selector("spec.signerName=kubernetes.io/kube-apiserver-client")
    assert selector.matches(get)
    assert seen == ["spec.signerName"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("metadata.name=cluster1", "cluster1", id="pinned"),
        pytest.param(
            "metadata.name==cluster1,metadata.namespace=ns", "cluster1", id="with-other-terms"
        ),
        pytest.param("metadata.name!=cluster1", None, id="negated"),
        pytest.param("metadata.namespace=ns", None, id="other-field"),
        pytest.param("", None, id="empty"),
    ],
)
def test_pinned_value(text: str, expected: str | None) -> None:
    assert selectors.parse_field_selector(text).pinned_value("metadata.name") == expected


def test_field_selector_keeps_spaces_in_field_names_like_kubernetes() -> None:
    # apimachinery does not trim: the server then refuses "metadata.name " as unsupported.
    assert selectors.parse_field_selector("metadata.name = x").fields() == ("metadata.name ",)


def test_escape_field_value() -> None:
    assert selectors.escape_field_value("a,b=c\\") == r"a\,b\=c\\"
    assert selectors.unescape_field_value(selectors.escape_field_value("a,b=c\\")) == "a,b=c\\"
