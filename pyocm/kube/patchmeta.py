"""Strategic-merge-patch metadata of built-in kinds, read from Kubernetes' published schemas.

Kubernetes' OpenAPI definitions carry each list's Go struct tags as
``x-kubernetes-patch-strategy`` (``merge``, ``retainKeys`` or both) and
``x-kubernetes-patch-merge-key``. :func:`kind_schema` turns one kind's definition into the
:class:`~pyocm.kube.smp.Schema` tree the strategic merge patch and server-side apply use,
so the workload kinds' many merge keys (containers and volumes by name, container ports by
containerPort, service ports by port, env by name, ...) come from the source instead of a
hand-kept table. Only subtrees that carry some metadata are kept: everything else merges
as a map or is replaced as a list, the untagged default.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pyocm.kube import kinds
from pyocm.kube.kubedefs import definitions
from pyocm.kube.smp import OPAQUE, Schema

#: The built-in kinds whose patch metadata is read from the schemas (the kinds served
#: before them keep their hand-written tables in :mod:`pyocm.kube.smp`).
FROM_SCHEMAS = frozenset(
    (k.api_version, k.kind)
    for k in (
        kinds.POD,
        kinds.SERVICE,
        kinds.ENDPOINTS,
        kinds.PERSISTENT_VOLUME_CLAIM,
        kinds.DEPLOYMENT,
        kinds.REPLICA_SET,
        kinds.STATEFUL_SET,
        kinds.DAEMON_SET,
        kinds.CONTROLLER_REVISION,
        kinds.JOB,
        kinds.CRON_JOB,
        kinds.POD_DISRUPTION_BUDGET,
        kinds.NETWORK_POLICY,
        kinds.INGRESS,
    )
) | {("autoscaling/v2", "HorizontalPodAutoscaler")}


def kind_schema(api_version: str, kind: str) -> Schema | None:
    """The patch schema of a kind in :data:`FROM_SCHEMAS`, else ``None``."""
    if (api_version, kind) not in FROM_SCHEMAS:
        return None
    group, _, version = api_version.rpartition("/")
    return _kind_schema(group, version, kind)


@cache
def _kind_schema(group: str, version: str, kind: str) -> Schema | None:
    for name, definition in definitions().items():
        for gvk in definition.get("x-kubernetes-group-version-kind") or ():
            if (gvk.get("group"), gvk.get("version"), gvk.get("kind")) == (group, version, kind):
                return _definition(name, ())
    return None


def _definition(name: str, expanding: tuple[str, ...]) -> Schema:
    if name in expanding or name not in definitions():
        return OPAQUE  # a recursive type (JSONSchemaProps) carries no list metadata here
    return _node(definitions()[name], (*expanding, name))


def _node(node: dict[str, Any], expanding: tuple[str, ...]) -> Schema:
    ref = node.get("$ref")
    if isinstance(ref, str):
        return _definition(ref.rsplit("/", 1)[-1], expanding)
    fields: dict[str, Schema] = {}
    for key, value in (node.get("properties") or {}).items():
        child = _node(value, expanding)
        if child != OPAQUE:
            fields[key] = child
    elements: Schema | None = None
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            found = _node(node[key], expanding)
            elements = found if found != OPAQUE else None
    strategy = str(node.get("x-kubernetes-patch-strategy") or "").split(",")
    return Schema(
        fields=fields,
        elements=elements,
        merge="merge" in strategy,
        merge_key=str(node.get("x-kubernetes-patch-merge-key") or ""),
        retain_keys="retainKeys" in strategy,
    )
