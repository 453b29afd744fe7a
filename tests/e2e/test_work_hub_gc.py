"""A completed ManifestWork with ``ttlSecondsAfterFinished`` is deleted by the hub, as
upstream's work hub manager does; one without it, or not complete, stays."""

from __future__ import annotations

import pytest

from pyocm.api import kinds as ocm
from pyocm.kube import kinds, timefmt
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.support import eventually


@pytest.fixture
def hub(ocm_hub: HubProcess) -> HubProcess:
    """The shared ``api`` fixture, on a hub that runs its controllers."""
    return ocm_hub


async def completed_work(api: Api, namespace: str, name: str, *, ttl: int | None) -> None:
    spec: dict[str, object] = {
        "workload": {
            "manifests": [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": "default"},
                }
            ]
        }
    }
    if ttl is not None:
        spec["deleteOption"] = {"ttlSecondsAfterFinished": ttl}
    made = await api.create(
        ocm.MANIFEST_WORK, {"metadata": {"name": name, "namespace": namespace}, "spec": spec}
    )
    # What the agent writes when the work's condition rules say it is complete.
    made["status"] = {
        "conditions": [
            {
                "type": "Complete",
                "status": "True",
                "reason": "ConditionRulesAggregated",
                "message": "",
                "lastTransitionTime": timefmt.now_rfc3339(),
                "observedGeneration": 1,
            }
        ]
    }
    await api.update(ocm.MANIFEST_WORK, made, subresource="status")


async def test_completed_works_go_after_their_ttl(api: Api, unique: str) -> None:
    await api.create(kinds.NAMESPACE, {"metadata": {"name": unique}})
    await completed_work(api, unique, "at-once", ttl=0)
    await completed_work(api, unique, "after-2s", ttl=2)
    await completed_work(api, unique, "kept", ttl=None)

    async def gone(name: str) -> bool:
        try:
            await api.get(ocm.MANIFEST_WORK, name, namespace=unique)
        except ApiError as err:
            return err.code == 404
        return False

    await eventually(lambda: gone("at-once"), timeout=10)
    await eventually(lambda: gone("after-2s"), timeout=15)
    assert not await gone("kept")
