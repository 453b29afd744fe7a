"""OCM's admission webhooks: each one's name, path, what it is registered for, and its rule.

Names and paths are upstream's (the ``webhook-*configuration.yaml`` of
``manifests/cluster-manager/hub``; controller-runtime's ``/mutate-<group>-<version>-<kind>``
and ``/validate-...`` paths, dots as dashes). pyocm adds the ManagedClusterSet validator
(``ExclusiveLabel``), and its ManagedCluster validator also covers
``managedclusters/status`` (the ``id.k8s.io`` claim), which its configuration must list.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from pyocm.hooks import cluster, work
from pyocm.hooks.request import Config, Obj, Operation, Request, Seams

#: A rule: a mutator returns the object to store; a validator returns None or raises
#: :class:`pyocm.hooks.request.Denial`.
Rule = Callable[[Request, Config, Seams], Awaitable[Obj | None]]


@dataclass(frozen=True)
class Webhook:
    name: str
    path: str
    mutating: bool
    group: str
    #: ``resource`` or ``resource/subresource``, as the configuration's rules list them.
    resources: tuple[str, ...]
    rule: Rule
    #: Whether the webhook is served with this config (upstream installs some behind a gate).
    enabled: Callable[[Config], bool] = lambda config: True

    def handles(self, request: Request) -> bool:
        """Registered for CREATE and UPDATE of its resources, as upstream's configurations."""
        return (
            request.group == self.group
            and request.path in self.resources
            and request.operation in (Operation.CREATE, Operation.UPDATE)
        )


MANAGED_CLUSTER_MUTATOR = Webhook(
    name=cluster.MUTATOR,
    path="/mutate-cluster-open-cluster-management-io-v1-managedcluster",
    mutating=True,
    group=cluster.GROUP,
    resources=("managedclusters",),
    rule=cluster.mutate_managed_cluster,
)
MANAGED_CLUSTER_VALIDATOR = Webhook(
    name=cluster.VALIDATOR,
    path="/validate-cluster-open-cluster-management-io-v1-managedcluster",
    mutating=False,
    group=cluster.GROUP,
    resources=("managedclusters", "managedclusters/status"),
    rule=cluster.validate_managed_cluster,
)
MANAGED_CLUSTER_SET_VALIDATOR = Webhook(
    name=cluster.SET_VALIDATOR,
    path="/validate-cluster-open-cluster-management-io-v1beta2-managedclusterset",
    mutating=False,
    group=cluster.GROUP,
    resources=("managedclustersets",),
    rule=cluster.validate_cluster_set,
)
MANAGED_CLUSTER_SET_BINDING_VALIDATOR = Webhook(
    name=cluster.BINDING_VALIDATOR,
    path="/validate-cluster-open-cluster-management-io-v1beta2-managedclustersetbinding",
    mutating=False,
    group=cluster.GROUP,
    resources=("managedclustersetbindings",),
    rule=cluster.validate_cluster_set_binding,
)
MANIFEST_WORK_VALIDATOR = Webhook(
    name=work.WORK_WEBHOOK,
    path="/validate-work-open-cluster-management-io-v1-manifestwork",
    mutating=False,
    group=work.GROUP,
    resources=("manifestworks",),
    rule=work.validate_manifest_work,
)
MANIFEST_WORK_REPLICA_SET_VALIDATOR = Webhook(
    name=work.REPLICASET_WEBHOOK,
    path="/validate-work-open-cluster-management-io-v1alpha1-manifestworkreplicaset",
    mutating=False,
    group=work.GROUP,
    resources=("manifestworkreplicasets",),
    rule=work.validate_replica_set,
    enabled=lambda config: config.replica_sets,
)

REGISTRATION = (
    MANAGED_CLUSTER_MUTATOR,
    MANAGED_CLUSTER_VALIDATOR,
    MANAGED_CLUSTER_SET_VALIDATOR,
    MANAGED_CLUSTER_SET_BINDING_VALIDATOR,
)
WORK = (MANIFEST_WORK_VALIDATOR, MANIFEST_WORK_REPLICA_SET_VALIDATOR)
ALL = REGISTRATION + WORK


def enabled(config: Config, webhooks: tuple[Webhook, ...] = ALL) -> list[Webhook]:
    return [webhook for webhook in webhooks if webhook.enabled(config)]
