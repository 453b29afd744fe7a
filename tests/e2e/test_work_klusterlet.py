"""Running the work agent: inside the klusterlet (``pyocm join``, ``pyocm agent``) with
registration's credential, restarted when that credential rotates, and alone as
``pyocm work-agent`` with upstream's flags."""

from __future__ import annotations

import asyncio
import base64
import os
import signal
from pathlib import Path

import pytest
import yaml

from pyocm.api import kinds as ocm
from pyocm.klusterlet.crds import applied_work_crd
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.registration.agent.managed import AGENT_NAMESPACE
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.agents import accept, bootstrap_kubeconfig, embedded, running_agent
from tests.cli import Running, pyocm
from tests.support import eventually
from tests.workagents import configmap, manifest_work, running_klusterlet, work_with


@pytest.fixture(scope="session")
def hub(ocm_hub: HubProcess) -> HubProcess:
    return ocm_hub


async def test_a_rotated_credential_restarts_the_work_agent_with_it(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster = f"c-{unique}"
    managed = await embedded(tmp_path, cluster)
    try:
        async with running_klusterlet(api, hub, managed, cluster) as klusterlet:
            await api.create(ocm.MANIFEST_WORK, manifest_work("before", cluster, configmap("a")))
            await eventually(lambda: work_with(api, cluster, "before", Applied="True"))
            assert klusterlet.work_starts == 1
            first = klusterlet.work_agent
            assert first is not None
            assert first.agent_id == klusterlet.registration.subject.agent  # type: ignore[union-attr]

            klusterlet.registration.rotate_now()

            async def restarted() -> bool:
                return klusterlet.work_starts == 2 and klusterlet.work_agent is not None

            await eventually(restarted)
            assert klusterlet.work_agent is not first
            assert klusterlet.work_agent.hub_hash == first.hub_hash  # type: ignore[union-attr]
            await api.create(ocm.MANIFEST_WORK, manifest_work("after", cluster, configmap("b")))
            await eventually(lambda: work_with(api, cluster, "after", Applied="True"))
    finally:
        await managed.stop()


async def test_registration_alone_when_the_work_agent_is_off(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster = f"c-{unique}"
    managed = await embedded(tmp_path, cluster)
    try:
        async with running_klusterlet(api, hub, managed, cluster, work=None) as klusterlet:
            assert klusterlet.work_starts == 0 and klusterlet.work_agent is None
            with pytest.raises(ApiError) as absent:
                await managed.api.get(kinds.CRD, applied_work_crd()["metadata"]["name"])
            assert absent.value.code == 404
    finally:
        await managed.stop()


@pytest.fixture
def isolated(tmp_path: Path) -> dict[str, str]:
    return {"XDG_DATA_HOME": str(tmp_path / "xdg"), "KUBECONFIG": ""}


async def test_pyocm_join_runs_the_work_agent(
    hub: HubProcess, api: Api, tmp_path: Path, isolated: dict[str, str], unique: str
) -> None:
    cluster = f"cli-{unique}"
    token = pyocm("get", "token", "--kubeconfig", str(hub.kubeconfig), env=isolated)
    assert token.returncode == 0, token.stderr
    command = next(
        line.strip() for line in token.stdout.splitlines() if line.strip().startswith("pyocm join")
    ).split()[2:]
    command = [part.replace("<cluster_name>", cluster) for part in command]
    data_dir = tmp_path / "managed"
    joined = Running("join", *command, "--data-dir", str(data_dir), env=isolated)
    try:
        joined.wait_for(f"{cluster}: waiting for the hub admin to accept")
        await accept(api, cluster)
        joined.wait_for(f"{cluster}: available")
        await api.create(
            ocm.MANIFEST_WORK, manifest_work("w", cluster, configmap("from-hub", a="1"))
        )
        await eventually(lambda: work_with(api, cluster, "w", Applied="True", Available="True"))
        async with Api.from_kubeconfig(data_dir / "admin.kubeconfig") as spoke:
            found = await spoke.get(kinds.CONFIGMAP, "from-hub", namespace="default")
            assert found["data"] == {"a": "1"}
    finally:
        code = joined.stop()
    assert code == 0, "\n".join(joined.lines[-20:])


async def test_pyocm_work_agent_alone(
    hub: HubProcess, api: Api, tmp_path: Path, unique: str
) -> None:
    cluster = f"c-{unique}"
    managed = await embedded(tmp_path, cluster)
    try:
        # Registration in process, only to get the cluster its hub credential.
        async with running_agent(api, hub, managed, cluster):
            stored = await managed.api.get(
                kinds.SECRET, "hub-kubeconfig-secret", namespace=AGENT_NAMESPACE
            )
            hub_kubeconfig = tmp_path / "hub.kubeconfig"
            hub_kubeconfig.write_bytes(base64.b64decode(stored["data"]["kubeconfig"]))
            os.chmod(hub_kubeconfig, 0o600)
            agent = Running(
                "work-agent",
                "--spoke-cluster-name",
                cluster,
                "--hub-kubeconfig",
                str(hub_kubeconfig),
                "--spoke-kubeconfig",
                str(managed.kubeconfig),
                "--status-sync-interval",
                "1s",
            )
            try:
                # In a thread: the embedded cluster it talks to is served by this loop.
                await asyncio.to_thread(agent.wait_for, f"work agent for cluster {cluster}")
                work = manifest_work("w", cluster, configmap("alone", a="1"))
                await api.create(ocm.MANIFEST_WORK, work)
                await eventually(
                    lambda: work_with(api, cluster, "w", Applied="True", Available="True")
                )
                found = await managed.api.get(kinds.CONFIGMAP, "alone", namespace="default")
                assert found["data"] == {"a": "1"}
            finally:
                code = await asyncio.to_thread(agent.stop, signal.SIGTERM)
            assert code == 0, "\n".join(agent.lines[-20:])
    finally:
        await managed.stop()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--spoke-cluster-name", "Not_Valid"], "error: metadata.name format is not correct"),
        (["--spoke-cluster-name", ""], "error: cluster name is empty"),
        (
            ["--spoke-cluster-name", "c1", "--workload-agent-workers", "0"],
            "error: workload-agent-workers must be >= 1, got 0",
        ),
        (
            ["--spoke-cluster-name", "c1", "--status-sync-interval", "soon"],
            "error: --status-sync-interval: invalid duration 'soon'",
        ),
    ],
)
def test_pyocm_work_agent_refuses_bad_flags(tmp_path: Path, flags: list[str], message: str) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    done = pyocm(
        "work-agent",
        "--hub-kubeconfig",
        str(kubeconfig),
        "--spoke-kubeconfig",
        str(kubeconfig),
        *flags,
    )
    assert done.returncode == 2
    assert done.stderr.startswith(message), done.stderr


async def test_pyocm_agent_runs_the_work_agent_with_its_flags(
    hub: HubProcess, api: Api, tmp_path: Path, isolated: dict[str, str], unique: str
) -> None:
    cluster = f"c-{unique}"
    managed = await embedded(tmp_path, cluster)
    bootstrap = tmp_path / "bootstrap.kubeconfig"
    bootstrap.write_text(yaml.safe_dump(await bootstrap_kubeconfig(api, hub)))
    agent = Running(
        "agent",
        "--cluster-name",
        cluster,
        "--bootstrap-kubeconfig",
        str(bootstrap),
        "--spoke-kubeconfig",
        str(managed.kubeconfig),
        "--status-sync-interval",
        "1s",
        "--workload-agent-workers",
        "2",
        env=isolated,
    )
    try:
        await accept(api, cluster)
        await asyncio.to_thread(agent.wait_for, f"work agent for cluster {cluster}")
        await api.create(ocm.MANIFEST_WORK, manifest_work("w", cluster, configmap("by-agent")))
        await eventually(lambda: work_with(api, cluster, "w", Applied="True", Available="True"))
        assert await managed.api.get(kinds.CONFIGMAP, "by-agent", namespace="default")
    finally:
        code = await asyncio.to_thread(agent.stop, signal.SIGTERM)
        await managed.stop()
    assert code == 0, "\n".join(agent.lines[-20:])
