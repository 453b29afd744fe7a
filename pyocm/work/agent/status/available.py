"""A manifest's ``Available`` condition: whether its object exists on the managed cluster.

As upstream's ``objectreader.Get``: availability is existence, for every kind (upstream
does not look at a Deployment's readiness here; condition rules do that). A resource
meta without resource, version or name cannot be read at all.
"""

from __future__ import annotations

from typing import Any

from pyocm.api.models.work_v1 import (
    ManifestWorkStatusResourceStatusManifestResourceMeta as ManifestResourceMeta,
)
from pyocm.kube.status import ApiError
from pyocm.work.agent.status.merge import NewCondition

AVAILABLE = "Available"


def resource_meta_complete(meta: ManifestResourceMeta) -> bool:
    """Whether the object ``meta`` names can be read (resource, version and name set)."""
    return bool(meta.get("resource") and meta.get("version") and meta.get("name"))


def is_not_found(error: BaseException | None) -> bool:
    """Whether ``error`` says the object does not exist (a 404 from the cluster)."""
    return isinstance(error, ApiError) and error.code == 404


def available_condition(
    meta: ManifestResourceMeta, *, obj: dict[str, Any] | None, error: BaseException | None
) -> NewCondition:
    """The ``Available`` condition for the object ``meta`` names, read as ``obj``.

    ``error`` is why it could not be read: a 404 :class:`ApiError` (or no object and no
    error) means absent, False ``ResourceNotAvailable``; any other error is Unknown
    ``FetchingResourceFailed`` with the error's text; an object read is True
    ``ResourceAvailable``. An incomplete ``meta`` is Unknown ``IncompleteResourceMeta``
    whatever was read.
    """
    if not resource_meta_complete(meta):
        return _available("Unknown", "IncompleteResourceMeta", "Resource meta is incomplete")
    if error is not None and not is_not_found(error):
        return _available("Unknown", "FetchingResourceFailed", f"Failed to fetch resource: {error}")
    if obj is None or error is not None:
        return _available("False", "ResourceNotAvailable", "Resource is not available")
    return _available("True", "ResourceAvailable", "Resource is available")


def _available(status: str, reason: str, message: str) -> NewCondition:
    return {"type": AVAILABLE, "status": status, "reason": reason, "message": message}
