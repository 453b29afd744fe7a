"""``coordination.k8s.io/v1`` Lease: leader election and cluster heartbeats.

Leader election writes the whole Lease with PUT (creating it that way too), so
Kubernetes allows create-on-update here. ``spec.strategy`` and ``spec.preferredHolder``
belong to the CoordinatedLeaderElection feature, off by default, so they are dropped as a
server with the gate off does.
"""

from __future__ import annotations

from typing import Any

from pyocm.apiserver.registry.strategy import Context, Obj, Strategy
from pyocm.kube import timefmt
from pyocm.kube.status import FieldError, bad_request, invalid

_MICRO_FIELDS = ("acquireTime", "renewTime")
_GATED_FIELDS = ("strategy", "preferredHolder")


def normalize_spec(spec: dict[str, Any]) -> None:
    """MicroTime fields with six fractional digits in UTC; bad ones are a 400."""
    for key in _MICRO_FIELDS:
        value = spec.get(key)
        if not isinstance(value, str):
            continue
        try:
            spec[key] = timefmt.normalize_micro(value)
        except ValueError as err:
            raise bad_request(
                f'Lease in version "v1" cannot be handled as a Lease: {err}'
            ) from None


def spec_errors(spec: dict[str, Any]) -> list[FieldError]:
    """``ValidateLeaseSpec``: a duration must be positive, transitions not negative."""
    errs = []
    duration = spec.get("leaseDurationSeconds")
    if isinstance(duration, int) and duration <= 0:
        errs.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if isinstance(transitions, int) and transitions < 0:
        errs.append(
            invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0")
        )
    return errs


def _spec(obj: Obj) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


class LeaseStrategy(Strategy):
    tracks_generation = False
    allow_create_on_update = True

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        spec = _spec(obj)
        for key in _GATED_FIELDS:
            spec.pop(key, None)
        normalize_spec(spec)

    def prepare_for_update(self, obj: Obj, old: Obj, ctx: Context) -> None:
        # Kept only when the stored object already uses them, as the gate-off server does.
        spec, old_spec = _spec(obj), _spec(old)
        for key in _GATED_FIELDS:
            if not old_spec.get(key):
                spec.pop(key, None)
        normalize_spec(spec)

    def validate_create(self, obj: Obj, ctx: Context) -> list[FieldError]:
        return spec_errors(_spec(obj))

    def validate_update(self, obj: Obj, old: Obj, ctx: Context) -> list[FieldError]:
        return spec_errors(_spec(obj))
