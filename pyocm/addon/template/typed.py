"""What upstream's trip through Go's typed Deployment and DaemonSet does to a workload.

Upstream decorates a Deployment or DaemonSet by converting it to ``appsv1.Deployment``
(``appsv1.DaemonSet``) and back to a map (``DefaultUnstructuredConverter``). The way back
writes Go's zero values where the struct has a non-pointer struct or a field without
``omitempty``, and leaves out empty ``omitempty`` fields, so the work carries
``creationTimestamp: null`` in both metadata, ``strategy: {}`` (``updateStrategy: {}``),
``status: {}`` (a DaemonSet's four counters at 0), ``resources: {}`` in each container,
and quantities in their canonical form (``0.5`` becomes ``500m``). Those are reproduced
here for the fields along the way; a field kube's struct does not know is kept (Go
would drop it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyocm.kube.quantity import QuantityError, parse_quantity

Obj = dict[str, Any]
_RESOURCES = {"Deployment": "deployments", "DaemonSet": "daemonsets"}
_STRATEGY = {"deployments": "strategy", "daemonsets": "updateStrategy"}
_DAEMONSET_STATUS = (
    "currentNumberScheduled",
    "desiredNumberScheduled",
    "numberMisscheduled",
    "numberReady",
)
_EMPTY: tuple[object, ...] = (None, "", {}, [])
#: Non-pointer booleans (``omitempty``: ``false`` is left out).
_POD_BOOLS = frozenset({"hostNetwork", "hostPID", "hostIPC"})
_CONTAINER_BOOLS = frozenset({"stdin", "stdinOnce", "tty"})


def workload_resource(obj: Mapping[str, Any]) -> str | None:
    """``deployments`` or ``daemonsets`` for an ``apps`` Deployment or DaemonSet (any
    version, as upstream checks group and kind only) whose shape the typed struct
    accepts, else ``None`` (upstream leaves such an object undecorated)."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or api_version.count("/") != 1:
        return None
    if api_version.split("/")[0] != "apps" or kind not in _RESOURCES:
        return None
    return _RESOURCES[kind] if _convertible(obj) else None


def _convertible(obj: Mapping[str, Any]) -> bool:
    spec = obj.get("spec")
    if not isinstance(spec, (dict, type(None))):
        return False
    template = (spec or {}).get("template")
    if not isinstance(template, (dict, type(None))):
        return False
    pod = (template or {}).get("spec")
    if not isinstance(pod, (dict, type(None))):
        return False
    found = (pod or {}).get("containers")
    if not isinstance(found, (list, type(None))):
        return False
    return all(
        isinstance(c, dict) and isinstance(c.get("env"), (list, type(None))) for c in found or []
    )


def normalize(obj: Obj, resource: str) -> None:
    """``obj`` (a decorated workload) as Go's converter writes it back."""
    obj["metadata"] = _object_meta(obj.get("metadata"))
    spec = obj.get("spec") or {}
    spec["selector"] = spec.get("selector")
    template = spec.get("template") or {}
    template["metadata"] = _object_meta(template.get("metadata"))
    template["spec"] = _pod_spec(template.get("spec") or {})
    spec["template"] = template
    spec[_STRATEGY[resource]] = spec.get(_STRATEGY[resource]) or {}
    obj["spec"] = spec
    status = obj.get("status") or {}
    if resource == "daemonsets":
        status = {**dict.fromkeys(_DAEMONSET_STATUS, 0), **status}
    obj["status"] = status


def _object_meta(meta: Any) -> Obj:
    meta = dict(meta or {})
    kept = {k: v for k, v in meta.items() if k == "creationTimestamp" or v not in (*_EMPTY, 0)}
    kept.setdefault("creationTimestamp", None)
    return kept


def _pod_spec(spec: Obj) -> Obj:
    out = {
        k: v for k, v in spec.items() if v not in _EMPTY and not (k in _POD_BOOLS and v is False)
    }
    out["containers"] = (
        [_container(c) for c in spec["containers"]] if spec.get("containers") is not None else None
    )
    if out.get("initContainers"):
        out["initContainers"] = [_container(c) for c in out["initContainers"]]
    if out.get("tolerations"):
        out["tolerations"] = [_drop_empty(t) for t in out["tolerations"]]
    return out


def _container(container: Obj) -> Obj:
    out = {
        k: v
        for k, v in container.items()
        if v not in _EMPTY and not (k in _CONTAINER_BOOLS and v is False)
    }
    out["name"] = container.get("name") or ""
    out["resources"] = resources(container.get("resources") or {})
    if out.get("env"):
        out["env"] = [_drop_empty(e) for e in out["env"]]
    return out


def resources(value: Mapping[str, Any]) -> Obj:
    """A ``ResourceRequirements`` as Go writes it: quantities canonical, empty lists and
    maps left out."""
    out: Obj = {}
    for key in ("limits", "requests"):
        if value.get(key):
            out[key] = {name: _quantity(q) for name, q in value[key].items()}
    if value.get("claims"):
        out["claims"] = [_drop_empty(c) for c in value["claims"]]
    return out


def _quantity(value: Any) -> Any:
    try:
        return str(parse_quantity(str(value)))
    except QuantityError:
        return value


def _drop_empty(item: Any) -> Any:
    return {k: v for k, v in item.items() if v not in _EMPTY} if isinstance(item, dict) else item


def sort_keys(value: Any) -> Any:
    """``value`` with every map's keys in sorted order, as Go's ``json.Marshal`` writes
    a map, so the work serialises as upstream's does."""
    if isinstance(value, dict):
        return {k: sort_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [sort_keys(v) for v in value]
    return value
