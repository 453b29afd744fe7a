"""What an accepted cluster's work agent may do on the hub: upstream's
``open-cluster-management:managedcluster:work`` role, bound in the cluster's namespace
only, decided by the hub's RBAC authorizer as the agent's certificate groups ask."""

from __future__ import annotations

import pytest

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.authorization import authorizer
from pyocm.apiserver.authorization.attributes import Attributes
from pyocm.apiserver.authorization.index import RbacIndex
from pyocm.registration.hub import rbac

WORK = "work.open-cluster-management.io"
#: Upstream's pkg/registration/hub/manifests/rbac/managedcluster-work-clusterrole.yaml.
UPSTREAM_WORK_RULES = [
    {
        "apiGroups": ["", "events.k8s.io"],
        "resources": ["events"],
        "verbs": ["create", "patch", "update"],
    },
    {
        "apiGroups": [WORK],
        "resources": ["manifestworks"],
        "verbs": ["get", "list", "watch", "update", "patch"],
    },
    {"apiGroups": [WORK], "resources": ["manifestworks/status"], "verbs": ["patch", "update"]},
]


def work_role() -> dict[str, object]:
    (role,) = [r for r in rbac.common_roles() if r["metadata"]["name"] == rbac.WORK_ROLE]
    return dict(role)


def test_the_work_role_is_upstreams() -> None:
    role = work_role()
    assert role["rules"] == UPSTREAM_WORK_RULES
    assert role["metadata"] == {
        "name": "open-cluster-management:managedcluster:work",
        "labels": {"open-cluster-management.io/cluster-name": ""},
    }
    binding = rbac.role_binding(
        "cluster1", name=rbac.work_binding_name("cluster1"), role=rbac.WORK_ROLE
    )
    assert binding["metadata"]["name"] == "open-cluster-management:managedcluster:cluster1:work"
    assert binding["metadata"]["namespace"] == "cluster1"
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": rbac.WORK_ROLE,
    }
    assert [s["name"] for s in binding["subjects"]] == [
        "system:open-cluster-management:cluster1",
        "open-cluster-management:cluster1",
    ]


@pytest.fixture
def index() -> RbacIndex:
    """The hub's RBAC with cluster1 accepted: its RoleBindings and the common roles."""
    found = RbacIndex()
    for role in rbac.common_roles():
        found.upsert("ClusterRole", role)
    found.upsert("ClusterRole", rbac.cluster_role("cluster1", accepted=True))
    found.upsert("ClusterRoleBinding", rbac.cluster_role_binding("cluster1"))
    for name, role_name in (
        (rbac.work_binding_name("cluster1"), rbac.WORK_ROLE),
        (rbac.registration_binding_name("cluster1"), rbac.REGISTRATION_ROLE),
    ):
        found.upsert("RoleBinding", rbac.role_binding("cluster1", name=name, role=role_name))
    return found


AGENT = UserInfo(
    name="system:open-cluster-management:cluster1:agent1",
    groups=("system:open-cluster-management:cluster1", "system:authenticated"),
)


def allowed(
    index: RbacIndex, verb: str, resource: str, namespace: str, *, group: str = WORK
) -> bool:
    plural, _, sub = resource.partition("/")
    attrs = Attributes(
        user=AGENT,
        verb=verb,
        api_group=group,
        resource=plural,
        subresource=sub,
        namespace=namespace,
        name="w",
    )
    return authorizer.authorize(index, attrs).allowed


@pytest.mark.parametrize("verb", ["get", "list", "watch", "update", "patch"])
def test_the_agent_reads_and_updates_its_works(index: RbacIndex, verb: str) -> None:
    assert allowed(index, verb, "manifestworks", "cluster1")
    assert not allowed(index, verb, "manifestworks", "cluster2")


@pytest.mark.parametrize("verb", ["patch", "update"])
def test_the_agent_writes_its_works_status(index: RbacIndex, verb: str) -> None:
    assert allowed(index, verb, "manifestworks/status", "cluster1")
    assert not allowed(index, verb, "manifestworks/status", "cluster2")


def test_the_agent_sends_events_in_its_namespace(index: RbacIndex) -> None:
    for group in ("", "events.k8s.io"):
        assert allowed(index, "create", "events", "cluster1", group=group)
        assert not allowed(index, "create", "events", "cluster2", group=group)


@pytest.mark.parametrize(
    ("verb", "resource"),
    [
        ("create", "manifestworks"),
        ("delete", "manifestworks"),
        ("deletecollection", "manifestworks"),
        ("execute-as", "manifestworks"),
        ("get", "manifestworkreplicasets"),
        ("update", "manifestworkreplicasets/status"),
        ("get", "appliedmanifestworks"),
    ],
)
def test_nothing_more(index: RbacIndex, verb: str, resource: str) -> None:
    assert not allowed(index, verb, resource, "cluster1")
