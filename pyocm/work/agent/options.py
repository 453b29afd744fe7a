"""The work agent's options: upstream's ``WorkloadAgentOptions`` and the agent flags it
shares with registration, with upstream's names and defaults (pkg/work/spoke/options.go).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from pyocm.kube import names

#: Upstream's ``EvictionGracePeriodBound``: a grace period this long or longer turns
#: eviction of unmanaged AppliedManifestWorks off.
EVICTION_GRACE_PERIOD_BOUND = 100 * 365 * 24 * 3600.0


def hub_hash(server: str) -> str:
    """Upstream's ``HubHash``: the sha256 hex of the hub API server URL, as the hub
    kubeconfig names it (so an agent knows the AppliedManifestWorks of this hub)."""
    return hashlib.sha256(server.encode()).hexdigest()


class OptionsError(ValueError):
    """An option the agent cannot run with (the message names the flag)."""


@dataclass(frozen=True, kw_only=True)
class WorkAgentOptions:
    """What a :class:`~pyocm.work.agent.agent.WorkAgent` runs with.

    ``hub_hash`` defaults to :func:`hub_hash` of the hub client's server, ``agent_id``
    to the hub hash (as upstream's agent does when ``--agent-id`` is empty)."""

    #: ``--spoke-cluster-name``; the klusterlet fills it (and the agent id) in from
    #: what registration settled on.
    cluster_name: str = ""
    agent_id: str = ""
    hub_hash: str = ""
    #: ``--status-sync-interval``: how often each work's resources are read for status.
    status_sync_interval: float = 10.0
    #: ``--appliedmanifestwork-eviction-grace-period``: how long an AppliedManifestWork
    #: whose hub work is gone is kept before it is deleted.
    appliedmanifestwork_eviction_grace_period: float = 3600.0
    #: ``--max-json-raw-length``: the longest JsonRaw status feedback value.
    max_json_raw_length: int = 1024
    #: ``--workload-agent-workers``: workers of each per-work controller.
    workers: int = 10
    #: Upstream's ``ResyncInterval`` (a package variable, no flag): each work is applied
    #: again this long (plus up to half as much jitter) after its last success, which
    #: is what puts back resources changed or deleted on the managed cluster.
    resync_interval: float = 240.0

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise OptionsError(f"workload-agent-workers must be >= 1, got {self.workers}")
        for flag, value in (
            ("--status-sync-interval", self.status_sync_interval),
            (
                "--appliedmanifestwork-eviction-grace-period",
                self.appliedmanifestwork_eviction_grace_period,
            ),
            ("resync interval", self.resync_interval),
        ):
            if value <= 0:
                raise OptionsError(f"{flag} must be positive, got {value}")
        if self.max_json_raw_length < 1:
            raise OptionsError(
                f"--max-json-raw-length must be positive, got {self.max_json_raw_length}"
            )

    def check_cluster(self) -> None:
        """Raise :class:`OptionsError` unless ``cluster_name`` is a valid cluster name
        (upstream's words)."""
        if not self.cluster_name:
            raise OptionsError("cluster name is empty")
        problems = names.is_dns1123_label(self.cluster_name)
        if problems:
            raise OptionsError(f"metadata.name format is not correct: {','.join(problems)}")

    @property
    def eviction_disabled(self) -> bool:
        return self.appliedmanifestwork_eviction_grace_period >= EVICTION_GRACE_PERIOD_BOUND
