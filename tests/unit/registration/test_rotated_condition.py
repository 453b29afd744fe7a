"""The ClusterCertificateRotated condition survives a concurrent write to the cluster."""

from __future__ import annotations

import asyncio
import copy
from datetime import timedelta
from typing import Any

from pyocm.api import conditions, wellknown
from pyocm.base.clock import FakeClock
from pyocm.kube.status import ApiError
from pyocm.pki.ca import CertificateAuthority
from pyocm.registration.agent import certs
from pyocm.registration.agent.rotated import report_rotation

Obj = dict[str, Any]


class Hub:
    """One ManagedCluster with resourceVersion preconditions, as the API server keeps them."""

    def __init__(self, cluster: Obj) -> None:
        self.cluster = cluster

    def write_elsewhere(self) -> None:
        """Another writer (the hub's lease controller, say) updates the status."""
        version = int(self.cluster["metadata"]["resourceVersion"]) + 1
        self.cluster["metadata"]["resourceVersion"] = str(version)

    async def get(self, kind: object, name: str, **_: Any) -> Obj:
        return copy.deepcopy(self.cluster)

    async def patch(self, kind: object, name: str, patch: Obj, **_: Any) -> Obj:
        expected = patch["metadata"]["resourceVersion"]
        if expected != self.cluster["metadata"]["resourceVersion"]:
            raise ApiError(code=409, reason="Conflict", message="the object has been modified")
        self.cluster["status"] = {**self.cluster.get("status", {}), **patch["status"]}
        self.write_elsewhere()
        return copy.deepcopy(self.cluster)


async def test_a_conflict_rereads_the_cluster_and_the_condition_is_written() -> None:
    hub = Hub({"metadata": {"name": "c1", "resourceVersion": "7"}, "status": {"conditions": []}})
    seen = copy.deepcopy(hub.cluster)  # the agent's view, about to go stale
    hub.write_elsewhere()
    clock = FakeClock()
    ca = CertificateAuthority.create("hub", valid_for=timedelta(days=1))
    subject = certs.Subject(cluster="c1", agent="abcde")
    pem, _ = ca.issue_client(
        common_name=subject.common_name,
        organizations=subject.organizations,
        valid_for=timedelta(hours=1),
    )
    writing = asyncio.create_task(
        report_rotation(hub, seen, certs.load_chain(pem), clock=clock)  # type: ignore[arg-type]
    )
    for _ in range(5):  # virtual time for the pauses between attempts
        await clock.settle()
        clock.advance(1.0)
    assert writing.done()
    await writing
    found = conditions.find(
        hub.cluster["status"]["conditions"], wellknown.CLUSTER_CERTIFICATE_ROTATED
    )
    assert found is not None and found["status"] == "True"
    assert found["reason"] == wellknown.REASON_CLIENT_CERT_UPDATED
