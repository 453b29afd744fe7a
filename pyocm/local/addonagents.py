"""pyocm's own add-on agents, run on an embedded managed cluster from their Deployments.

An embedded cluster has no kubelet: the Deployments its work agent applies never run
(their status is simulated, as :mod:`pyocm.local.workloads` says). One kind of container
is run for real: a pyocm add-on agent, ``pyocm addon agent <addon> ...`` (the helloworld
add-on and its test copies), which the add-on's work deploys. For each such Deployment
this runner runs the agent in this process, with the cluster and namespace its
arguments name and the hub credential its Secret volume names (read from the cluster as
a kubelet mounts it, and followed as it rotates), until the Deployment goes, is scaled
to zero replicas, or stops asking for it. One agent at most runs per Deployment, whatever
its replicas. Every other container is left alone.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from pyocm.addon.builtin import is_helloworld
from pyocm.addon.helloworld.agent import AgentOptions, run_with_issued_credential
from pyocm.kube import kinds
from pyocm.runtime.client import Api
from pyocm.runtime.informer import Change, Informer

log = logging.getLogger(__name__)
COMMAND = ("pyocm", "addon", "agent")


@dataclass(frozen=True)
class AgentSpec:
    """What a Deployment asks to run: the agent's options and its credential's Secret."""

    options: AgentOptions
    secret: str


def agent_spec(deployment: Mapping[str, Any]) -> AgentSpec | None:
    """The pyocm add-on agent a Deployment's first such container runs, or None (also
    when the Deployment is scaled to zero, as a kubelet would then run no pod)."""
    spec = deployment.get("spec") or {}
    if spec.get("replicas", 1) == 0:
        return None
    pod = spec.get("template", {}).get("spec") or {}
    for container in pod.get("containers") or []:
        args = [str(a) for a in (container.get("command") or []) + (container.get("args") or [])]
        if tuple(args[:3]) != COMMAND or len(args) < 4 or not is_helloworld(args[3]):
            continue
        flags = _flags(args[4:])
        cluster, namespace = flags.get("--cluster-name"), flags.get("--addon-namespace")
        secret = _secret_at(pod, container, flags.get("--hub-kubeconfig", ""))
        if cluster and namespace and secret:
            return AgentSpec(
                AgentOptions(cluster=cluster, namespace=namespace, addon=args[3]), secret
            )
    return None


def _flags(args: Sequence[str]) -> dict[str, str]:
    found = {}
    for arg in args:
        key, sep, value = arg.partition("=")
        if sep:
            found[key] = value
    return found


def _secret_at(pod: Mapping[str, Any], container: Mapping[str, Any], path: str) -> str | None:
    """The Secret the volume mounted at ``path``'s directory comes from."""
    directory = str(PurePosixPath(path).parent)
    mounts = {m.get("name"): m.get("mountPath") for m in container.get("volumeMounts") or []}
    for volume in pod.get("volumes") or []:
        if mounts.get(volume.get("name")) == directory and volume.get("secret"):
            return str(volume["secret"].get("secretName") or "") or None
    return None


class AddonAgentRunner:
    """Runs the pyocm add-on agents the Deployments on ``cluster`` ask for."""

    def __init__(self, cluster: Api) -> None:
        self.cluster = cluster
        self.deployments = Informer(cluster, kinds.DEPLOYMENT)
        self.deployments.add_handler(self._changed)
        self.running: dict[str, tuple[AgentSpec, asyncio.Task[None]]] = {}

    async def run(self) -> None:
        try:
            await self.deployments.run()
        finally:
            for _spec, task in self.running.values():
                task.cancel()
            await asyncio.gather(*(t for _s, t in self.running.values()), return_exceptions=True)

    def _changed(self, change: Change) -> None:
        key = f"{change.obj['metadata'].get('namespace')}/{change.obj['metadata']['name']}"
        wanted = None if change.new is None else agent_spec(change.new)
        current = self.running.get(key)
        if current is not None and current[0] == wanted:
            return
        if current is not None:
            current[1].cancel()
            del self.running[key]
        if wanted is not None:
            log.info("running add-on agent %s for Deployment %s", wanted.options.addon, key)
            task = asyncio.create_task(
                run_with_issued_credential(self.cluster, wanted.options, secret=wanted.secret),
                name=f"add-on agent {key}",
            )
            self.running[key] = (wanted, task)
