"""RBAC authorization, evaluated exactly as Kubernetes' RBAC authorizer evaluates it.

Pure logic over the JSON dicts of ``rbac.authorization.k8s.io/v1``; no I/O. The map:

- :mod:`.attributes` — :class:`Attributes`, what a request asks, and the 403 text for it.
- :mod:`.rules` — :class:`PolicyRule`: does a rule match a request, does it cover another.
- :mod:`.index` — :class:`RbacIndex`, roles and bindings kept from watch events, bindings
  filed by subject so a decision only visits the bindings naming the caller.
- :mod:`.authorizer` — :func:`authorize` (allow/deny with upstream's reason text) and
  :func:`rules_review` for SelfSubjectRulesReview.
- :mod:`.escalation` — the RBAC write guard: :func:`check_role_write` and
  :func:`check_binding_write` (escalate/bind verbs, or hold what you grant).
- :mod:`.aggregation` — :func:`aggregate`, the rules of aggregated ClusterRoles.
- :mod:`.bootstrap_policy` — :func:`bootstrap_objects`, the default roles and bindings.

A server wires them as: feed every RBAC watch event to ``RbacIndex.upsert/delete``; call
``authorize`` in the request filter and answer ``attrs.forbidden(decision.reason)`` when it
is denied; call the ``check_*_write`` guards when RBAC objects are created or updated; run
``aggregate_changes`` when ClusterRoles change and write the results back.
"""

from __future__ import annotations

from pyocm.apiserver.authorization.aggregation import aggregate, aggregate_changes
from pyocm.apiserver.authorization.attributes import Attributes
from pyocm.apiserver.authorization.authorizer import (
    Decision,
    authorize,
    rules_review,
    rules_review_status,
)
from pyocm.apiserver.authorization.bootstrap_policy import bootstrap_objects
from pyocm.apiserver.authorization.escalation import (
    can_bind,
    can_escalate,
    check_binding_write,
    check_role_write,
    confirm_no_escalation,
)
from pyocm.apiserver.authorization.index import BindingMatch, RbacIndex
from pyocm.apiserver.authorization.rules import PolicyRule

__all__ = [
    "Attributes",
    "BindingMatch",
    "Decision",
    "PolicyRule",
    "RbacIndex",
    "aggregate",
    "aggregate_changes",
    "authorize",
    "bootstrap_objects",
    "can_bind",
    "can_escalate",
    "check_binding_write",
    "check_role_write",
    "confirm_no_escalation",
    "rules_review",
    "rules_review_status",
]
