"""``pyocm get addon`` rows: an add-on healthy from workload status on a cluster whose
workloads are simulated says so, never passing the made-up status off as real."""

from __future__ import annotations

from typing import Any

from pyocm.cli.addons import addon_rows


def mca(cluster: str, mode: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "a", "namespace": cluster},
        "status": {
            "namespace": "ns",
            "healthCheck": {"mode": mode},
            "conditions": [{"type": "Available", "status": "True"}],
        },
    }


def test_workload_health_on_simulated_clusters_is_marked() -> None:
    rows = addon_rows(
        [mca("sim", "Customized"), mca("real", "Customized"), mca("sim2", "Lease")],
        {"sim", "sim2"},
    )
    assert [row[3] for row in rows] == ["True (simulated)", "True", "True"]
