"""OCM's admission rules, built into the hub as kube-apiserver builds in its own plugins.

The rules are :mod:`pyocm.hooks` (upstream runs them as webhooks beside kube-apiserver);
this module gives them the server's own seams (its RBAC authorizer for the
SubjectAccessReviews, its store for the objects they read) and one chain plugin per
webhook. A denial reads as kube-apiserver relays a webhook's
(``admission webhook "<name>" denied the request: <message>``, the webhook's code, reason
and details), with upstream's webhook names, so tools matching upstream's text keep
working. ``ServerConfig.ocm_admission`` off leaves them out, for a hub whose OCM
admission runs as webhooks (``pyocm webhook``): both would run the taint mutator twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyocm.apiserver.admission.chain import BasePlugin, Operation, Plugin
from pyocm.apiserver.admission.chain import Request as ChainRequest
from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.authorization import authorizer
from pyocm.apiserver.authorization.attributes import Attributes
from pyocm.hooks import cluster, webhooks
from pyocm.hooks import request as hooks
from pyocm.hooks.webhooks import Webhook
from pyocm.kube import status

if TYPE_CHECKING:
    from pyocm.apiserver.state import ServerState

Obj = dict[str, Any]


def ocm_plugins(state: ServerState) -> list[Plugin]:
    """One plugin per OCM webhook enabled by the server's gates and manifest limit;
    none when the server's OCM admission runs as webhooks (``ocm_admission`` off)."""
    if not state.config.ocm_admission:
        return []
    return [HookPlugin(state, webhook) for webhook in webhooks.enabled(hook_config(state))]


#: The operations upstream's webhook configurations route (Webhook.handles).
_WRITES = (Operation.CREATE, Operation.UPDATE)


def hook_config(state: ServerState) -> hooks.Config:
    return hooks.Config.of(state.config.feature_gates, manifest_limit=state.config.manifest_limit)


class RbacAuthorizer:
    """The SubjectAccessReview a webhook would send, asked of the hub's own RBAC."""

    def __init__(self, state: ServerState) -> None:
        self._state = state

    async def allowed(
        self,
        user: hooks.UserInfo,
        *,
        verb: str,
        group: str,
        resource: str,
        subresource: str = "",
        namespace: str = "",
        name: str = "",
    ) -> bool:
        attrs = Attributes(
            user=UserInfo(name=user.name, groups=user.groups, uid=user.uid, extra=dict(user.extra)),
            verb=verb,
            resource_request=True,
            api_group=group,
            resource=resource,
            subresource=subresource,
            namespace=namespace,
            name=name,
        )
        return authorizer.authorize(self._state.rbac, attrs).allowed


class StoreLookup:
    """The objects the rules read, from the server's store."""

    def __init__(self, state: ServerState) -> None:
        self._state = state

    async def namespace(self, name: str) -> Obj | None:
        return await self._get("", "namespaces", name)

    async def managed_cluster(self, name: str) -> Obj | None:
        return await self._get(cluster.GROUP, "managedclusters", name)

    async def _get(self, group: str, plural: str, name: str) -> Obj | None:
        info = self._state.catalog.get(group, "v1", plural)
        if info is None or not name:
            return None
        try:
            return await self._state.store.get(info, namespace="", name=name)
        except status.ApiError as err:
            if err.code == 404:
                return None
            raise


def hook_request(request: ChainRequest) -> hooks.Request:
    user = request.ctx.user
    return hooks.Request(
        operation=hooks.Operation(request.operation.value),
        group=request.resource.group,
        version=request.resource.version,
        resource=request.resource.plural,
        subresource=request.subresource,
        namespace=request.namespace,
        name=request.name,
        obj=request.obj,
        old=request.old,
        user=hooks.UserInfo(name=user.name, uid=user.uid, groups=user.groups, extra=user.extra),
        dry_run=request.ctx.dry_run,
    )


def routes(webhook: Webhook, request: ChainRequest) -> bool:
    """``webhook.handles`` answered from the chain's request.

    Every write of every kind asks each plugin: building the rules' request there cost a
    tenth of the hub's durable write rate, so only the plugins that run build it."""
    resource = request.resource
    if resource.group != webhook.group or request.operation not in _WRITES:
        return False
    sub = request.subresource
    return (f"{resource.plural}/{sub}" if sub else resource.plural) in webhook.resources


class HookPlugin(BasePlugin):
    """A webhook's rule in the chain: a mutator in the mutating pass, a validator in the
    validating one."""

    def __init__(self, state: ServerState, webhook: Webhook) -> None:
        self.name = webhook.name
        self.webhook = webhook
        self._config = hook_config(state)
        self._seams = hooks.Seams(authorizer=RbacAuthorizer(state), lookup=StoreLookup(state))

    def handles(self, request: ChainRequest) -> bool:
        return routes(self.webhook, request)

    async def mutate(self, request: ChainRequest) -> None:
        if self.webhook.mutating:
            mutated = await self._run(request)
            assert request.obj is not None and mutated is not None
            request.obj.clear()  # the chain's object is changed in place
            request.obj.update(mutated)

    async def validate(self, request: ChainRequest) -> None:
        if not self.webhook.mutating:
            await self._run(request)

    async def _run(self, request: ChainRequest) -> Obj | None:
        try:
            return await self.webhook.rule(hook_request(request), self._config, self._seams)
        except hooks.Denial as denial:
            # What a client of kube-apiserver reads when the webhook denies.
            raise denial.relayed() from None
