"""What every fresh cluster has: system namespaces, the default RBAC policy, and the
``kube-public/cluster-info`` ConfigMap that joining agents read to find the hub.

Run at every start. Missing objects are created; default roles and bindings annotated
``rbac.authorization.kubernetes.io/autoupdate: "true"`` are put back to their defaults
(as kube-apiserver reconciles them); everything else is left as the admin changed it.

API server replicas on one etcd may seed at the same moment: an object another replica
created first counts as found (then reconciled), and an update that lost a race to
another replica's is tried again on what that one stored, as kube's reconciler retries
on conflict.
"""

from __future__ import annotations

import base64
import copy
from typing import Any

from pyocm.apiserver.authentication.user import MASTERS, UserInfo
from pyocm.apiserver.authorization import bootstrap_policy
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.strategy import Context
from pyocm.apiserver.state import ServerState
from pyocm.kube import status
from pyocm.pki import kubeconfig

SYSTEM = UserInfo(name="system:apiserver", groups=(MASTERS,))
NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
Obj = dict[str, Any]


async def seed(state: ServerState, *, server_url: str) -> None:
    for name in NAMESPACES:
        await ensure(state, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    for obj in bootstrap_policy.bootstrap_objects():
        await ensure(
            state,
            obj,
            reconcile=obj.get("metadata", {}).get("annotations", {}).get(AUTOUPDATE) == "true",
        )
    await ensure(state, cluster_info(state, server_url=server_url), reconcile=True)


def cluster_info(state: ServerState, *, server_url: str) -> Obj:
    """kubeadm's ``cluster-info``: a kubeconfig with the hub URL and CA but no user."""
    ca = base64.b64encode(state.ca.cert_pem).decode()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "", "cluster": {"server": server_url, "certificate-authority-data": ca}}
        ],
        "contexts": [],
        "current-context": "",
        "preferences": {},
        "users": [],
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cluster-info", "namespace": "kube-public"},
        "data": {"kubeconfig": kubeconfig.render_kubeconfig(config)},
    }


def _info(state: ServerState, obj: Obj) -> ResourceInfo:
    api_version = str(obj["apiVersion"])
    group, _, version = api_version.rpartition("/")
    for info in state.catalog.by_kind(group, str(obj["kind"])):
        if info.version == version:
            return info
    raise LookupError(f"no resource serves {api_version} {obj['kind']}")


#: Writes lost to other replicas' before one is given up (each loss means another
#: replica wrote the same object in between: a few are plenty).
ATTEMPTS = 5


async def ensure(state: ServerState, obj: Obj, *, reconcile: bool = False) -> None:
    for attempt in range(ATTEMPTS):
        try:
            await _ensure(state, obj, reconcile=reconcile)
            return
        except status.ApiError as err:
            if err.reason not in ("AlreadyExists", "Conflict") or attempt == ATTEMPTS - 1:
                raise


async def _ensure(state: ServerState, obj: Obj, *, reconcile: bool) -> None:
    info = _info(state, obj)
    meta = obj["metadata"]
    namespace = str(meta.get("namespace") or "")
    ctx = Context(user=SYSTEM, namespace=namespace)
    try:
        current = await state.store.get(info, namespace=namespace, name=str(meta["name"]))
    except status.ApiError as err:
        if err.reason != "NotFound":
            raise
        await state.store.create(info, copy.deepcopy(obj), ctx)
        return
    if not reconcile:
        return
    wanted = copy.deepcopy(current)
    for key, value in obj.items():
        if key != "metadata":
            wanted[key] = copy.deepcopy(value)
    for key in ("labels", "annotations"):
        if meta.get(key):
            wanted["metadata"].setdefault(key, {}).update(meta[key])
    if wanted != current:
        await state.store.update(info, name=str(meta["name"]), obj=wanted, ctx=ctx)
