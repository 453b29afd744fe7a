"""``kubectl get`` columns for the built-in kinds, as kube-apiserver's printers show them.

Events read either shape (core ``involvedObject``/``message``, events.k8s.io
``regarding``/``note``), since both groups serve the same objects."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pyocm.apiserver.registry.printing import (
    AGE,
    CREATED_AT,
    NAME,
    Column,
    age,
    human_duration,
)

Obj = dict[str, Any]


def _spec(obj: Obj) -> Obj:
    return obj.get("spec") or {}


def _status(obj: Obj) -> Obj:
    return obj.get("status") or {}


def _column(name: str, kind: str, cell: Any, *, priority: int = 0, description: str = "") -> Column:
    return Column(name, kind, cell, priority=priority, description=description)


NAMESPACE = (NAME, _column("Status", "string", lambda o, _: _status(o).get("phase", "")), AGE)
CONFIGMAP = (
    NAME,
    _column(
        "Data",
        "integer",
        lambda o, _: len(o.get("data") or {}) + len(o.get("binaryData") or {}),
    ),
    AGE,
)
SECRET = (
    NAME,
    _column("Type", "string", lambda o, _: o.get("type", "")),
    _column("Data", "integer", lambda o, _: len(o.get("data") or {})),
    AGE,
)
SERVICEACCOUNT = (
    NAME,
    _column("Secrets", "integer", lambda o, _: len(o.get("secrets") or [])),
    AGE,
)


def _node_status(obj: Obj, _: datetime) -> str:
    ready = next(
        (c for c in _status(obj).get("conditions") or [] if c.get("type") == "Ready"), None
    )
    state = "Unknown" if ready is None else "Ready" if ready.get("status") == "True" else "NotReady"
    return f"{state},SchedulingDisabled" if _spec(obj).get("unschedulable") else state


def _node_roles(obj: Obj, _: datetime) -> str:
    prefix = "node-role.kubernetes.io/"
    labels = (obj.get("metadata") or {}).get("labels") or {}
    roles = sorted(key[len(prefix) :] for key in labels if key.startswith(prefix))
    return ",".join(r for r in roles if r) or "<none>"


NODE = (
    NAME,
    _column("Status", "string", _node_status),
    _column("Roles", "string", _node_roles),
    AGE,
    _column(
        "Version",
        "string",
        lambda o, _: (_status(o).get("nodeInfo") or {}).get("kubeletVersion", ""),
    ),
)
LEASE = (NAME, _column("Holder", "string", lambda o, _: _spec(o).get("holderIdentity", "")), AGE)


def _csr_duration(obj: Obj, _: datetime) -> str:
    seconds = _spec(obj).get("expirationSeconds")
    return human_duration(seconds) if isinstance(seconds, int) else "<none>"


def _csr_condition(obj: Obj, _: datetime) -> str:
    found = [c.get("type", "") for c in _status(obj).get("conditions") or []]
    if _status(obj).get("certificate"):
        found.append("Issued")
    return ",".join(found) or "Pending"


CSR = (
    NAME,
    AGE,
    _column("SignerName", "string", lambda o, _: _spec(o).get("signerName", "")),
    _column("Requestor", "string", lambda o, _: _spec(o).get("username", "")),
    _column("RequestedDuration", "string", _csr_duration),
    _column("Condition", "string", _csr_condition),
)


def _subjects(kind: str) -> Any:
    def cell(obj: Obj, _: datetime) -> str:
        names = []
        for subject in obj.get("subjects") or []:
            if subject.get("kind") != kind:
                continue
            name = subject.get("name", "")
            if kind == "ServiceAccount":
                name = f"{subject.get('namespace', '')}/{name}"
            names.append(name)
        return ", ".join(names)

    return cell


ROLE = (NAME, CREATED_AT)
BINDING = (
    NAME,
    _column(
        "Role",
        "string",
        lambda o, _: (
            f"{(o.get('roleRef') or {}).get('kind', '')}/{(o.get('roleRef') or {}).get('name', '')}"
        ),
    ),
    AGE,
    _column("Users", "string", _subjects("User"), priority=1),
    _column("Groups", "string", _subjects("Group"), priority=1),
    _column("ServiceAccounts", "string", _subjects("ServiceAccount"), priority=1),
)


def _event_object(obj: Obj, _: datetime) -> str:
    involved = obj.get("involvedObject") or obj.get("regarding") or {}
    return f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}"


def _last_seen(obj: Obj, now: datetime) -> str | None:
    series = obj.get("series") or {}
    when = (
        series.get("lastObservedTime")
        or obj.get("lastTimestamp")
        or obj.get("deprecatedLastTimestamp")
        or obj.get("eventTime")
        or (obj.get("metadata") or {}).get("creationTimestamp")
    )
    return age(when, now)


EVENT = (
    _column("Last Seen", "string", _last_seen),
    _column("Type", "string", lambda o, _: o.get("type", "")),
    _column("Reason", "string", lambda o, _: o.get("reason", "")),
    _column("Object", "string", _event_object),
    _column("Message", "string", lambda o, _: o.get("message") or o.get("note") or ""),
)
CRD = (NAME, CREATED_AT)
