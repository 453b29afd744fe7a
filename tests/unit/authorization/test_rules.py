"""Rule matching (``RuleAllows``) and covering (``validation.Covers``), dimension by dimension."""

from __future__ import annotations

import pytest

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.authorization.attributes import Attributes
from pyocm.apiserver.authorization.rules import (
    PolicyRule,
    breakdown,
    parse_rules,
    rule_covers,
    uncovered,
)
from pyocm.kube.sharing import SharedValues

BOB = UserInfo(name="bob")
CLUSTER_GROUP = "cluster.open-cluster-management.io"


def request(
    verb: str = "get",
    *,
    group: str = CLUSTER_GROUP,
    resource: str = "managedclusters",
    subresource: str = "",
    name: str = "",
) -> Attributes:
    return Attributes(
        user=BOB, verb=verb, api_group=group, resource=resource, subresource=subresource, name=name
    )


def rule(**fields: list[str]) -> PolicyRule:
    return PolicyRule.from_dict(fields)


BASE = {"verbs": ["get"], "apiGroups": [CLUSTER_GROUP], "resources": ["managedclusters"]}


@pytest.mark.parametrize(
    ("fields", "attrs", "allowed"),
    [
        pytest.param(BASE, request(), True, id="exact"),
        pytest.param(BASE, request("list"), False, id="other-verb"),
        pytest.param({**BASE, "verbs": ["*"]}, request("delete"), True, id="verb-star"),
        pytest.param({**BASE, "verbs": ["list", "get"]}, request("get"), True, id="verb-in-list"),
        pytest.param(
            BASE, request(group="work.open-cluster-management.io"), False, id="other-group"
        ),
        pytest.param({**BASE, "apiGroups": ["*"]}, request(group="apps"), True, id="group-star"),
        pytest.param({**BASE, "apiGroups": [""]}, request(group=""), True, id="core-group"),
        pytest.param(
            {**BASE, "apiGroups": [""]}, request(group="apps"), False, id="core-is-not-any"
        ),
        pytest.param(BASE, request(group=""), False, id="named-group-not-core"),
        pytest.param(BASE, request(resource="manifestworks"), False, id="other-resource"),
        pytest.param(
            {**BASE, "resources": ["*"]}, request(resource="anything"), True, id="resource-star"
        ),
        pytest.param(
            {**BASE, "resources": ["*"]},
            request(resource="managedclusters", subresource="status"),
            True,
            id="resource-star-covers-subresources",
        ),
        pytest.param(
            BASE, request(subresource="status"), False, id="resource-does-not-grant-subresource"
        ),
        pytest.param(
            {**BASE, "resources": ["managedclusters/status"]},
            request(subresource="status"),
            True,
            id="exact-subresource",
        ),
        pytest.param(
            {**BASE, "resources": ["managedclusters/status"]},
            request(),
            False,
            id="subresource-does-not-grant-resource",
        ),
        pytest.param(
            {**BASE, "resources": ["*/status"]},
            request(resource="manifestworks", subresource="status"),
            True,
            id="star-slash-subresource",
        ),
        pytest.param(
            {**BASE, "resources": ["*/status"]},
            request(subresource="approval"),
            False,
            id="star-slash-other-subresource",
        ),
        pytest.param(
            {**BASE, "resources": ["*/status"]}, request(), False, id="star-slash-not-the-resource"
        ),
        pytest.param(
            {**BASE, "resources": ["*/status"]},
            request(resource="*/status"),
            True,
            id="literal-match",
        ),
        pytest.param({**BASE, "resourceNames": ["c1"]}, request(name="c1"), True, id="name-listed"),
        pytest.param(
            {**BASE, "resourceNames": ["c1"]}, request(name="c2"), False, id="name-not-listed"
        ),
        pytest.param(
            {**BASE, "resourceNames": ["c1"]},
            request("list"),
            False,
            id="no-name-never-matches-names",
        ),
        pytest.param(
            {**BASE, "resourceNames": ["c1"], "verbs": ["list"]},
            request("list", name="c1"),
            True,
            id="list-pinned-name",
        ),
        pytest.param(BASE, request(name="any"), True, id="no-names-any-name"),
        pytest.param(
            {"verbs": ["get"], "nonResourceURLs": ["*"]},
            request(),
            False,
            id="url-rule-no-resources",
        ),
    ],
)
def test_resource_rule_matching(
    fields: dict[str, list[str]], attrs: Attributes, allowed: bool
) -> None:
    assert rule(**fields).allows(attrs) is allowed


def path(verb: str, url: str) -> Attributes:
    return Attributes.for_path(user=BOB, verb=verb, path=url)


@pytest.mark.parametrize(
    ("urls", "attrs", "allowed"),
    [
        pytest.param(["/healthz"], path("get", "/healthz"), True, id="exact"),
        pytest.param(["/healthz"], path("get", "/healthz/etcd"), False, id="exact-is-not-prefix"),
        pytest.param(["/healthz"], path("post", "/healthz"), False, id="verb"),
        pytest.param(["*"], path("get", "/anything/at/all"), True, id="star"),
        pytest.param(
            ["/apis/*"], path("get", "/apis/cluster.open-cluster-management.io"), True, id="prefix"
        ),
        pytest.param(["/apis/*"], path("get", "/apis/"), True, id="prefix-itself"),
        pytest.param(["/apis/*"], path("get", "/apis"), False, id="prefix-needs-slash"),
        pytest.param(["/api*"], path("get", "/apis"), True, id="prefix-without-slash"),
        pytest.param(["/version", "/version/"], path("get", "/version/"), True, id="one-of-many"),
    ],
)
def test_non_resource_matching(urls: list[str], attrs: Attributes, allowed: bool) -> None:
    assert rule(verbs=["get"], nonResourceURLs=urls).allows(attrs) is allowed


def test_resource_rule_never_matches_a_path() -> None:
    assert not rule(verbs=["*"], apiGroups=["*"], resources=["*"]).allows(path("get", "/healthz"))


def test_from_dict_and_to_dict_drop_empty_lists_but_keep_verbs() -> None:
    parsed = PolicyRule.from_dict(
        {"verbs": [], "apiGroups": None, "resources": ["pods"], "resourceNames": []}
    )
    assert parsed == PolicyRule(resources=("pods",))
    assert parsed.to_dict() == {"verbs": [], "resources": ["pods"]}
    assert parse_rules(None) == ()


def test_rules_with_the_same_lists_share_them_but_not_their_names() -> None:
    # Ten thousand per-cluster ClusterRoles differ only in resourceNames: their verbs,
    # groups and resources (and the sets matching uses) are held once.
    raw = {
        "verbs": ["get", "update"],
        "apiGroups": [CLUSTER_GROUP],
        "resources": ["managedclusters"],
    }
    one = PolicyRule.from_dict({**raw, "resourceNames": ["c1"]})
    two = PolicyRule.from_dict({**raw, "resourceNames": ["c2"]})
    assert one.verbs is two.verbs and one.resources is two.resources
    assert one._verbs is two._verbs and one._groups is two._groups
    assert one.allows(request("update", name="c1")) and not one.allows(request("update", name="c2"))
    assert two.allows(request("update", name="c2"))


def test_sharing_is_bounded_and_changes_no_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    from pyocm.apiserver.authorization import rules

    shared = SharedValues(lambda values: (values, frozenset(values)), limit=3)
    monkeypatch.setattr(rules, "_SHARED", shared)
    made = [
        PolicyRule(verbs=(f"verb{i}",), api_groups=("",), resources=("pods",)) for i in range(10)
    ]
    assert len(rules._SHARED) <= 3
    for i, rule in enumerate(made):
        assert rule.allows(request(f"verb{i}", group="", resource="pods"))
        assert not rule.allows(request(f"verb{i + 1}", group="", resource="pods"))


def test_breakdown_splits_into_single_tuples() -> None:
    pieces = list(
        breakdown(
            rule(
                verbs=["get", "list"],
                apiGroups=[""],
                resources=["pods", "secrets"],
                resourceNames=["a"],
            )
        )
    )
    assert [p.to_dict() for p in pieces] == [
        {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]},
        {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]},
        {"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]},
        {"verbs": ["list"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]},
    ]
    urls = list(breakdown(rule(verbs=["get", "post"], nonResourceURLs=["/a"])))
    assert [p.to_dict() for p in urls] == [
        {"verbs": ["get"], "nonResourceURLs": ["/a"]},
        {"verbs": ["post"], "nonResourceURLs": ["/a"]},
    ]


def piece(verb: str, resource: str, *, group: str = "", name: str = "") -> PolicyRule:
    return PolicyRule(
        verbs=(verb,),
        api_groups=(group,),
        resources=(resource,),
        resource_names=(name,) if name else (),
    )


@pytest.mark.parametrize(
    ("owner", "wanted", "covered"),
    [
        pytest.param(
            rule(verbs=["get"], apiGroups=[""], resources=["pods"]),
            piece("get", "pods"),
            True,
            id="exact",
        ),
        pytest.param(
            rule(verbs=["get"], apiGroups=[""], resources=["pods"]),
            piece("delete", "pods"),
            False,
            id="verb",
        ),
        pytest.param(
            rule(verbs=["*"], apiGroups=[""], resources=["pods"]),
            piece("delete", "pods"),
            True,
            id="verb-star",
        ),
        pytest.param(
            rule(verbs=["get"], apiGroups=["*"], resources=["pods"]),
            piece("get", "pods", group="apps"),
            True,
            id="group-star",
        ),
        pytest.param(
            rule(verbs=["get"], apiGroups=[""], resources=["pods"]),
            piece("get", "pods", group="apps"),
            False,
            id="group",
        ),
        pytest.param(
            rule(verbs=["get"], apiGroups=[""], resources=["*"]),
            piece("get", "pods/log"),
            True,
            id="resource-star",
        ),
        pytest.param(
            rule(verbs=["get"], apiGroups=[""], resources=["*/log"]),
            piece("get", "pods/log"),
            True,
            id="star-subresource",
        ),
        pytest.param(
            rule(verbs=["get"], apiGroups=[""], resources=["pods"]),
            piece("get", "pods/log"),
            False,
            id="resource-not-subresource",
        ),
        pytest.param(
            rule(verbs=["get"], apiGroups=[""], resources=["*/log"]),
            piece("get", "pods"),
            False,
            id="star-subresource-not-resource",
        ),
        pytest.param(
            rule(verbs=["get"], apiGroups=[""], resources=["pods"]),
            piece("get", "pods", name="a"),
            True,
            id="any-name-covers-name",
        ),
        pytest.param(
            rule(verbs=["get"], apiGroups=[""], resources=["pods"], resourceNames=["a"]),
            piece("get", "pods"),
            False,
            id="named-does-not-cover-unnamed",
        ),
        pytest.param(
            rule(verbs=["get"], apiGroups=[""], resources=["pods"], resourceNames=["a", "b"]),
            piece("get", "pods", name="b"),
            True,
            id="named-covers-same-name",
        ),
        pytest.param(
            rule(verbs=["get"], apiGroups=[""], resources=["pods"], resourceNames=["a"]),
            piece("get", "pods", name="c"),
            False,
            id="named-other-name",
        ),
        pytest.param(
            rule(verbs=["get"], nonResourceURLs=["/apis/*"]),
            rule(verbs=["get"], nonResourceURLs=["/apis/x"]),
            True,
            id="url-prefix",
        ),
        pytest.param(
            rule(verbs=["get"], nonResourceURLs=["/apis"]),
            rule(verbs=["get"], nonResourceURLs=["/apis/x"]),
            False,
            id="url-exact",
        ),
        pytest.param(
            rule(verbs=["get"], nonResourceURLs=["*"]),
            piece("get", "pods"),
            False,
            id="url-rule-does-not-cover-resources",
        ),
        pytest.param(
            rule(verbs=["get"], apiGroups=["*"], resources=["*"]),
            rule(verbs=["get"], nonResourceURLs=["/x"]),
            False,
            id="resource-rule-does-not-cover-urls",
        ),
    ],
)
def test_rule_covers(owner: PolicyRule, wanted: PolicyRule, covered: bool) -> None:
    assert rule_covers(owner, wanted) is covered


def test_uncovered_lists_only_the_missing_pieces() -> None:
    held = [rule(verbs=["get", "list"], apiGroups=[""], resources=["configmaps"])]
    wanted = [rule(verbs=["get", "delete"], apiGroups=[""], resources=["configmaps", "secrets"])]
    assert uncovered(held, wanted) == [
        piece("delete", "configmaps"),
        piece("get", "secrets"),
        piece("delete", "secrets"),
    ]
    assert uncovered(held, [rule(verbs=["list"], apiGroups=[""], resources=["configmaps"])]) == []
    assert uncovered([], []) == []
