"""OCM's registration admission rules (upstream's ``pkg/registration/webhook``).

ManagedClusters: taints' ``timeAdded`` and the ``default`` set (the mutator); names,
client-config URLs, the accept and join permissions (the validator).
ManagedClusterSetBindings: the name and the bind permission.

pyocm additions, each served by the webhook of its kind:

* issue 4: a ManagedCluster's ``id.k8s.io`` claim, once reported in its status, may not
  change, so a second, different cluster cannot take over a registered name (on
  ``managedclusters/status``, which the validating webhook configuration lists too);
* the ClusterSet Override design (seed 002, issue 5): the ``ExclusiveLabel`` selector of
  a ManagedClusterSet (webhook ``managedclustersetvalidators...``), and
  ``managedclusters/label`` grants for every label under a reserved prefix, so sets built
  on such labels cannot be joined by a mere ``update``;
* seed 001: a set is bound to a workspace namespace, never to a cluster's namespace.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from pyocm.hooks.request import Config, Denial, Obj, Operation, Request, Seams, terminating
from pyocm.kube import names, status, timefmt

GROUP = "cluster.open-cluster-management.io"
REGISTER_GROUP = "register.open-cluster-management.io"
CLUSTER_SET_LABEL = "cluster.open-cluster-management.io/clusterset"
ID_CLAIM = "id.k8s.io"

MUTATOR = "managedclustermutators.admission.cluster.open-cluster-management.io"
VALIDATOR = "managedclustervalidators.admission.cluster.open-cluster-management.io"
#: pyocm's: formed as upstream's names are.
SET_VALIDATOR = "managedclustersetvalidators.admission.cluster.open-cluster-management.io"
BINDING_VALIDATOR = (
    "managedclustersetbindingvalidators.admission.cluster.open-cluster-management.io"
)

#: Label keys whose changes need ``managedclusters/label`` (seed 002); only these may
#: back an ``ExclusiveLabel`` set, so joining such a set is always a guarded act.
RESERVED_LABEL_PREFIXES = (
    "cluster.open-cluster-management.io/",
    "info.open-cluster-management.io/",
)


# --- ManagedCluster: the mutator ------------------------------------------------------


async def mutate_managed_cluster(request: Request, config: Config, seams: Seams) -> Obj:
    """The object to store: taints stamped, the ``default`` set label added."""
    return mutated_managed_cluster(request, config=config)


def mutated_managed_cluster(request: Request, *, config: Config, now: str | None = None) -> Obj:
    assert request.obj is not None
    obj: Obj = copy.deepcopy(request.obj)
    # Upstream's webhook re-serialises the Go struct, whose spec and hubAcceptsClient
    # have no omitempty: a cluster created without them gets both (the schema's defaults
    # then apply to the rest).
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    spec.setdefault("hubAcceptsClient", False)
    _stamp_taints(request, spec, now or timefmt.format_time(datetime.now(UTC)))
    if config.default_cluster_set:
        meta = obj.setdefault("metadata", {})
        labels = meta.get("labels") or {}
        if not labels.get(CLUSTER_SET_LABEL):
            meta["labels"] = {**labels, CLUSTER_SET_LABEL: "default"}
    return obj


def _stamp_taints(request: Request, spec: Obj, now: str) -> None:
    taints: list[Obj] = list(spec.get("taints") or [])
    old = {t.get("key"): t for t in _spec(request.old).get("taints") or []}
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
        raise Denial(
            MUTATOR,
            status.bad_request(
                f'It is not allowed to set TimeAdded of Taint "{",".join(refused)}".'
            ),
        )


# --- ManagedCluster: the validator ----------------------------------------------------


async def validate_managed_cluster(request: Request, config: Config, seams: Seams) -> None:
    assert request.obj is not None
    if request.subresource == "status":
        _claims_kept(request)
        return
    if request.subresource:
        return
    if request.operation is Operation.CREATE:
        problems = names.is_dns1123_label(request.name)
        if problems:
            raise _bad_request(
                VALIDATOR, f"metadata.name format is not correct: {'; '.join(problems)}"
            )
    for client_config in _spec(request.obj).get("managedClusterClientConfigs") or []:
        url = str(client_config.get("url") or "")
        if not url.startswith("https://") or len(url) <= len("https://"):
            raise _bad_request(VALIDATOR, f'url "{url}" is invalid in client configs')
    accepts = bool(_spec(request.obj).get("hubAcceptsClient"))
    if accepts and not _spec(request.old).get("hubAcceptsClient"):
        await _may_accept(request, seams)
    await _may_label(request, seams)


async def _may_accept(request: Request, seams: Seams) -> None:
    namespace = await seams.lookup.namespace(request.name)
    if namespace is not None and terminating(namespace):
        raise _forbidden(
            VALIDATOR,
            request,
            "managedclusters/accept",
            f'cluster namespace "{request.name}" is terminating',
            group=REGISTER_GROUP,
        )
    if not await seams.authorizer.allowed(
        request.user,
        verb="update",
        group=REGISTER_GROUP,
        resource="managedclusters",
        subresource="accept",
        name=request.name,
    ):
        raise _forbidden(
            VALIDATOR,
            request,
            "managedclusters/accept",
            f'user "{request.user.name}" cannot update the HubAcceptsClient field',
            group=REGISTER_GROUP,
        )


async def _may_label(request: Request, seams: Seams) -> None:
    """Reserved labels move clusters between sets, so each change needs a grant.

    Upstream checks ``managedclustersets/join`` for the old and the new clusterset label.
    The Override design (seed 002) adds ``managedclusters/label`` for every key under a
    reserved prefix, named ``<key>:<value>``, ``<key>:*`` or ``*`` (RBAC matches
    resourceNames exactly, so each spelling is asked for in turn). For the clusterset
    label either permission suffices.
    """
    before, after = _labels(request.old), _labels(request.obj)
    changed = sorted(
        key
        for key in before.keys() | after.keys()
        if key.startswith(RESERVED_LABEL_PREFIXES) and before.get(key) != after.get(key)
    )

    async def may(resource: str, subresource: str, name: str) -> bool:
        return await seams.authorizer.allowed(
            request.user,
            verb="create",
            group=GROUP,
            resource=resource,
            subresource=subresource,
            name=name,
        )

    for key in changed:
        for value in (before.get(key), after.get(key)):
            if value is None or (key == CLUSTER_SET_LABEL and not value):
                continue
            if key == CLUSTER_SET_LABEL and await may("managedclustersets", "join", value):
                continue
            grants = (f"{key}:{value}", f"{key}:*", "*")
            for grant in grants:
                if await may("managedclusters", "label", grant):
                    break
            else:
                raise _label_forbidden(request, key, value, grants)


def _label_forbidden(request: Request, key: str, value: str, grants: tuple[str, ...]) -> Denial:
    user = request.user.name
    quoted = [f'"{g}"' for g in grants]
    alternatives = f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    label_grant = f"create on managedclusters/label with a resourceName of {alternatives}"
    if key == CLUSTER_SET_LABEL:
        # Upstream's message first, so tools matching it still do.
        return _forbidden(
            VALIDATOR,
            value,  # upstream names the set, not the cluster
            "managedclustersets/join",
            f'user "{user}" cannot add/remove a ManagedCluster to/from ManagedClusterSet '
            f'"{value}" (it needs create on managedclustersets/join for "{value}", '
            f"or {label_grant})",
        )
    return _forbidden(
        VALIDATOR,
        request,
        "managedclusters/label",
        f'user "{user}" cannot add/change/remove label "{key}={value}": it needs {label_grant}',
    )


def _claims_kept(request: Request) -> None:
    def claim(obj: Obj | None) -> str | None:
        for item in ((obj or {}).get("status") or {}).get("clusterClaims") or []:
            if item.get("name") == ID_CLAIM:
                return str(item.get("value"))
        return None

    before, after = claim(request.old), claim(request.obj)
    if before and after and before != after:
        raise _forbidden(
            VALIDATOR,
            request,
            "managedclusters/status",
            f'managed cluster "{request.name}" is registered by the cluster with {ID_CLAIM} "{before}"; '
            f'a different cluster ({ID_CLAIM} "{after}") cannot register under the same name',
        )


# --- ManagedClusterSet (pyocm's ExclusiveLabel) ----------------------------------------


async def validate_cluster_set(request: Request, config: Config, seams: Seams) -> None:
    """The Override design's ``ExclusiveLabel`` selector needs its label, under a reserved
    prefix (only those labels are guarded by ``managedclusters/label``)."""
    assert request.obj is not None
    selector = _spec(request.obj).get("clusterSelector") or {}
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
        raise Denial(
            SET_VALIDATOR,
            status.invalid_object(
                kind="ManagedClusterSet", group=GROUP, name=request.name, errors=errors
            ),
        )


# --- ManagedClusterSetBinding ---------------------------------------------------------


async def validate_cluster_set_binding(request: Request, config: Config, seams: Seams) -> None:
    assert request.obj is not None
    cluster_set = str(_spec(request.obj).get("clusterSet") or "")
    if request.name != cluster_set:
        raise _bad_request(
            BINDING_VALIDATOR,
            "The ManagedClusterSetBinding must have the same name as the target ManagedClusterSet",
        )
    if request.operation is not Operation.CREATE:
        return  # upstream checks the bind permission on create only
    if await seams.lookup.managed_cluster(request.namespace) is not None:
        # Seed 001: a set is bound to a workspace namespace, never to the namespace of
        # a registered cluster (whose agents' RBAC lives there).
        raise _forbidden(
            BINDING_VALIDATOR,
            request,
            "managedclustersetbindings",
            f'namespace "{request.namespace}" is the cluster namespace of managed cluster '
            f'"{request.namespace}"; bind cluster sets to a workspace namespace instead',
        )
    if not await seams.authorizer.allowed(
        request.user,
        verb="create",
        group=GROUP,
        resource="managedclustersets",
        subresource="bind",
        name=cluster_set,
    ):
        raise _forbidden(
            BINDING_VALIDATOR,
            request,
            "managedclustersets/bind",
            f'user "{request.user.name}" is not allowed to bind cluster set "{cluster_set}"',
        )


# --- helpers --------------------------------------------------------------------------


def _spec(obj: Obj | None) -> Obj:
    spec = (obj or {}).get("spec")
    return spec if isinstance(spec, dict) else {}


def _labels(obj: Obj | None) -> dict[str, str]:
    labels: Any = ((obj or {}).get("metadata") or {}).get("labels") or {}
    return {str(k): str(v) for k, v in labels.items()}


def _bad_request(webhook: str, message: str) -> Denial:
    return Denial(webhook, status.bad_request(message))


def _forbidden(
    webhook: str, subject: Request | str, resource: str, reason: str, *, group: str = GROUP
) -> Denial:
    """Forbidden on ``resource`` (``plural/subresource``) named as the request's object
    or ``subject``, worded as apimachinery's NewForbidden."""
    name = subject if isinstance(subject, str) else subject.name
    return Denial(
        webhook,
        status.forbidden_error(
            message=f'{resource}.{group} "{name}" is forbidden: {reason}',
            resource=resource,
            group=group,
            name=name,
        ),
    )
