"""The ``ClusterCertificateRotated`` condition the agent writes after storing a new
certificate (upstream writes it only after the secret is saved, ocm-behaviour.md 1.4)."""

from __future__ import annotations

import logging

from cryptography import x509

from pyocm.api import kinds as ocm
from pyocm.api import models, wellknown
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.base.clock import Clock
from pyocm.kube.status import ApiError
from pyocm.registration.agent import certs
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError
from pyocm.runtime.retry import retry_on_conflict
from pyocm.runtime.status import set_condition

log = logging.getLogger(__name__)


async def report_rotation(
    api: Api, cluster: ManagedCluster, chain: list[x509.Certificate], *, clock: Clock
) -> None:
    """Set the condition on ``cluster`` (the agent's last view of it).

    A Conflict means someone wrote the cluster since that view (the hub's controllers
    write its status too): the cluster is read again and the condition set on it, as
    client-go's RetryOnConflict does, so the condition is not lost. Other failures
    are logged only: the certificate is stored, and the condition reports it as an
    event would."""
    start, end = chain[0].not_valid_before_utc, chain[0].not_valid_after_utc
    name = cluster["metadata"]["name"]
    last: ManagedCluster | None = cluster  # the first attempt costs no read

    async def attempt() -> None:
        nonlocal last
        current = (
            models.wire(last) if last is not None else await api.get(ocm.MANAGED_CLUSTER, name)
        )
        last = None
        await set_condition(
            api,
            ocm.MANAGED_CLUSTER,
            current,
            clock=clock,
            type=wellknown.CLUSTER_CERTIFICATE_ROTATED,
            status="True",
            reason=wellknown.REASON_CLIENT_CERT_UPDATED,
            message=f"client certificate rotated starting from {certs.go_time(start)} to {certs.go_time(end)}",
        )

    try:
        await retry_on_conflict(attempt, clock=clock)
    except (ApiError, ApiConnectionError) as err:
        log.warning("agent: reporting the certificate rotation on cluster %s: %s", name, err)
