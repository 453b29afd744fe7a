"""Kubernetes Events from controllers, as ``events.k8s.io/v1`` (what client-go's new recorder writes).

Events are best effort: a failure to record one is logged and never fails a reconcile.
"""

from __future__ import annotations

import logging
import secrets
from typing import Any, Literal

from pyocm.base.clock import Clock, RealClock
from pyocm.kube import kinds, timefmt
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError

Obj = dict[str, Any]
log = logging.getLogger(__name__)


class Recorder:
    def __init__(
        self, api: Api, *, controller: str, instance: str, clock: Clock | None = None
    ) -> None:
        self.api = api
        self.controller = controller
        self.instance = instance
        self._clock = clock or RealClock()

    async def event(
        self,
        regarding: Obj,
        *,
        reason: str,
        note: str,
        type: Literal["Normal", "Warning"] = "Normal",
        action: str = "Reconcile",
    ) -> None:
        """Record that ``reason`` happened to ``regarding`` (in its namespace, else ``default``)."""
        meta = regarding.get("metadata") or {}
        # An Event lives in its object's namespace; events about cluster-scoped objects
        # go to "default", as client-go's recorder puts them (the API refuses others).
        where = meta.get("namespace") or "default"
        body = {
            "metadata": {"name": f"{meta.get('name')}.{secrets.token_hex(8)}", "namespace": where},
            "eventTime": timefmt.format_micro(self._clock.now()),
            "reportingController": self.controller,
            "reportingInstance": self.instance,
            "action": action,
            "reason": reason,
            "note": note[:1024],
            "type": type,
            "regarding": _reference(regarding),
        }
        try:
            await self.api.create(kinds.EVENT, body)
        except (ApiError, ApiConnectionError) as err:
            log.info("could not record event %s on %s: %s", reason, meta.get("name"), err)


def _reference(obj: Obj) -> Obj:
    meta = obj.get("metadata") or {}
    reference = {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "name": meta.get("name"),
        "namespace": meta.get("namespace"),
        "uid": meta.get("uid"),
        "resourceVersion": meta.get("resourceVersion"),
    }
    return {key: value for key, value in reference.items() if value}
