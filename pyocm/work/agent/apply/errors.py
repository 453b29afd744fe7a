"""The apply layer's own failures, each worded as upstream's work agent words it.

A failure the managed cluster answers (invalid, forbidden, conflict...) stays the
:class:`~pyocm.kube.status.ApiError` with the cluster's message. The caller makes every
failure the manifest's ``Applied`` False condition, ``Failed to apply manifest: <str(err)>``,
except :class:`IgnoreFieldError`, which upstream reports with its own reason and prefix.
"""

from __future__ import annotations

from typing import Final

from pyocm.kube.status import ApiError

#: The manifest condition reason upstream gives an :class:`IgnoreFieldError`.
REASON_SSA_IGNORE_FIELD_ERROR: Final = "AppliedManifestSSAIgnoreFieldError"
#: How long upstream waits before asking again after an executor was refused.
EXECUTOR_REQUEUE_SECONDS: Final = 60.0


class ApplyError(Exception):
    """A manifest that cannot be applied, for a reason found on the agent's side."""


class ExecutorDenied(ApplyError):
    """Upstream's ``NotAllowedError``: the work's executor may not apply this manifest.

    Upstream does not count it as a failed sync (no error backoff): the work is looked at
    again after :attr:`requeue_after` seconds. The text ends with Go's duration, as
    upstream's does: ``..., will try again in 1m0s``.
    """

    def __init__(self, reason: str, *, requeue_after: float = EXECUTOR_REQUEUE_SECONDS) -> None:
        super().__init__(f"{reason}, will try again in {go_duration(requeue_after)}")
        self.requeue_after = requeue_after


class ServerSideApplyConflict(ApplyError):
    """Server-side apply met fields another manager owns (the cluster's 409).

    Upstream neither retries it nor backs off: only a spec change (or ``force``) can
    resolve it. It deliberately is no ApiError, so a caller retrying 409s on stale
    resourceVersions does not retry this one. The text is the cluster's message.
    """

    def __init__(self, error: ApiError) -> None:
        super().__init__(error.message)
        self.error = error


class IgnoreFieldError(ApplyError):
    """An ``ignoreFields`` entry that cannot be processed (a bad JSON pointer or jq path).

    Upstream reports it with reason :data:`REASON_SSA_IGNORE_FIELD_ERROR` and the message
    ``Failed to process ignoreFields: <str(err)>``.
    """

    reason: Final = REASON_SSA_IGNORE_FIELD_ERROR


def go_duration(seconds: float) -> str:
    """``time.Duration.String()`` for whole seconds: ``1m0s``, ``30s``, ``1h0m0s``."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"
