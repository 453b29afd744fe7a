"""``pyocm get -w`` whose watch is too old to resume (410 Gone): it lists again and prints
only what changed, then goes on watching. A hub of its own forgets changes after a second
(--compaction-interval) and ends each watch within two (--min-request-timeout); the CLI
is paused (SIGSTOP) while its watch ends and the changes are made and forgotten, so its
next watch must start from a compacted resourceVersion."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Iterator

import pytest

from pyocm.testing import HubProcess
from tests.cli import Running
from tests.conftest import hub_process
from tests.e2e.test_cli_watch import kubectl, managed_cluster, rows_of


@pytest.fixture(scope="module")
def forgetful(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    yield from hub_process(
        tmp_path_factory,
        "forgetful-hub",
        ["--no-controllers", "--compaction-interval", "1s", "--min-request-timeout", "1"],
    )


def cluster_lists(hub: HubProcess) -> int:
    """How many LISTs of ManagedClusters the hub has answered (its /metrics)."""
    done = subprocess.run(
        ["kubectl", "--kubeconfig", str(hub.kubeconfig), "get", "--raw", "/metrics"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return sum(
        int(line.rsplit(" ", 1)[1])
        for line in done.stdout.splitlines()
        if line.startswith("apiserver_request_total{")
        and 'verb="LIST"' in line
        and 'resource="managedclusters"' in line
        and re.search(r'code="2\d\d"', line)
    )


def test_a_watch_too_old_to_resume_lists_again_and_prints_only_changes(
    forgetful: HubProcess,
) -> None:
    hub = forgetful
    for name in ("keep", "edit", "gone"):
        kubectl(hub, "apply", "-f", "-", manifest=managed_cluster(name))
    watch = Running("get", "clusters", "-w", "--kubeconfig", str(hub.kubeconfig), split=True)
    try:
        for name in ("keep", "edit", "gone"):
            watch.wait_for(rf"^\s*{name}\s+true\s")
        lists = cluster_lists(hub)
        watch.process.send_signal(signal.SIGSTOP)
        time.sleep(2.5)  # the paused CLI's watch ends (the server gives it under 2 s)
        kubectl(hub, "apply", "-f", "-", manifest=managed_cluster("new"))
        kubectl(hub, "patch", "managedcluster", "edit", "--type=merge",
                "-p", '{"spec":{"hubAcceptsClient":false}}')  # fmt: skip
        kubectl(hub, "delete", "managedcluster", "gone")
        time.sleep(1.5)
        # A write after a second: the changes above leave the history with it.
        kubectl(hub, "create", "configmap", "tick", "-n", "default")
        watch.process.send_signal(signal.SIGCONT)
        watch.wait_for(r"^\s*new\s+true\s")
        watch.wait_for(r"^\s*edit\s+false\s")
        watch.wait_for(r"^\s*gone\s+true\s", count=2)
        assert cluster_lists(hub) == lists + 1  # the changes came from a second list
        kubectl(hub, "patch", "managedcluster", "new", "--type=merge",
                "-p", '{"spec":{"hubAcceptsClient":false}}')  # fmt: skip
        watch.wait_for(r"^\s*new\s+false\s")  # and it watches on
    finally:
        watch.process.send_signal(signal.SIGCONT)
        code = watch.stop(signal.SIGINT)
    assert code == 0, "\n".join(watch.lines)
    assert not watch.err, watch.err
    # Each change once, and nothing unchanged printed again.
    assert len(rows_of(watch, "keep")) == 1, watch.out
    assert [line.split()[1] for line in rows_of(watch, "edit")] == ["true", "false"]
    assert [line.split()[1] for line in rows_of(watch, "gone")] == ["true", "true"]
    assert [line.split()[1] for line in rows_of(watch, "new")] == ["true", "false"]
