"""Decision throughput with ten thousand clusters' RBAC loaded. Prints figures, asserts none."""

from __future__ import annotations

import random
import time
from typing import Any

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.authorization.attributes import Attributes
from pyocm.apiserver.authorization.authorizer import authorize
from pyocm.apiserver.authorization.bootstrap_policy import bootstrap_objects
from pyocm.apiserver.authorization.index import RbacIndex

CLUSTERS = 10_000
DECISIONS = 50_000
CLUSTER = "cluster.open-cluster-management.io"
WORK = "work.open-cluster-management.io"
RBAC = "rbac.authorization.k8s.io"


def groups(c: str) -> list[dict[str, str]]:
    return [
        {"apiGroup": RBAC, "kind": "Group", "name": f"system:open-cluster-management:{c}"},
        {"apiGroup": RBAC, "kind": "Group", "name": f"open-cluster-management:{c}"},
    ]


def binding(name: str, role: str, c: str, namespace: str = "") -> dict[str, Any]:
    meta = {"name": name, "namespace": namespace} if namespace else {"name": name}
    return {
        "metadata": meta,
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role},
        "subjects": groups(c),
    }


def fleet_index() -> RbacIndex:
    index = RbacIndex()
    for obj in bootstrap_objects():
        index.upsert(obj["kind"], obj)
    common = {
        "open-cluster-management:managedcluster:registration": [
            {
                "verbs": ["get", "list", "watch", "update"],
                "apiGroups": ["coordination.k8s.io"],
                "resources": ["leases"],
            }
        ],
        "open-cluster-management:managedcluster:work": [
            {
                "verbs": ["get", "list", "watch", "update", "patch"],
                "apiGroups": [WORK],
                "resources": ["manifestworks"],
            },
            {
                "verbs": ["patch", "update"],
                "apiGroups": [WORK],
                "resources": ["manifestworks/status"],
            },
        ],
    }
    for name, rules in common.items():
        index.upsert("ClusterRole", {"metadata": {"name": name}, "rules": rules})
    for i in range(CLUSTERS):
        c = f"cluster-{i}"
        own = f"open-cluster-management:managedcluster:{c}"
        index.upsert(
            "ClusterRole",
            {
                "metadata": {"name": own},
                "rules": [
                    {
                        "verbs": ["create", "get", "list", "watch"],
                        "apiGroups": ["certificates.k8s.io"],
                        "resources": ["certificatesigningrequests"],
                    },
                    {
                        "verbs": ["renew"],
                        "apiGroups": ["register.open-cluster-management.io"],
                        "resources": ["managedclusters/clientcertificates"],
                    },
                    {
                        "verbs": ["get", "list", "update", "watch"],
                        "apiGroups": [CLUSTER],
                        "resources": ["managedclusters"],
                        "resourceNames": [c],
                    },
                    {
                        "verbs": ["patch", "update"],
                        "apiGroups": [CLUSTER],
                        "resources": ["managedclusters/status"],
                        "resourceNames": [c],
                    },
                ],
            },
        )
        index.upsert("ClusterRoleBinding", binding(own, own, c))
        index.upsert("ClusterRoleBinding", binding(f"{own}:addon", "view", c))
        index.upsert(
            "RoleBinding",
            binding(
                f"{own}:registration", "open-cluster-management:managedcluster:registration", c, c
            ),
        )
        index.upsert(
            "RoleBinding",
            binding(f"{own}:work", "open-cluster-management:managedcluster:work", c, c),
        )
    return index


def agent(c: str) -> UserInfo:
    return UserInfo(
        name=f"system:open-cluster-management:{c}:agent",
        groups=(
            f"system:open-cluster-management:{c}",
            "system:open-cluster-management:managed-clusters",
            "system:authenticated",
        ),
    )


def workload(rng: random.Random) -> list[tuple[Attributes, bool]]:
    """A mix of the agent's everyday requests, and some aimed at other clusters."""
    out: list[tuple[Attributes, bool]] = []
    for _ in range(DECISIONS):
        c, other = f"cluster-{rng.randrange(CLUSTERS)}", f"cluster-{rng.randrange(CLUSTERS)}"
        user = agent(c)
        out.extend(
            [
                (
                    Attributes(
                        user=user,
                        verb="update",
                        api_group="coordination.k8s.io",
                        resource="leases",
                        namespace=c,
                        name="managed-cluster-lease",
                    ),
                    True,
                ),
                (
                    Attributes(
                        user=user,
                        verb="patch",
                        api_group=CLUSTER,
                        resource="managedclusters",
                        subresource="status",
                        name=c,
                    ),
                    True,
                ),
                (
                    Attributes(
                        user=user,
                        verb="patch",
                        api_group=WORK,
                        resource="manifestworks",
                        subresource="status",
                        namespace=c,
                        name="w",
                    ),
                    True,
                ),
                (
                    Attributes.for_path(
                        user=user, verb="get", path="/apis/work.open-cluster-management.io/v1"
                    ),
                    True,
                ),
                (
                    Attributes(
                        user=user,
                        verb="get",
                        api_group=CLUSTER,
                        resource="managedclusters",
                        name=other,
                    ),
                    other == c,
                ),
            ]
        )
    return out[:DECISIONS]


def test_decision_throughput() -> None:
    started = time.perf_counter()
    index = fleet_index()
    built = time.perf_counter() - started
    requests = workload(random.Random(7))
    for attrs, expected in requests[:2_000]:
        assert authorize(index, attrs).allowed is expected
    started = time.perf_counter()
    for attrs, _ in requests:
        authorize(index, attrs)
    elapsed = time.perf_counter() - started
    print(
        f"\nRBAC index: {CLUSTERS} clusters ({4 * CLUSTERS} bindings) loaded in {built:.2f}s;"
        f" {len(requests) / elapsed:,.0f} decisions/s ({elapsed / len(requests) * 1e6:.1f} us each)"
    )
