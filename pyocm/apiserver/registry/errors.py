"""The one place where storage errors become API errors."""

from __future__ import annotations

from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.storage import errors as storage_errors
from pyocm.kube import status


def translate(err: storage_errors.StorageError, info: ResourceInfo, name: str) -> status.ApiError:
    if isinstance(err, storage_errors.KeyExists):
        return status.already_exists(resource=info.plural, group=info.group, name=name)
    if isinstance(err, storage_errors.KeyNotFound):
        return status.not_found(resource=info.plural, group=info.group, name=name)
    if isinstance(err, storage_errors.Conflict):
        return status.conflict(resource=info.plural, group=info.group, name=name)
    if isinstance(err, storage_errors.Compacted):
        return status.gone(str(err))
    if isinstance(err, storage_errors.FutureRevision):
        return status.timeout(
            str(err),
            causes=[{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        )
    return status.ApiError(
        code=503, reason="ServiceUnavailable", message=f"storage unavailable: {err}"
    )
