"""Install (or update) CustomResourceDefinitions through an API server, as ``kubectl
apply`` would, and wait until each is Established.

The hub's server knows nothing of OCM: its CRDs reach it this way, and an embedded
managed cluster gets the ClusterClaim CRD the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from pyocm.api import conditions, crds
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api

Obj = dict[str, Any]
CLUSTER_CLAIMS = "clusterclaims.cluster.open-cluster-management.io"


class InstallError(RuntimeError):
    pass


def ocm_crds(*, only: Iterable[str] | None = None) -> list[Obj]:
    """pyocm's CRDs, or only those named (``<plural>.<group>``)."""
    wanted = set(only) if only is not None else None
    rendered = crds.render_all()
    if wanted is not None:
        missing = wanted - {crd["metadata"]["name"] for crd in rendered}
        if missing:
            raise InstallError(f"no such CRD: {', '.join(sorted(missing))}")
        rendered = [crd for crd in rendered if crd["metadata"]["name"] in wanted]
    return rendered


async def install(api: Api, definitions: list[Obj], *, timeout: float = 30.0) -> list[str]:
    """Create or update each CRD, then wait until all are Established."""
    names = [await _apply(api, crd) for crd in definitions]
    await _wait_established(api, names, timeout=timeout)
    return names


#: Conflicts to ride out per CRD: the API server writes a new CRD's status (Established)
#: right after it is created or changed, which races an update read just before.
CONFLICT_RETRIES = 5


async def _apply(api: Api, crd: Obj) -> str:
    for _ in range(CONFLICT_RETRIES):
        try:
            return await _apply_once(api, crd)
        except ApiError as err:
            if err.code != 409:
                raise
    return await _apply_once(api, crd)


async def _apply_once(api: Api, crd: Obj) -> str:
    name = str(crd["metadata"]["name"])
    try:
        current = await api.get(kinds.CRD, name)
    except ApiError as err:
        if err.code != 404:
            raise
        await api.create(kinds.CRD, crd)
        return name
    spec = _keeping_webhook_conversion(crd["spec"], current.get("spec") or {})
    if current.get("spec") != spec:
        wanted = {
            **crd,
            "spec": spec,
            "metadata": {
                **crd["metadata"],
                "resourceVersion": current["metadata"]["resourceVersion"],
            },
        }
        await api.update(kinds.CRD, wanted)
    return name


def _keeping_webhook_conversion(spec: Obj, current: Obj) -> Obj:
    """``spec`` with the cluster's conversion when that calls a webhook.

    pyocm's definitions say ``None`` (its own API server converts the add-on kinds
    itself); on a kube-apiserver a deployment (pyocm's manifests, upstream's operator)
    points the add-on CRDs at a conversion webhook, and updating the CRDs must not
    take that away: v1beta1 readers of v1alpha1-stored add-ons would get them unconverted.
    """
    conversion = current.get("conversion") or {}
    if conversion.get("strategy") != "Webhook":
        return spec
    return {**spec, "conversion": conversion}


async def _wait_established(api: Api, names: list[str], *, timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    pending = set(names)
    while pending:
        for name in sorted(pending):
            crd = await api.get(kinds.CRD, name)
            if conditions.is_true((crd.get("status") or {}).get("conditions"), "Established"):
                pending.discard(name)
        if pending:
            if loop.time() > deadline:
                raise InstallError(
                    f"CRDs not established after {timeout:.0f}s: {', '.join(sorted(pending))}"
                )
            await asyncio.sleep(0.05)
