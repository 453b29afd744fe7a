"""``--metrics-bind-address``: ``pyocm controller`` and ``pyocm agent`` serve their own
work-queue and reconcile metrics on plain HTTP, as controller-runtime's managers do."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pyocm.base import metrics
from pyocm.testing import HubProcess
from tests.cli import Running, pyocm
from tests.e2e.test_controller_metrics import of
from tests.e2e.test_metrics import samples

SERVING = r"serving metrics on (http://\S+/metrics)"


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """An API server without controllers, of this module's own: the processes under
    test bring theirs (and must not touch the session's hubs)."""
    process = HubProcess(tmp_path_factory.mktemp("bare"), extra_args=["--no-controllers"])
    process.start()
    yield process
    assert process.stop() == 0, process.log()[-4000:]


@pytest.fixture
def isolated(tmp_path: Path) -> dict[str, str]:
    return {"XDG_DATA_HOME": str(tmp_path / "xdg"), "KUBECONFIG": ""}


def scrape(url: str) -> tuple[str, list[tuple[str, dict[str, str], float]]]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        assert answer.status == 200
        return answer.headers["Content-Type"], samples(answer.read().decode())


def probe(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_the_controller_serves_its_reconcile_metrics(
    bare: HubProcess, isolated: dict[str, str]
) -> None:
    controller = Running(
        "controller",
        "--kubeconfig",
        str(bare.kubeconfig),
        "--metrics-bind-address",
        "127.0.0.1:0",
        env=isolated,
    )
    try:
        url = re.search(SERVING, controller.wait_for(SERVING))[1]  # type: ignore[index]
        cluster = {
            "apiVersion": "cluster.open-cluster-management.io/v1",
            "kind": "ManagedCluster",
            "metadata": {"name": "scraped"},
            "spec": {"hubAcceptsClient": True},
        }
        created = subprocess.run(
            ["kubectl", "--kubeconfig", str(bare.kubeconfig), "create", "-f", "-"],
            input=json.dumps(cluster),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert created.returncode == 0, created.stderr
        deadline = time.monotonic() + 30
        while True:
            content_type, found = scrape(url)
            name = "managedcluster"
            # A first reconcile may meet a conflict (an error, retried): wait for success.
            if of(found, "controller_runtime_reconcile_total", controller=name, result="success"):
                break
            assert time.monotonic() < deadline, f"no reconcile of {name} succeeded: {found}"
            time.sleep(0.2)
        assert content_type == metrics.CONTENT_TYPE, "the text format"
        assert of(found, "controller_runtime_reconcile_time_seconds_count", controller=name) >= 1
        assert of(found, "workqueue_adds_total", name=name) >= 1
        assert of(found, "workqueue_depth", name="csr-approval") == 0
        # Health probes on the same listener: alive, and ready once its caches synced.
        base = url.removesuffix("/metrics")
        assert probe(f"{base}/healthz") == (200, "ok")
        assert probe(f"{base}/readyz?verbose") == (
            200,
            "[+]ping ok\n[+]informer-sync ok\nreadyz check passed\n",
        )
    finally:
        code = controller.stop(signal.SIGTERM)
    assert code == 0, "\n".join(controller.lines[-20:])
    with pytest.raises(OSError):
        scrape(url)  # the listener closed with the process's work


def test_the_agent_serves_its_metrics(
    bare: HubProcess, isolated: dict[str, str], tmp_path: Path
) -> None:
    # The bare API server is both hub and managed cluster; with no controller to approve
    # its CSR the agent waits, serving its metrics meanwhile.
    agent = Running(
        "agent",
        "--cluster-name",
        "metered",
        "--bootstrap-kubeconfig",
        str(bare.kubeconfig),
        "--spoke-kubeconfig",
        str(bare.kubeconfig),
        "--metrics-bind-address",
        "127.0.0.1:0",
        env=isolated,
    )
    try:
        url = re.search(SERVING, agent.wait_for(SERVING))[1]  # type: ignore[index]
        content_type, _ = scrape(url)
        assert content_type == metrics.CONTENT_TYPE, "the text format"
        assert probe(url.replace("/metrics", "/healthz")) == (200, "ok")
        assert probe(url.replace("/metrics", "/readyz")) == (200, "ok")
    finally:
        code = agent.stop(signal.SIGTERM)
    assert code == 0, "\n".join(agent.lines[-20:])


@pytest.mark.parametrize("command", ["controller", "agent"])
def test_a_bad_address_is_refused_before_anything_starts(command: str, tmp_path: Path) -> None:
    args = ["--spoke-kubeconfig", str(tmp_path / "none")] if command == "agent" else []
    refused = pyocm(command, *args, "--metrics-bind-address", "8080")
    assert refused.returncode == 2
    assert "--metrics-bind-address" in refused.stderr and "HOST:PORT" in refused.stderr
