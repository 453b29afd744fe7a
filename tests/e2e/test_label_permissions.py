"""The permission matrix of the ClusterSet Override design (seed 002), through a real
server: who may add, change or remove which ManagedCluster label.

Each row starts a cluster with some labels (written by the admin), grants a subject
``update`` on ManagedClusters plus the row's extra rules, and has the subject patch the
labels. Every row runs for a user, for a member of a group, and for an agent identity
(bound through its cluster's group and allowed to update only its own cluster), so each
grant and each denial is proven for all three kinds of subject.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.support import grant, subject

Obj = dict[str, Any]
GROUP = "cluster.open-cluster-management.io"
SET = "cluster.open-cluster-management.io/clusterset"
REGION = "info.open-cluster-management.io/region"
TEAM = "cluster.open-cluster-management.io/team"
#: How kube-apiserver relays the denials of upstream's webhooks.
VALIDATOR = (
    'admission webhook "managedclustervalidators.admission.cluster.open-cluster-management.io" '
    "denied the request: "
)
BINDING_VALIDATOR = (
    'admission webhook "managedclustersetbindingvalidators.admission.cluster.'
    'open-cluster-management.io" denied the request: '
)


def label(*names: str) -> Obj:
    return {
        "apiGroups": [GROUP],
        "resources": ["managedclusters/label"],
        "resourceNames": list(names),
        "verbs": ["create"],
    }


def join(*sets: str) -> Obj:
    return {
        "apiGroups": [GROUP],
        "resources": ["managedclustersets/join"],
        "resourceNames": list(sets),
        "verbs": ["create"],
    }


@dataclass(frozen=True)
class Row:
    start: dict[str, str]
    change: dict[str, str | None]
    grants: tuple[Obj, ...] = ()
    #: None: allowed; else the words the 403 must contain.
    denied: tuple[str, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


ROWS: dict[str, Row] = {
    "plain label needs only update": Row({}, {"env": "prod"}),
    "reserved label without grant": Row(
        {},
        {REGION: "apac"},
        denied=(
            f'cannot add/change/remove label "{REGION}=apac"',
            "create on managedclusters/label",
            f'"{REGION}:apac", "{REGION}:*" or "*"',
        ),
    ),
    "reserved label, exact grant": Row({}, {REGION: "apac"}, (label(f"{REGION}:apac"),)),
    "reserved label, key grant": Row({}, {REGION: "apac"}, (label(f"{REGION}:*"),)),
    "reserved label, any grant": Row({}, {TEAM: "blue"}, (label("*"),)),
    "grant for another value": Row(
        {}, {REGION: "apac"}, (label(f"{REGION}:emea"),), denied=(f'"{REGION}=apac"',)
    ),
    "grant for another key": Row(
        {}, {TEAM: "blue"}, (label(f"{REGION}:*"),), denied=(f'"{TEAM}=blue"',)
    ),
    "change needs the old value too": Row(
        {REGION: "apac"},
        {REGION: "emea"},
        (label(f"{REGION}:emea"),),
        denied=(f'"{REGION}=apac"',),
    ),
    "change with both values": Row(
        {REGION: "apac"}, {REGION: "emea"}, (label(f"{REGION}:emea", f"{REGION}:apac"),)
    ),
    "removal without grant": Row({REGION: "apac"}, {REGION: None}, denied=(f'"{REGION}=apac"',)),
    "removal with grant": Row({REGION: "apac"}, {REGION: None}, (label(f"{REGION}:apac"),)),
    "untouched reserved label needs nothing": Row({REGION: "apac"}, {"env": "dev"}),
    "clusterset label without either": Row(
        {SET: "default"},
        {SET: "dev"},
        denied=(
            # Upstream asks for the old set first.
            'cannot add/remove a ManagedCluster to/from ManagedClusterSet "default"',
            'create on managedclustersets/join for "default"',
            f'"{SET}:default"',
        ),
    ),
    "clusterset label with join": Row({SET: "default"}, {SET: "dev"}, (join("dev", "default"),)),
    "clusterset label with label grant": Row(
        {SET: "default"}, {SET: "dev"}, (label(f"{SET}:dev", f"{SET}:default"),)
    ),
    "clusterset label, join for one and label for the other": Row(
        {SET: "default"}, {SET: "dev"}, (join("dev"), label(f"{SET}:default"))
    ),
    "clusterset label, leaving needs the old set": Row(
        {SET: "qa"}, {SET: "dev"}, (join("dev"),), denied=('ManagedClusterSet "qa"',)
    ),
}

SUBJECTS = ("user", "group", "agent")


def subject_for(kind: str, unique: str, cluster: str) -> tuple[str, tuple[str, ...], Obj]:
    """The identity (user, groups) and the RBAC subject its grants are bound to."""
    if kind == "user":
        user = f"alice-{unique}"
        return user, (), subject("User", user)
    if kind == "group":
        group = f"team-{unique}"
        return f"bob-{unique}", (group,), subject("Group", group)
    # The identity an agent's certificate carries (upstream's names).
    group = f"system:open-cluster-management:{cluster}"
    user = f"{group}:agent1"
    groups = (group, "system:open-cluster-management:managed-clusters")
    return user, groups, subject("Group", group)


@pytest.mark.parametrize("kind", SUBJECTS)
@pytest.mark.parametrize("row_id", list(ROWS))
async def test_label_permission_matrix(
    hub: HubProcess, api: Api, unique: str, kind: str, row_id: str
) -> None:
    row = ROWS[row_id]
    cluster = f"c-{unique}"
    await api.create(
        ocm.MANAGED_CLUSTER, {"metadata": {"name": cluster, "labels": dict(row.start)}}
    )
    user, groups, who = subject_for(kind, unique, cluster)
    update: Obj = {
        "apiGroups": [GROUP],
        "resources": ["managedclusters"],
        "verbs": ["get", "patch"],
    }
    if kind == "agent":  # the agent's hub role names its own cluster only
        update["resourceNames"] = [cluster]
    await grant(api, f"test:{unique}", who, [update, *row.grants])
    async with Api.from_kubeconfig(hub.identity(user, groups).kubeconfig) as as_subject:
        patch = {"metadata": {"labels": row.change}}
        if row.denied is None:
            patched = await as_subject.patch(ocm.MANAGED_CLUSTER, cluster, patch)
            labels = patched["metadata"].get("labels") or {}
            for key, value in row.change.items():
                assert labels.get(key) == value
            return
        with pytest.raises(ApiError) as caught:
            await as_subject.patch(ocm.MANAGED_CLUSTER, cluster, patch)
    err = caught.value
    assert err.code == 403, err.message
    assert err.message.startswith(VALIDATOR), err.message
    assert f'user "{user}"' in err.message
    for words in row.denied:
        assert words in err.message, err.message
    after = await api.get(ocm.MANAGED_CLUSTER, cluster)
    expected = {SET: "default", **row.start}  # the hub puts unlabelled clusters in "default"
    assert after["metadata"]["labels"] == expected, "a denied change loses nothing"


async def test_an_agent_labels_only_its_own_cluster(hub: HubProcess, api: Api, unique: str) -> None:
    mine, other = f"mine-{unique}", f"other-{unique}"
    for name in (mine, other):
        await api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": name}})
    user, groups, who = subject_for("agent", unique, mine)
    update = {
        "apiGroups": [GROUP],
        "resources": ["managedclusters"],
        "resourceNames": [mine],
        "verbs": ["get", "patch"],
    }
    await grant(api, f"test:{unique}", who, [update, label("*")])
    patch = {"metadata": {"labels": {REGION: "apac"}}}
    async with Api.from_kubeconfig(hub.identity(user, groups).kubeconfig) as as_agent:
        await as_agent.patch(ocm.MANAGED_CLUSTER, mine, patch)
        with pytest.raises(ApiError) as caught:
            await as_agent.patch(ocm.MANAGED_CLUSTER, other, patch)
    assert caught.value.code == 403
    assert REGION not in ((await api.get(ocm.MANAGED_CLUSTER, other))["metadata"]["labels"])


async def test_creating_a_cluster_checks_its_labels(hub: HubProcess, api: Api, unique: str) -> None:
    """Creation is an addition of every label, and the default set label counts too."""
    user, groups, who = subject_for("user", unique, "")
    create: Obj = {"apiGroups": [GROUP], "resources": ["managedclusters"], "verbs": ["create"]}
    await grant(api, f"test:{unique}", who, [create, label(f"{SET}:dev-{unique}")])
    async with Api.from_kubeconfig(hub.identity(user, groups).kubeconfig) as as_user:
        with pytest.raises(ApiError) as unlabelled:
            await as_user.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": f"a-{unique}"}})
        with pytest.raises(ApiError) as region:
            await as_user.create(
                ocm.MANAGED_CLUSTER,
                {
                    "metadata": {
                        "name": f"b-{unique}",
                        "labels": {SET: f"dev-{unique}", REGION: "x"},
                    }
                },
            )
        made = await as_user.create(
            ocm.MANAGED_CLUSTER,
            {"metadata": {"name": f"c-{unique}", "labels": {SET: f"dev-{unique}"}}},
        )
    assert (
        unlabelled.value.code == 403 and 'ManagedClusterSet "default"' in unlabelled.value.message
    )
    assert region.value.code == 403 and f'"{REGION}=x"' in region.value.message
    assert made["metadata"]["labels"][SET] == f"dev-{unique}"


@pytest.mark.parametrize("kind", SUBJECTS)
@pytest.mark.parametrize("granted", ["this set", "another set", "nothing"])
async def test_bind_permission_matrix(
    hub: HubProcess, api: Api, unique: str, kind: str, granted: str
) -> None:
    cluster_set, namespace = f"s-{unique}", f"ws-{unique}"
    await api.create(ocm.MANAGED_CLUSTER_SET, {"metadata": {"name": cluster_set}})
    await api.create(kinds.NAMESPACE, {"metadata": {"name": namespace}})
    user, groups, who = subject_for(kind, unique, f"c-{unique}")
    bindings: Obj = {
        "apiGroups": [GROUP],
        "resources": ["managedclustersetbindings"],
        "verbs": ["create"],
    }
    rules = [bindings]
    if granted != "nothing":
        target = cluster_set if granted == "this set" else f"other-{unique}"
        rules.append(
            {
                "apiGroups": [GROUP],
                "resources": ["managedclustersets/bind"],
                "resourceNames": [target],
                "verbs": ["create"],
            }
        )
    await grant(api, f"test:{unique}", who, rules)
    body = {
        "metadata": {"name": cluster_set, "namespace": namespace},
        "spec": {"clusterSet": cluster_set},
    }
    async with Api.from_kubeconfig(hub.identity(user, groups).kubeconfig) as as_subject:
        if granted == "this set":
            await as_subject.create(ocm.MANAGED_CLUSTER_SET_BINDING, body)
            return
        with pytest.raises(ApiError) as caught:
            await as_subject.create(ocm.MANAGED_CLUSTER_SET_BINDING, body)
    assert caught.value.code == 403
    assert caught.value.message == BINDING_VALIDATOR + (
        f'managedclustersets/bind.{GROUP} "{cluster_set}" is forbidden: '
        f'user "{user}" is not allowed to bind cluster set "{cluster_set}"'
    )
    listed = await api.list(ocm.MANAGED_CLUSTER_SET_BINDING, namespace=namespace)
    assert listed["items"] == []
