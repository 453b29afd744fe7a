"""The request descriptions and 403 bodies, word for word as kube-apiserver writes them."""

from __future__ import annotations

import pytest

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.authorization.attributes import Attributes, go_quote, go_quote_list

BOB = UserInfo(name="bob", groups=("system:authenticated",))
CLUSTER_GROUP = "cluster.open-cluster-management.io"


@pytest.mark.parametrize(
    ("attrs", "text"),
    [
        pytest.param(
            Attributes(
                user=BOB, verb="get", api_group=CLUSTER_GROUP, resource="managedclusters", name="c1"
            ),
            'User "bob" cannot get resource "managedclusters" in API group'
            ' "cluster.open-cluster-management.io" at the cluster scope',
            id="cluster-scope",
        ),
        pytest.param(
            Attributes(user=BOB, verb="list", resource="configmaps", namespace="ns"),
            'User "bob" cannot list resource "configmaps" in API group "" in the namespace "ns"',
            id="core-namespaced",
        ),
        pytest.param(
            Attributes(
                user=BOB,
                verb="patch",
                api_group=CLUSTER_GROUP,
                resource="managedclusters",
                subresource="status",
            ),
            'User "bob" cannot patch resource "managedclusters/status" in API group'
            ' "cluster.open-cluster-management.io" at the cluster scope',
            id="subresource",
        ),
        pytest.param(
            Attributes.for_path(user=BOB, verb="get", path="/foo"),
            'User "bob" cannot get path "/foo"',
            id="non-resource",
        ),
    ],
)
def test_describe(attrs: Attributes, text: str) -> None:
    assert attrs.describe() == text


def test_forbidden_names_the_object_and_appends_the_reason() -> None:
    attrs = Attributes(
        user=BOB,
        verb="update",
        api_group=CLUSTER_GROUP,
        resource="managedclusters",
        subresource="status",
        name="c1",
    )
    error = attrs.forbidden('RBAC: clusterrole.rbac.authorization.k8s.io "x" not found')
    assert error.code == 403
    assert error.status() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'managedclusters.cluster.open-cluster-management.io "c1" is forbidden: User "bob" cannot update'
        ' resource "managedclusters/status" in API group "cluster.open-cluster-management.io" at the cluster'
        ' scope: RBAC: clusterrole.rbac.authorization.k8s.io "x" not found',
        "reason": "Forbidden",
        "details": {"name": "c1", "group": CLUSTER_GROUP, "kind": "managedclusters"},
        "code": 403,
    }


def test_forbidden_without_name_or_group() -> None:
    error = Attributes(
        user=BOB, verb="list", resource="secrets", namespace="kube-system"
    ).forbidden()
    assert error.message == (
        'secrets is forbidden: User "bob" cannot list resource "secrets" in API group "" in the namespace "kube-system"'
    )
    assert error.details == {"name": "", "kind": "secrets"}


def test_forbidden_path() -> None:
    error = Attributes.for_path(
        user=UserInfo(name="system:anonymous"), verb="get", path="/metrics"
    ).forbidden()
    assert error.message == 'forbidden: User "system:anonymous" cannot get path "/metrics"'
    assert error.reason == "Forbidden"


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        pytest.param("plain:name", '"plain:name"', id="plain"),
        pytest.param('a"b\\c', '"a\\"b\\\\c"', id="quote-and-backslash"),
        pytest.param("tab\tnew\n", '"tab\\tnew\\n"', id="control-escapes"),
        pytest.param("\x01\x7f", '"\\x01\\x7f"', id="hex-escapes"),
        pytest.param("héllo", '"héllo"', id="printable-unicode-kept"),
        pytest.param("\u200b", '"\\u200b"', id="non-printable-unicode"),
    ],
)
def test_go_quote(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted


def test_go_quote_list() -> None:
    assert go_quote_list(("a", "b")) == '["a" "b"]'
    assert go_quote_list(()) == "[]"
