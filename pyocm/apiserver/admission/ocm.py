"""OCM's admission rules, built into the hub as kube-apiserver builds in its own plugins.

Upstream runs these as webhooks beside kube-apiserver (``pkg/registration/webhook``);
a pyocm hub has them in its chain, with upstream's messages, so OCM tools see the same
answers. They apply to ``cluster.open-cluster-management.io`` ManagedClusters and
ManagedClusterSetBindings; permission checks ask the hub's authorizer for the
requesting user, as the webhooks' SubjectAccessReviews do. The work webhook's rules
for ManifestWorks are in :mod:`pyocm.apiserver.admission.work`.

pyocm addition (issue 4): a ManagedCluster's ``id.k8s.io`` claim, once reported, may
not change, so a second, different cluster cannot take over a registered name.

pyocm additions from the ClusterSet Override design (seed 002, issue 5): the
``ExclusiveLabel`` selector, and ``managedclusters/label`` grants for every label under
a reserved prefix, so sets built on such labels cannot be joined by a mere ``update``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pyocm.apiserver.admission import work
from pyocm.apiserver.admission.chain import BasePlugin, Operation, Plugin, Request
from pyocm.apiserver.authorization import authorizer
from pyocm.apiserver.authorization.attributes import Attributes
from pyocm.kube import names, status, timefmt

if TYPE_CHECKING:
    from pyocm.apiserver.state import ServerState

Obj = dict[str, Any]
GROUP = "cluster.open-cluster-management.io"
REGISTER_GROUP = "register.open-cluster-management.io"
CLUSTER_SET_LABEL = "cluster.open-cluster-management.io/clusterset"
ID_CLAIM = "id.k8s.io"


def ocm_plugins(state: ServerState) -> list[Plugin]:
    return [
        ManagedClusterMutating(state),
        ManagedClusterValidating(state),
        ClusterSetValidating(),
        ClusterSetBindingValidating(state),
        *work.work_plugins(state),
    ]


#: Label keys whose changes need ``managedclusters/label`` (seed 002); only these may
#: back an ``ExclusiveLabel`` set, so joining such a set is always a guarded act.
RESERVED_LABEL_PREFIXES = (
    "cluster.open-cluster-management.io/",
    "info.open-cluster-management.io/",
)


class ClusterSetValidating(BasePlugin):
    """The Override design's ``ExclusiveLabel`` selector needs its label, under a reserved
    prefix (only those labels are guarded by ``managedclusters/label``)."""

    name = "ManagedClusterSetValidating"

    def handles(self, request: Request) -> bool:
        return (
            _is(request, "managedclustersets")
            and request.operation in (Operation.CREATE, Operation.UPDATE)
            and not request.subresource
        )

    async def validate(self, request: Request) -> None:
        assert request.obj is not None
        selector = ((request.obj.get("spec") or {}).get("clusterSelector")) or {}
        if selector.get("selectorType") != "ExclusiveLabel":
            return
        path = "spec.clusterSelector.exclusiveLabel"
        exclusive = selector.get("exclusiveLabel")
        errors: list[status.FieldError] = []
        if not isinstance(exclusive, dict):
            errors.append(status.required(path, "required for selectorType ExclusiveLabel"))
        else:
            key, value = str(exclusive.get("key") or ""), str(exclusive.get("value") or "")
            if not key.startswith(RESERVED_LABEL_PREFIXES):
                prefixes = " or ".join(RESERVED_LABEL_PREFIXES)
                errors.append(status.invalid(f"{path}.key", key, f"must start with {prefixes}"))
            errors += [status.invalid(f"{path}.key", key, m) for m in names.is_qualified_name(key)]
            errors += [
                status.invalid(f"{path}.value", value, m) for m in names.is_valid_label_value(value)
            ]
        if errors:
            raise status.invalid_object(
                kind="ManagedClusterSet", group=GROUP, name=request.name, errors=errors
            )


def _labels(obj: Obj | None) -> dict[str, str]:
    return {
        str(k): str(v) for k, v in (((obj or {}).get("metadata") or {}).get("labels") or {}).items()
    }


def _is(request: Request, plural: str) -> bool:
    return request.resource.group == GROUP and request.resource.plural == plural


def _allowed(
    state: ServerState,
    request: Request,
    *,
    group: str,
    resource: str,
    subresource: str,
    verb: str,
    name: str,
) -> bool:
    attrs = Attributes(
        user=request.ctx.user,
        verb=verb,
        resource_request=True,
        api_group=group,
        resource=resource,
        subresource=subresource,
        name=name,
    )
    return authorizer.authorize(state.rbac, attrs).allowed


class ManagedClusterMutating(BasePlugin):
    """Stamp taints' ``timeAdded``; put unlabelled clusters into the ``default`` set."""

    name = "ManagedClusterMutating"

    def __init__(self, state: ServerState) -> None:
        self._state = state

    def handles(self, request: Request) -> bool:
        return (
            _is(request, "managedclusters")
            and request.operation in (Operation.CREATE, Operation.UPDATE)
            and not request.subresource
        )

    async def mutate(self, request: Request) -> None:
        assert request.obj is not None
        # Upstream's webhook re-serialises the Go struct, whose spec and
        # hubAcceptsClient have no omitempty: a cluster created without them stores
        # both (the schema's defaults then apply, see Strategy.after_admission).
        spec = request.obj.get("spec")
        if not isinstance(spec, dict):
            spec = request.obj["spec"] = {}
        spec.setdefault("hubAcceptsClient", False)
        now = timefmt.format_time(datetime.now(UTC))
        self._taints(request, now)
        if self._state.config.feature_gates.get("DefaultClusterSet", True):
            labels = request.obj.setdefault("metadata", {}).setdefault("labels", {}) or {}
            if not labels.get(CLUSTER_SET_LABEL):
                labels[CLUSTER_SET_LABEL] = "default"
                request.obj["metadata"]["labels"] = labels

    def _taints(self, request: Request, now: str) -> None:
        assert request.obj is not None
        taints: list[Obj] = list((request.obj.get("spec") or {}).get("taints") or [])
        old = {t.get("key"): t for t in ((request.old or {}).get("spec") or {}).get("taints") or []}
        refused = []
        for taint in taints:
            if request.operation is Operation.CREATE:
                taint["timeAdded"] = now
                continue
            before = old.get(taint.get("key"))
            unchanged = before is not None and (before.get("value"), before.get("effect")) == (
                taint.get("value"),
                taint.get("effect"),
            )
            if unchanged:
                assert before is not None
                if taint.get("timeAdded") and taint["timeAdded"] != before.get("timeAdded"):
                    refused.append(str(taint.get("key")))
                taint["timeAdded"] = before.get("timeAdded")
            elif taint.get("timeAdded"):
                refused.append(str(taint.get("key")))
            else:
                taint["timeAdded"] = now
        if refused:
            raise status.bad_request(
                f'It is not allowed to set TimeAdded of Taint "{",".join(refused)}".'
            )


class ManagedClusterValidating(BasePlugin):
    name = "ManagedClusterValidating"

    def __init__(self, state: ServerState) -> None:
        self._state = state

    def handles(self, request: Request) -> bool:
        return _is(request, "managedclusters") and request.operation in (
            Operation.CREATE,
            Operation.UPDATE,
        )

    async def validate(self, request: Request) -> None:
        assert request.obj is not None
        if request.subresource == "status":
            self._claims_kept(request)
            return
        if request.operation is Operation.CREATE:
            problems = names.is_dns1123_label(request.name)
            if problems:
                raise status.bad_request(
                    f"metadata.name format is not correct: {'; '.join(problems)}"
                )
        for config in (request.obj.get("spec") or {}).get("managedClusterClientConfigs") or []:
            url = str(config.get("url") or "")
            if not url.startswith("https://") or len(url) <= len("https://"):
                raise status.bad_request(f'url "{url}" is invalid in client configs')
        accepts = bool((request.obj.get("spec") or {}).get("hubAcceptsClient"))
        accepted_before = bool(((request.old or {}).get("spec") or {}).get("hubAcceptsClient"))
        if accepts and not accepted_before:
            await self._may_accept(request)
        self._may_label(request)

    async def _may_accept(self, request: Request) -> None:
        info = self._state.catalog.get("", "v1", "namespaces")
        assert info is not None
        try:
            namespace = await self._state.store.get(info, namespace="", name=request.name)
        except status.ApiError as err:
            if err.code != 404:
                raise
        else:
            if (namespace.get("metadata") or {}).get("deletionTimestamp"):
                raise _forbidden(
                    request,
                    "managedclusters/accept",
                    f'cluster namespace "{request.name}" is terminating',
                    group=REGISTER_GROUP,
                )
        if not _allowed(
            self._state,
            request,
            group=REGISTER_GROUP,
            resource="managedclusters",
            subresource="accept",
            verb="update",
            name=request.name,
        ):
            raise _forbidden(
                request,
                "managedclusters/accept",
                f'user "{request.ctx.user.name}" cannot update the HubAcceptsClient field',
                group=REGISTER_GROUP,
            )

    def _may_label(self, request: Request) -> None:
        """Reserved labels move clusters between sets, so each change needs a grant.

        Upstream checks ``managedclustersets/join`` for the old and the new clusterset
        label. The Override design (seed 002) adds ``managedclusters/label`` for every
        key under a reserved prefix, named ``<key>:<value>``, ``<key>:*`` or ``*``
        (RBAC matches resourceNames exactly, so each spelling is asked for in turn).
        For the clusterset label either permission suffices.
        """
        before, after = _labels(request.old), _labels(request.obj)
        changed = sorted(
            key
            for key in before.keys() | after.keys()
            if key.startswith(RESERVED_LABEL_PREFIXES) and before.get(key) != after.get(key)
        )
        for key in changed:
            for value in (before.get(key), after.get(key)):
                if value is None or (key == CLUSTER_SET_LABEL and not value):
                    continue
                if key == CLUSTER_SET_LABEL and self._check(
                    request, "managedclustersets", "join", value
                ):
                    continue
                grants = (f"{key}:{value}", f"{key}:*", "*")
                if any(self._check(request, "managedclusters", "label", n) for n in grants):
                    continue
                raise self._label_forbidden(request, key, value, grants)

    def _check(self, request: Request, resource: str, subresource: str, name: str) -> bool:
        return _allowed(
            self._state,
            request,
            group=GROUP,
            resource=resource,
            subresource=subresource,
            verb="create",
            name=name,
        )

    @staticmethod
    def _label_forbidden(
        request: Request, key: str, value: str, grants: tuple[str, ...]
    ) -> status.ApiError:
        user = request.ctx.user.name
        quoted = [f'"{g}"' for g in grants]
        alternatives = f"{', '.join(quoted[:-1])} or {quoted[-1]}"
        label_grant = f"create on managedclusters/label with a resourceName of {alternatives}"
        if key == CLUSTER_SET_LABEL:
            # Upstream's message first, so tools matching it still do.
            return _forbidden(
                request,
                "managedclustersets/join",
                f'user "{user}" cannot add/remove a ManagedCluster to/from ManagedClusterSet '
                f'"{value}" (it needs create on managedclustersets/join for "{value}", '
                f"or {label_grant})",
            )
        return _forbidden(
            request,
            "managedclusters/label",
            f'user "{user}" cannot add/change/remove label "{key}={value}": it needs {label_grant}',
        )

    def _claims_kept(self, request: Request) -> None:
        def claim(obj: Obj | None) -> str | None:
            for item in ((obj or {}).get("status") or {}).get("clusterClaims") or []:
                if item.get("name") == ID_CLAIM:
                    return str(item.get("value"))
            return None

        before, after = claim(request.old), claim(request.obj)
        if before and after and before != after:
            raise _forbidden(
                request,
                "managedclusters/status",
                f'managed cluster "{request.name}" is registered by the cluster with {ID_CLAIM} "{before}"; '
                f'a different cluster ({ID_CLAIM} "{after}") cannot register under the same name',
            )


class ClusterSetBindingValidating(BasePlugin):
    name = "ManagedClusterSetBindingValidating"

    def __init__(self, state: ServerState) -> None:
        self._state = state

    async def _is_cluster_namespace(self, namespace: str) -> bool:
        info = self._state.catalog.get(GROUP, "v1", "managedclusters")
        if info is None:
            return False
        try:
            await self._state.store.get(info, namespace="", name=namespace)
        except status.ApiError as err:
            if err.code == 404:
                return False
            raise
        return True

    def handles(self, request: Request) -> bool:
        return (
            _is(request, "managedclustersetbindings")
            and request.operation in (Operation.CREATE, Operation.UPDATE)
            and not request.subresource
        )

    async def validate(self, request: Request) -> None:
        assert request.obj is not None
        cluster_set = str((request.obj.get("spec") or {}).get("clusterSet") or "")
        if request.name != cluster_set:
            raise status.bad_request(
                "The ManagedClusterSetBinding must have the same name as the target ManagedClusterSet"
            )
        if request.operation is Operation.CREATE and await self._is_cluster_namespace(
            request.namespace
        ):
            # Seed 001: a set is bound to a workspace namespace, never to the namespace of
            # a registered cluster (whose agents' RBAC lives there).
            raise _forbidden(
                request,
                "managedclustersetbindings",
                f'namespace "{request.namespace}" is the cluster namespace of managed cluster '
                f'"{request.namespace}"; bind cluster sets to a workspace namespace instead',
            )
        if request.operation is Operation.CREATE and not _allowed(
            self._state,
            request,
            group=GROUP,
            resource="managedclustersets",
            subresource="bind",
            verb="create",
            name=cluster_set,
        ):
            raise _forbidden(
                request,
                "managedclustersets/bind",
                f'user "{request.ctx.user.name}" is not allowed to bind cluster set "{cluster_set}"',
            )


def _forbidden(
    request: Request, resource: str, reason: str, *, group: str = GROUP
) -> status.ApiError:
    """Forbidden on ``resource`` (``plural/subresource``), worded as apimachinery's NewForbidden."""
    return status.forbidden_error(
        message=f'{resource}.{group} "{request.name}" is forbidden: {reason}',
        resource=resource,
        group=group,
        name=request.name,
    )
