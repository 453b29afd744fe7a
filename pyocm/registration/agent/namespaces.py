"""Managed namespaces, agent side (upstream 1.9): the namespaces the hub lists in the
cluster's ``status.managedNamespaces`` exist on the managed cluster, labelled as managed
by this hub; those no longer listed keep the label, set to ``"false"``.
"""

from __future__ import annotations

import copy
import hashlib
import logging
from datetime import datetime
from typing import Any

from pyocm.api import conditions
from pyocm.kube.status import ApiError
from pyocm.registration.agent.managed import ManagedSide
from pyocm.runtime.errors import ApiConnectionError

log = logging.getLogger(__name__)
LABEL_PREFIX = "clusterset.open-cluster-management.io/"
NAMESPACE_AVAILABLE = "NamespaceAvailable"


def hub_hash(server: str) -> str:
    """Upstream's hub hash: the hex SHA-256 of the hub's URL."""
    return hashlib.sha256(server.encode()).hexdigest()


def hub_label(server: str) -> str:
    """The label marking namespaces this hub manages (the name part is at most 63 characters)."""
    return LABEL_PREFIX + hub_hash(server)[:63]


async def apply_namespaces(
    managed: ManagedSide, *, label: str, entries: list[dict[str, Any]], now: datetime
) -> list[dict[str, Any]]:
    """Make each listed namespace exist and be labelled; answer the entries with their
    ``NamespaceAvailable`` condition. The entries are plain dicts, not the typed model:
    they are the status's entries with only their ``name`` checked, and their conditions
    go through :func:`conditions.set_condition`, which takes plain conditions."""
    reported = copy.deepcopy(entries)
    for entry in reported:
        found: list[dict[str, Any]] = entry.setdefault("conditions", [])
        try:
            await managed.label_namespace(str(entry["name"]), label=label, value="true")
        except (ApiError, ApiConnectionError) as err:
            conditions.set_condition(
                found,
                type=NAMESPACE_AVAILABLE,
                status="False",
                reason="NamespaceApplyFailed",
                message=f"Failed to apply namespace: {err}",
                now=now,
            )
            continue
        conditions.set_condition(
            found,
            type=NAMESPACE_AVAILABLE,
            status="True",
            reason="NamespaceApplied",
            message="Namespace successfully applied and managed",
            now=now,
        )
    await release_namespaces(managed, label=label, keep={str(e["name"]) for e in entries})
    return reported


async def release_namespaces(managed: ManagedSide, *, label: str, keep: set[str]) -> None:
    """Mark namespaces no longer listed as unmanaged (they are kept, with the label "false")."""
    # Failures here are the managed cluster's, not the hub's: they are logged and tried
    # again at the next report, never allowed to end the agent's session.
    try:
        for name in await managed.labelled_namespaces(label):
            if name not in keep:
                await managed.label_namespace(name, label=label, value="false")
    except (ApiError, ApiConnectionError) as err:
        log.warning("agent: could not release managed namespaces: %s", err)
