"""The two common ClusterRoles exist exactly while at least one ManagedCluster does."""

from __future__ import annotations

from collections.abc import Mapping

from pyocm.api import models
from pyocm.kube import kinds
from pyocm.registration.hub import rbac
from pyocm.runtime.cache import Store
from pyocm.runtime.client import Api
from pyocm.runtime.ensure import delete_if_present, ensure
from pyocm.runtime.informer import Informer

KEY = "common-cluster-roles"


class ClusterRolesController:
    def __init__(
        self,
        api: Api,
        clusters: Informer,
        *,
        labels: Mapping[str, str] = {},
        cache: Store | None = None,
    ) -> None:
        self.api = api
        self.clusters = clusters
        self.labels = dict(labels)
        #: ClusterRoles carrying the cluster-name label (the common roles do, with ""):
        #: roles already as desired cost no request when clusters come and go.
        self.cache = cache

    async def reconcile(self, key: str) -> None:
        roles = rbac.common_roles(labels=self.labels)
        if len(self.clusters.store):
            for role in roles:
                await ensure(self.api, kinds.CLUSTER_ROLE, models.wire(role), cache=self.cache)
        else:
            for role in roles:
                await delete_if_present(self.api, kinds.CLUSTER_ROLE, role["metadata"]["name"])
