"""``certificates.k8s.io/v1`` CertificateSigningRequest: request, approval and issuance.

Three endpoints write a CSR and each may change one part of it, as Kubernetes'
``pkg/registry/certificates/certificates/strategy.go`` arranges:

- the main resource changes metadata only (spec and status are kept);
- ``/approval`` changes ``status.conditions`` (this is where Approved and Denied appear);
- ``/status`` changes the rest of the status: ``certificate``, once, and conditions such
  as Failed, but the Approved and Denied conditions stay as stored.

On create the requester's identity replaces whatever the client put in the spec, since
approvers trust ``spec.username`` and ``spec.groups``. The rules themselves are in
:mod:`pyocm.apiserver.registry.builtin.csr_validation`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from pyocm.apiserver.registry.builtin import bytefields
from pyocm.apiserver.registry.builtin import csr_validation as rules
from pyocm.apiserver.registry.strategy import STATUS, Context, FieldGetter, Obj, Strategy
from pyocm.kube import names, timefmt
from pyocm.kube.status import FieldError, bad_request

KIND = rules.KIND
APPROVAL = rules.APPROVAL


def set_requester(obj: Obj, ctx: Context) -> None:
    """Replace the spec's identity fields with the authenticated caller's."""
    spec = rules.spec_of(obj)
    obj["spec"] = spec
    for key in ("username", "uid", "groups", "extra"):
        spec.pop(key, None)
    user = ctx.user
    if user.name:
        spec["username"] = user.name
    if user.uid:
        spec["uid"] = user.uid
    if user.groups:
        spec["groups"] = list(user.groups)
    if user.extra:
        spec["extra"] = {k: list(v) for k, v in user.extra.items()}


def _normalize_conditions(obj: Obj) -> None:
    for condition in rules.conditions_of(obj):
        for key in ("lastUpdateTime", "lastTransitionTime"):
            value = condition.get(key)
            if isinstance(value, str):
                try:
                    condition[key] = timefmt.normalize_time(value)
                except ValueError as err:
                    raise bad_request(
                        f'{KIND} in version "v1" cannot be handled as a {KIND}: {err}'
                    ) from None


def stamp_conditions(obj: Obj, old: Obj) -> None:
    """``populateConditionTimestamps``: a missing ``lastUpdateTime`` is now; a missing
    ``lastTransitionTime`` is kept from a stored condition of the same type and status."""
    now = timefmt.now_rfc3339()
    for condition in rules.conditions_of(obj):
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if not condition.get("lastTransitionTime"):
            stored = next(iter(rules.of_type(old, condition.get("type") or "")), None)
            same = stored is not None and stored.get("status") == condition.get("status")
            condition["lastTransitionTime"] = (
                stored.get("lastTransitionTime")
                if same and stored and stored.get("lastTransitionTime")
                else now
            )


def _keep_approval_conditions(obj: Obj, old: Obj) -> None:
    """``/status`` cannot touch Approved or Denied: stored instances overwrite the new
    ones in place when their number is unchanged (a changed number fails validation)."""
    conditions = rules.conditions_of(obj)
    for kind in (rules.APPROVED, rules.DENIED):
        new_at = [i for i, c in enumerate(conditions) if c.get("type") == kind]
        stored = rules.of_type(old, kind)
        if len(new_at) == len(stored):
            for index, condition in zip(new_at, stored, strict=True):
                conditions[index] = copy.deepcopy(condition)
    if conditions:
        obj["status"]["conditions"] = conditions


class CertificateSigningRequestStrategy(Strategy):
    subresources = (APPROVAL, STATUS)
    tracks_generation = False

    def name_validator(self, name: str) -> list[str]:
        return names.is_path_segment_name(name)

    def field_getters(self) -> Mapping[str, FieldGetter]:
        return {"spec.signerName": lambda o: str(rules.spec_of(o).get("signerName") or "")}

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        bytefields.canonicalize(rules.spec_of(obj), "request", kind=KIND)
        set_requester(obj, ctx)
        # Be explicit: nobody creates a pre-approved request.
        obj["status"] = {}

    def prepare_for_update(self, obj: Obj, old: Obj, ctx: Context) -> None:
        obj["spec"] = copy.deepcopy(old.get("spec") or {})
        stored_status = copy.deepcopy(old.get("status") or {})
        if ctx.subresource == APPROVAL:
            new_status = obj.get("status") or {}
            if "conditions" in new_status:
                stored_status["conditions"] = new_status["conditions"]
            else:
                stored_status.pop("conditions", None)
            obj["status"] = stored_status
        elif ctx.subresource == STATUS:
            obj["status"] = obj.get("status") if isinstance(obj.get("status"), dict) else {}
            bytefields.canonicalize(obj["status"], "certificate", kind=KIND)
            _keep_approval_conditions(obj, old)
        else:
            obj["status"] = stored_status
            return
        _normalize_conditions(obj)
        stamp_conditions(obj, old)

    def validate_create(self, obj: Obj, ctx: Context) -> list[FieldError]:
        return rules.csr_errors(obj, rules.Options())

    def validate_update(self, obj: Obj, old: Obj, ctx: Context) -> list[FieldError]:
        return rules.update_errors(
            obj, old, rules.options_for(obj, old, subresource=ctx.subresource)
        )
