"""The helloworld add-on on ``pyocm up`` as a person uses it (issue 21's done-when): enabled
with ``pyocm addon enable``, its agent run from the Deployment its work puts on the
embedded cluster (pyocm's own add-on agents are the one thing run there), Available
from its Lease, a hub ConfigMap copied with its issued credential, and all of it gone on
``pyocm addon disable``."""

from __future__ import annotations

from pathlib import Path

from tests.cli import pyocm, running_up
from tests.e2e.test_work_up import get_json, kubectl, until

INSTALL_NS = "open-cluster-management-agent-addon"


def test_helloworld_on_pyocm_up(tmp_path: Path) -> None:
    with running_up(tmp_path, clusters=1) as fleet:
        hub, cluster1 = fleet.hub, fleet.clusters["cluster1"]
        k = ["--kubeconfig", str(hub)]
        done = pyocm("addon", "enable", "--names", "helloworld", "--clusters", "cluster1", *k)
        assert done.returncode == 0, done.stderr

        def available() -> bool:
            mca = get_json(hub, "managedclusteraddon", "helloworld", "-n", "cluster1")
            found = {c["type"]: c for c in (mca or {}).get("status", {}).get("conditions", [])}
            state = found.get("Available", {})
            return (state.get("status"), state.get("reason")) == (
                "True",
                "ManagedClusterAddOnLeaseUpdated",
            )

        until(available, timeout=90)
        made = kubectl(hub, "create", "configmap", "hello", "-n", "cluster1", "--from-literal=a=b")
        assert made.returncode == 0, made.stderr

        def copied() -> bool:
            found = get_json(cluster1, "configmap", "hello", "-n", INSTALL_NS)
            return found is not None and found["data"] == {"a": "b"}

        until(copied)
        done = pyocm("addon", "disable", "--names", "helloworld", "--clusters", "cluster1", *k)
        assert done.returncode == 0, done.stderr

        def removed() -> bool:
            return (
                get_json(hub, "managedclusteraddon", "helloworld", "-n", "cluster1") is None
                and get_json(cluster1, "deployment", "helloworld-agent", "-n", INSTALL_NS) is None
                and get_json(cluster1, "secret", "helloworld-hub-kubeconfig", "-n", INSTALL_NS)
                is None
            )

        until(removed)
