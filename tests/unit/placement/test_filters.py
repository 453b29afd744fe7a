"""Predicate and TaintToleration filters, with upstream's cases
(plugins/predicate/predicate_test.go, helpers/cel_test.go,
plugins/tainttoleration/taint_toleration_test.go) and seed 001's rules."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from pyocm.placement.scheduling.filters import filter_clusters
from pyocm.placement.scheduling.predicates import Misconfigured, cel_cluster, filter_predicates
from pyocm.placement.scheduling.taints import filter_taints

NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


def cluster(
    name: str,
    *,
    labels: dict[str, str] | None = None,
    claims: dict[str, str] | None = None,
    taints: list[dict[str, Any]] | None = None,
) -> Any:
    return {
        "metadata": {"name": name, **({"labels": labels} if labels else {})},
        "spec": {"taints": taints or []},
        "status": {"clusterClaims": [{"name": k, "value": v} for k, v in (claims or {}).items()]},
    }


def placement(*predicates: dict[str, Any], tolerations: list[Any] | None = None) -> Any:
    spec: dict[str, Any] = {"predicates": [{"requiredClusterSelector": p} for p in predicates]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"metadata": {"name": "test", "namespace": "test"}, "spec": spec}


def names(clusters: Any) -> list[str]:
    return [c["metadata"]["name"] for c in clusters]


def cel(*expressions: str) -> dict[str, Any]:
    return {"celSelector": {"celExpressions": list(expressions)}}


def claim_in(key: str, *values: str) -> dict[str, Any]:
    return {
        "claimSelector": {
            "matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]
        }
    }


SCORES = {("cluster1", "test-addon"): [{"name": "test-score", "value": 90}],
          ("cluster2", "test-addon"): [{"name": "test-score", "value": 70}]}  # fmt: skip


@pytest.mark.parametrize(
    ("predicates", "clusters", "expected"),
    [
        (
            [{"labelSelector": {"matchLabels": {"cloud": "Amazon"}}}],
            [
                cluster("cluster1", labels={"cloud": "Amazon"}),
                cluster("cluster2", labels={"cloud": "Google"}),
            ],
            ["cluster1"],
        ),
        (
            [claim_in("cloud", "Amazon")],
            [
                cluster("cluster1", claims={"cloud": "Amazon"}),
                cluster("cluster2", claims={"cloud": "Google"}),
            ],
            ["cluster1"],
        ),
        (
            [
                {
                    "labelSelector": {"matchLabels": {"cloud": "Amazon"}},
                    **claim_in("region", "us-east-1"),
                }
            ],
            [
                cluster("cluster1", labels={"cloud": "Amazon"}, claims={"region": "us-east-1"}),
                cluster("cluster2", labels={"cloud": "Amazon"}, claims={"region": "us-east-2"}),
            ],
            ["cluster1"],
        ),
        (  # predicates are ORed
            [
                {"labelSelector": {"matchLabels": {"cloud": "Amazon"}}},
                claim_in("region", "us-east-1"),
            ],
            [
                cluster("cluster1", labels={"cloud": "Amazon"}),
                cluster("cluster2", claims={"region": "us-east-1"}),
                cluster("cluster3", claims={"region": "us-east-2"}),
            ],
            ["cluster1", "cluster2"],
        ),
        (
            [cel('managedCluster.metadata.labels["region"] == "us-east-1"')],
            [
                cluster("cluster1", labels={"region": "us-east-1"}),
                cluster("cluster2", labels={"region": "us-west-1"}),
            ],
            ["cluster1"],
        ),
        (
            [
                cel(
                    'managedCluster.status.clusterClaims.exists(c, c.name == "cloud" && c.value == "Amazon")'
                )
            ],
            [
                cluster("cluster1", claims={"cloud": "Amazon"}),
                cluster("cluster2", claims={"cloud": "Google"}),
            ],
            ["cluster1"],
        ),
        (
            [
                cel(
                    "managedCluster.scores(\"test-addon\").filter(s, s.name == 'test-score').all(e, e.value > 80)"
                )
            ],
            [cluster("cluster1"), cluster("cluster2")],
            ["cluster1"],
        ),
        (
            [
                cel(
                    'managedCluster.metadata.labels["env"] == "prod"',
                    "managedCluster.scores(\"test-addon\").filter(s, s.name == 'test-score').all(e, e.value > 80)",
                )
            ],
            [
                cluster("cluster1", labels={"env": "prod"}),
                cluster("cluster2", labels={"env": "prod"}),
            ],
            ["cluster1"],
        ),
        (
            [
                {
                    "labelSelector": {"matchLabels": {"env": "prod"}},
                    **cel(
                        'managedCluster.status.clusterClaims.exists(c, c.name == "cloud" && c.value == "Amazon")'
                    ),
                }
            ],
            [
                cluster("cluster1", labels={"env": "prod"}, claims={"cloud": "Amazon"}),
                cluster("cluster2", labels={"env": "prod"}, claims={"cloud": "Azure"}),
            ],
            ["cluster1"],
        ),
        ([cel()], [cluster("cluster1")], ["cluster1"]),
        (  # semver, as cel_test.go
            [cel('semver(managedCluster.metadata.labels["version"]).isLessThan(semver("1.31.0"))')],
            [
                cluster("old", labels={"version": "1.30.0"}),
                cluster("new", labels={"version": "1.31.1"}),
            ],
            ["old"],
        ),
        (  # a run-time error (missing key, a bad version) is no match, not misconfiguration
            [cel('semver(managedCluster.metadata.labels["version"]).major() == 1')],
            [
                cluster("a", labels={"version": "1.2.3"}),
                cluster("b"),
                cluster("c", labels={"version": "x"}),
            ],
            ["a"],
        ),
        ([cel('"{\\"a\\": 1}".parseJSON().a == 1')], [cluster("a")], ["a"]),
        ([cel("1")], [cluster("a")], []),  # not a bool: no match
    ],
)
def test_predicates(predicates: list[Any], clusters: list[Any], expected: list[str]) -> None:
    lookup = lambda c, n: SCORES.get((c, n))  # noqa: E731
    assert names(filter_predicates(placement(*predicates), clusters, scores=lookup)) == expected


def test_no_predicates_or_no_clusters_pass_everything() -> None:
    clusters = [cluster("a"), cluster("b")]
    assert names(filter_predicates(placement(), clusters)) == ["a", "b"]
    assert filter_predicates(placement(cel("invalid.expression")), []) == []


def test_scores_without_a_lookup_or_resource_do_not_match() -> None:
    expression = cel('managedCluster.scores("nope").size() == 0')
    assert filter_predicates(placement(expression), [cluster("a")]) == []
    assert filter_predicates(placement(expression), [cluster("a")], scores=lambda c, n: None) == []
    assert names(
        filter_predicates(placement(expression), [cluster("a")], scores=lambda c, n: [])
    ) == ["a"]


@pytest.mark.parametrize(
    ("predicate", "message"),
    [
        (
            cel("invalid.expression"),
            "Predicate:compilation failed: ERROR: <input>:1:1: undeclared reference to 'invalid'"
            " (in container '')\n | invalid.expression\n | ^",
        ),
        (
            {"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Bad"}]}},
            'Predicate:"Bad" is not a valid label selector operator',
        ),
    ],
)
def test_misconfigured_predicates(predicate: dict[str, Any], message: str) -> None:
    with pytest.raises(Misconfigured) as caught:
        filter_predicates(placement(predicate), [cluster("a")])
    assert str(caught.value) == message
    result = filter_clusters(placement(predicate), [cluster("a")], decided=frozenset(), now=NOW)
    assert (result.passed, result.misconfigured, result.requeue_after) == ([], message, None)


# -- taints and tolerations ------------------------------------------------------------


def taint(key: str, effect: str, value: str = "", added: datetime | None = None) -> dict[str, Any]:
    t: dict[str, Any] = {"key": key, "effect": effect, "value": value}
    if added is not None:
        t["timeAdded"] = added.strftime("%Y-%m-%dT%H:%M:%SZ")
    return t


def tolerated(
    tolerations: list[Any], *clusters: Any, decided: frozenset[str] = frozenset()
) -> list[str]:
    return names(
        filter_taints(placement(tolerations=tolerations), list(clusters), decided=decided, now=NOW)
    )


def test_taint_effects() -> None:
    clusters = [
        cluster("plain"),
        cluster("noselect", taints=[taint("key1", "NoSelect", "value1")]),
        cluster("prefer", taints=[taint("key2", "PreferNoSelect")]),
        cluster("ifnew", taints=[taint("key3", "NoSelectIfNew")]),
    ]
    assert tolerated([], *clusters) == ["plain", "prefer"]
    assert tolerated([], *clusters, decided=frozenset({"ifnew", "noselect"})) == [
        "plain",
        "prefer",
        "ifnew",
    ]


@pytest.mark.parametrize(
    ("toleration", "passes"),
    [
        ({"key": "key1", "operator": "Equal", "value": "value1"}, True),
        ({"key": "key1", "value": "value1"}, True),  # empty operator is Equal
        ({"key": "key1", "operator": "Equal", "value": "other"}, False),
        ({"key": "key1", "operator": "Exists"}, True),
        ({"key": "key2", "operator": "Exists"}, False),
        ({"operator": "Exists"}, True),  # empty key and Exists: every taint
        ({"key": "key1", "operator": "Exists", "effect": "NoSelect"}, True),
        ({"key": "key1", "operator": "Exists", "effect": "NoSelectIfNew"}, False),
        ({"key": "key1", "operator": "Bogus"}, False),
    ],
)
def test_toleration_matching(toleration: dict[str, Any], passes: bool) -> None:
    tainted = cluster("c", taints=[taint("key1", "NoSelect", "value1")])
    assert tolerated([toleration], tainted) == (["c"] if passes else [])


def test_every_taint_needs_tolerating() -> None:
    tainted = cluster("c", taints=[taint("a", "NoSelect"), taint("b", "NoSelect")])
    assert tolerated([{"key": "a", "operator": "Exists"}], tainted) == []
    assert tolerated(
        [{"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Exists"}], tainted
    ) == ["c"]


@pytest.mark.parametrize(
    ("toleration", "message"),
    [
        ({"operator": "Equal"}, "TaintToleration:If the key is empty, operator must be Exists."),
        ({}, "TaintToleration:If the key is empty, operator must be Exists."),
        ({"key": "a", "operator": "Exists", "value": "v"},
         "TaintToleration:If the operator is Exists, the value should be empty."),
    ],
)  # fmt: skip
def test_invalid_tolerations_misconfigure(toleration: dict[str, Any], message: str) -> None:
    result = filter_clusters(
        placement(tolerations=[toleration]), [cluster("a")], decided=frozenset(), now=NOW
    )
    assert (result.passed, result.misconfigured) == ([], message)
    # checked only when some cluster is left to filter, as upstream
    empty = filter_clusters(placement(tolerations=[toleration]), [], decided=frozenset(), now=NOW)
    assert empty.misconfigured is None


@pytest.mark.parametrize(
    ("added_ago", "passes", "requeue"),
    [
        (timedelta(seconds=10), True, 20.0),  # before expiry: requeue at expiry
        (timedelta(seconds=30), False, None),  # at expiry: no longer tolerated
        (timedelta(seconds=40), False, None),  # after
    ],
)
def test_toleration_seconds(added_ago: timedelta, passes: bool, requeue: float | None) -> None:
    tainted = cluster("c", taints=[taint("k", "NoSelect", added=NOW - added_ago)])
    p = placement(tolerations=[{"key": "k", "operator": "Exists", "tolerationSeconds": 30}])
    result = filter_clusters(p, [tainted], decided=frozenset({"c"}), now=NOW)
    assert (names(result.passed), result.requeue_after) == ((["c"] if passes else []), requeue)


def test_requeue_is_the_earliest_expiry_among_decided_clusters_only() -> None:
    p = placement(tolerations=[{"key": "k", "operator": "Exists", "tolerationSeconds": 60}])
    soon = cluster("soon", taints=[taint("k", "NoSelect", added=NOW - timedelta(seconds=50))])
    later = cluster("later", taints=[taint("k", "NoSelect", added=NOW - timedelta(seconds=10))])
    result = filter_clusters(p, [soon, later], decided=frozenset({"later"}), now=NOW)
    assert (names(result.passed), result.requeue_after) == (["soon", "later"], 50.0)
    result = filter_clusters(p, [soon, later], decided=frozenset({"soon", "later"}), now=NOW)
    assert result.requeue_after == 10.0


def test_a_taint_without_time_added_has_outlived_any_toleration_seconds() -> None:
    tainted = cluster("c", taints=[taint("k", "NoSelect")])
    p = [{"key": "k", "operator": "Exists", "tolerationSeconds": 10**9}]
    assert tolerated(p, tainted) == []
    # an expired toleration gives way to a later one that still holds
    assert tolerated([*p, {"key": "k", "operator": "Exists"}], tainted) == ["c"]


def test_predicates_then_taints() -> None:
    clusters = [
        cluster("a", labels={"env": "prod"}),
        cluster("b", labels={"env": "prod"}, taints=[taint("k", "NoSelect")]),
        cluster("c", labels={"env": "dev"}),
    ]
    p = placement({"labelSelector": {"matchLabels": {"env": "prod"}}})
    result = filter_clusters(p, clusters, decided=frozenset(), now=NOW)
    assert (names(result.passed), result.misconfigured, result.requeue_after) == (["a"], None, None)


def test_a_claim_without_name_or_value_reads_as_empty() -> None:
    # The CRD requires neither field; Go reads a missing one as "".
    odd = cluster("odd")
    odd["status"]["clusterClaims"] = [{"name": "region"}, {"value": "orphan"}]
    exists = {"key": "region", "operator": "Exists"}
    empty = {"key": "region", "operator": "In", "values": [""]}
    for expression in (exists, empty):
        selector = {"claimSelector": {"matchExpressions": [expression]}}
        assert names(filter_predicates(placement(selector), [odd])) == ["odd"]


def test_parse_json_numbers_are_doubles() -> None:
    # encoding/json decodes numbers as float64, so cel-go sees doubles.
    doubles = cel("type('{\"n\": 1}'.parseJSON().n) == double", "'{\"n\": 1}'.parseJSON().n == 1.0")
    assert names(filter_predicates(placement(doubles), [cluster("a")])) == ["a"]


def test_a_cluster_is_converted_for_cel_once_per_resource_version() -> None:
    served = cluster("a", labels={"env": "prod"})
    served["metadata"].update(uid="uid-a", resourceVersion="7")
    first = cel_cluster(served)
    assert cel_cluster(served) is first
    changed = {**served, "metadata": {**served["metadata"], "resourceVersion": "8"}}
    changed["metadata"]["labels"] = {"env": "dev"}
    assert cel_cluster(changed) is not first
    expression = cel('managedCluster.metadata.labels["env"] == "dev"')
    assert names(filter_predicates(placement(expression), [served, changed])) == ["a"]
    assert filter_predicates(placement(expression), [served]) == []


def test_past_the_deadline_no_cel_expression_matches() -> None:
    expression = cel('managedCluster.metadata.name == "a"')
    past = time.monotonic() - 1
    assert filter_predicates(placement(expression), [cluster("a")], deadline=past) == []
    assert names(filter_predicates(placement({}), [cluster("a")], deadline=past)) == ["a"]
