"""Issue 23's "no wider than upstream's": every right the rendered manifests give pyocm's
ServiceAccounts (through their bindings, aggregated ClusterRoles included) is one upstream
gives the identities pyocm stands for (tests/deploy/upstream_rbac.py), or one of pyocm's
additions listed below with its reason. test_deployed.py shows the rights are enough; this
shows they are not more. The additions must each be granted and beyond upstream, so a stale
entry cannot later hide a widening."""

from __future__ import annotations

import copy
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.deploy import upstream_rbac as upstream
from tests.deploy.manifests import DEPLOY, Obj, klusterlet_copy, render
from tests.deploy.rbac import ANY, BoundRole, Grant, Holdings, covers, expand, held_by, uncovered
from tests.deploy.upstream_rbac import rule

HUB_NAMESPACE = "open-cluster-management-hub"


@dataclass(frozen=True)
class Addition:
    """Rights pyocm grants beyond upstream's, and why (the manifests' "pyocm:" comments)."""

    reason: str
    rules: tuple[upstream.Rule, ...]
    scope: str = ANY

    def grants(self) -> set[Grant]:
        return set(expand(self.rules, scope=self.scope))


WEBHOOK_CONFIGURATIONS = ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]
CERT_CONTROLLER = (
    "deploy/hub/controller-rbac.yaml: `pyocm controller --webhook-service` keeps the webhooks' "
    "serving certificate and puts its CA into the webhook configurations and the add-on CRDs' "
    "conversion, which upstream's cluster-manager operator does with its own role"
)
CONTROLLER_ADDITIONS = (
    Addition(
        CERT_CONTROLLER,
        (
            rule(["admissionregistration.k8s.io"], WEBHOOK_CONFIGURATIONS, upstream.READ),
            rule(
                ["admissionregistration.k8s.io"],
                ["validatingwebhookconfigurations"],
                ["update", "patch"],
                [
                    "managedclustervalidators.admission.cluster.open-cluster-management.io",
                    "managedclustersetbindingvalidators.admission.cluster.open-cluster-management.io",
                    "managedclustersetvalidators.admission.cluster.open-cluster-management.io",
                    "manifestworkvalidators.admission.work.open-cluster-management.io",
                ],
            ),
            rule(
                ["admissionregistration.k8s.io"],
                ["mutatingwebhookconfigurations"],
                ["update", "patch"],
                ["managedclustermutators.admission.cluster.open-cluster-management.io"],
            ),
            rule(["apiextensions.k8s.io"], ["customresourcedefinitions"], upstream.READ),
            rule(
                ["apiextensions.k8s.io"],
                ["customresourcedefinitions"],
                ["update", "patch"],
                [
                    "clustermanagementaddons.addon.open-cluster-management.io",
                    "managedclusteraddons.addon.open-cluster-management.io",
                ],
            ),
        ),
    ),
    Addition(
        "deploy/hub/controller-rbac.yaml: the webhooks' signing CA and serving certificate "
        "(Secrets signer-secret and cluster-manager-webhook-serving-cert), only in the hub's "
        "namespace; upstream's operator keeps them with its own role",
        (rule([upstream.CORE], ["secrets"], upstream.CRUD),),
        scope=HUB_NAMESPACE,
    ),
)
WEBHOOK_ADDITIONS = (
    Addition(
        "deploy/hub/webhook-rbac.yaml: a ManagedClusterSetBinding may not bind a set into a "
        "managed cluster's namespace, so pyocm's binding rule reads the ManagedCluster",
        (rule([upstream.CLUSTER], ["managedclusters"], ["get"]),),
    ),
)
AGENT_ADDITIONS = (
    Addition(
        "deploy/klusterlet/rbac.yaml: the agent creates the ClusterClaim id.k8s.io (the "
        "cluster's kube-system uid) once, so the hub can refuse another cluster registering "
        "under this cluster's name; create only, which RBAC cannot narrow by name",
        (rule([upstream.CLUSTER], ["clusterclaims"], ["create"]),),
    ),
)


@dataclass(frozen=True)
class Identity:
    account: str
    namespace: str
    side: str
    upstream: tuple[upstream.Role | upstream.BuiltIn, ...]
    additions: tuple[Addition, ...]

    def upstream_grants(self) -> set[Grant]:
        return {
            grant
            for role in self.upstream
            if isinstance(role, upstream.Role)
            for grant in expand(role.rules, scope=role.namespace or ANY)
        }

    def upstream_built_ins(self) -> set[BoundRole]:
        return {
            BoundRole("ClusterRole", role.name, role.namespace or ANY)
            for role in self.upstream
            if isinstance(role, upstream.BuiltIn)
        }

    def added_grants(self) -> set[Grant]:
        return {grant for addition in self.additions for grant in addition.grants()}

    def held(self, objects: list[Obj]) -> Holdings:
        return held_by(objects, account=self.account, namespace=self.namespace)


CONTROLLER = Identity(
    "cluster-manager-controller-sa", HUB_NAMESPACE, "hub", upstream.CONTROLLER, CONTROLLER_ADDITIONS
)
WEBHOOK = Identity(
    "cluster-manager-webhook-sa", HUB_NAMESPACE, "hub", upstream.WEBHOOK, WEBHOOK_ADDITIONS
)
AGENT = Identity(
    "klusterlet-work-sa", upstream.AGENT_NAMESPACE, "klusterlet", upstream.AGENT, AGENT_ADDITIONS
)
IDENTITIES = {i.account: i for i in (CONTROLLER, WEBHOOK, AGENT)}


def widenings(identity: Identity, objects: list[Obj]) -> list[str]:
    """What ``identity`` holds in ``objects`` beyond upstream's roles and pyocm's additions."""
    held = identity.held(objects)
    sources = ", ".join(role.source for role in identity.upstream)
    found = [
        f"{identity.account} may {grant}: no upstream role grants it ({sources}) "
        "and no listed pyocm addition explains it"
        for grant in uncovered(held.grants, identity.upstream_grants() | identity.added_grants())
    ]
    found += [
        f"{identity.account} is bound to {role.kind} {role.name} "
        f"({'cluster-wide' if role.scope == ANY else role.scope}), which upstream does not bind"
        for role in sorted(held.elsewhere - identity.upstream_built_ins())
    ]
    return found


@pytest.fixture(scope="module")
def objects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Obj]]:
    klusterlet = klusterlet_copy(tmp_path_factory.mktemp("klusterlet"), bootstrap="kubeconfig")
    return {"hub": render(DEPLOY / "hub"), "klusterlet": render(klusterlet)}


@pytest.mark.parametrize("account", IDENTITIES)
def test_the_manifests_grant_no_more_than_upstream(
    account: str, objects: dict[str, list[Obj]]
) -> None:
    identity = IDENTITIES[account]
    assert widenings(identity, objects[identity.side]) == []


@pytest.mark.parametrize("account", IDENTITIES)
def test_every_addition_is_granted_and_beyond_upstream(
    account: str, objects: dict[str, list[Obj]]
) -> None:
    """An entry the manifests no longer grant, or that upstream now covers, would only make
    room for a later widening to pass unnoticed."""
    identity = IDENTITIES[account]
    held = identity.held(objects[identity.side]).grants
    added = identity.added_grants()
    assert sorted(map(str, uncovered(added, held))) == [], "listed but not granted"
    assert sorted(str(g) for g in added if not uncovered([g], identity.upstream_grants())) == [], (
        "listed but upstream grants it"
    )


def test_the_bindings_are_followed(objects: dict[str, list[Obj]]) -> None:
    """What the checks above rest on: each identity's bindings are found, an aggregated
    ClusterRole brings in the roles it selects, a RoleBinding limits to its namespace, and a
    role the manifests do not define (Kubernetes' admin) is reported rather than skipped."""
    agent = AGENT.held(objects["klusterlet"])
    assert Grant("apiextensions.k8s.io", "customresourcedefinitions", "create") in agent.grants
    assert Grant("", "secrets", "get", ANY, upstream.AGENT_NAMESPACE) in agent.grants
    assert agent.elsewhere == {BoundRole("ClusterRole", "admin")}
    controller = CONTROLLER.held(objects["hub"])
    assert Grant("", "secrets", "delete", ANY, HUB_NAMESPACE) in controller.grants
    assert Grant("", "secrets", "delete") not in controller.grants
    assert WEBHOOK.held(objects["hub"]).grants == set(
        expand(
            next(o for o in objects["hub"] if o["metadata"]["name"].endswith(":webhook"))["rules"],
            scope=ANY,
        )
    )


SECRETS_LIST = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["list"]}


def test_a_wider_cluster_role_is_named(objects: dict[str, list[Obj]]) -> None:
    changed = copy.deepcopy(objects["hub"])
    role = next(
        o
        for o in changed
        if o["kind"] == "ClusterRole"
        and o["metadata"]["name"] == "open-cluster-management:cluster-manager:controller"
    )
    role["rules"].append(SECRETS_LIST)
    assert widenings(CONTROLLER, changed) == [
        "cluster-manager-controller-sa may list secrets cluster-wide: no upstream role grants "
        "it (manifests/cluster-manager/hub/registration/clusterrole.yaml, "
        "manifests/cluster-manager/hub/placement/clusterrole.yaml, "
        "manifests/cluster-manager/hub/work/clusterrole.yaml, "
        "manifests/cluster-manager/hub/addon-manager/clusterrole.yaml, "
        "manifests/cluster-manager/hub/work/executor-admin-clusterrole.yaml) "
        "and no listed pyocm addition explains it"
    ]


def test_a_widening_in_a_rendered_copy_is_named(tmp_path: Path) -> None:
    """Through kustomize, as shipped files would be: a rule added to the YAML."""
    hub = tmp_path / "hub"
    shutil.copytree(DEPLOY / "hub", hub)
    rbac_file = hub / "webhook-rbac.yaml"
    text = rbac_file.read_text(encoding="utf-8")
    widened = '- apiGroups: [""]\n  resources: ["secrets"]\n  verbs: ["list", "get"]\n'
    rbac_file.write_text(text.replace("rules:\n", f"rules:\n{widened}", 1), encoding="utf-8")
    found = widenings(WEBHOOK, render(hub))
    assert [line.split(":")[0] for line in found] == [
        "cluster-manager-webhook-sa may get secrets cluster-wide",
        "cluster-manager-webhook-sa may list secrets cluster-wide",
    ]


def _bind(objects: list[Obj], *, kind: str, role_kind: str, role: str, ns: str | None) -> list[Obj]:
    meta: Obj = {"name": "extra"} | ({"namespace": ns} if ns else {})
    subject = {"kind": "ServiceAccount", "name": "klusterlet-work-sa"}
    subject["namespace"] = upstream.AGENT_NAMESPACE
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": [subject],
    }
    return [*copy.deepcopy(objects), binding]


def test_every_path_to_a_right_is_checked(objects: dict[str, list[Obj]]) -> None:
    """A new binding, a ClusterRole the aggregate picks up by its label, and a built-in role."""
    agent = objects["klusterlet"]
    cluster_admin = _bind(
        agent, kind="ClusterRoleBinding", role_kind="ClusterRole", role="cluster-admin", ns=None
    )
    assert widenings(AGENT, cluster_admin) == [
        "klusterlet-work-sa is bound to ClusterRole cluster-admin (cluster-wide), "
        "which upstream does not bind"
    ]
    # upstream binds admin cluster-wide only; a RoleBinding to it elsewhere is a different grant
    admin_in_kube_system = _bind(
        agent, kind="RoleBinding", role_kind="ClusterRole", role="admin", ns="kube-system"
    )
    assert widenings(AGENT, admin_in_kube_system) == [
        "klusterlet-work-sa is bound to ClusterRole admin (kube-system), "
        "which upstream does not bind"
    ]
    labelled = copy.deepcopy(agent)
    labelled.append(
        {
            "kind": "ClusterRole",
            "metadata": {
                "name": "more",
                "labels": {"open-cluster-management.io/aggregate-to-work": "true"},
            },
            "rules": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"]}],
        }
    )
    assert [w.split(":")[0] for w in widenings(AGENT, labelled)] == [
        "klusterlet-work-sa may * deployments.apps cluster-wide"
    ]


def test_a_namespaced_role_widened_to_the_cluster_is_named(
    objects: dict[str, list[Obj]],
) -> None:
    """The agent's namespace Role made a ClusterRole: no wider while a RoleBinding binds it
    in the agent's namespace, its rights everywhere once a ClusterRoleBinding does."""
    agent = copy.deepcopy(objects["klusterlet"])
    name = "open-cluster-management:management:klusterlet-registration:agent"
    (role,) = [o for o in agent if o["kind"] == "Role" and o["metadata"]["name"] == name]
    (binding,) = [o for o in agent if o["kind"] == "RoleBinding" and o["roleRef"]["name"] == name]
    role["kind"] = binding["roleRef"]["kind"] = "ClusterRole"
    del role["metadata"]["namespace"]
    assert widenings(AGENT, agent) == []
    binding["kind"] = "ClusterRoleBinding"
    found = [w.split(":")[0] for w in widenings(AGENT, agent)]
    assert "klusterlet-work-sa may create configmaps cluster-wide" in found
    assert "klusterlet-work-sa may get pods cluster-wide" in found
    assert "klusterlet-work-sa may get secrets cluster-wide" not in found, "upstream grants it"


@pytest.mark.parametrize(
    ("wide", "narrow", "covered"),
    [
        (Grant("", "secrets", "get"), Grant("", "secrets", "get", "a", "ns"), True),
        (Grant("", "secrets", "get", ANY, "ns"), Grant("", "secrets", "get"), False),
        (Grant("", "secrets", "get", "a"), Grant("", "secrets", "get"), False),
        (Grant("", "secrets", "get", "a"), Grant("", "secrets", "get", "b"), False),
        (Grant("*", "*", "*"), Grant("apps", "deployments", "patch"), True),
        (Grant("", "secrets", "get"), Grant("", "secrets", "*"), False),
        (Grant("x", "*/status", "update"), Grant("x", "things/status", "update"), True),
        (Grant("x", "*/status", "update"), Grant("x", "things", "update"), False),
        (Grant("", "pods", "get"), Grant("", "pods/log", "get"), False),
    ],
)
def test_covers(wide: Grant, narrow: Grant, covered: bool) -> None:
    assert covers(wide, narrow) is covered
