"""``pyocm get clusters``' rows: the WORKLOADS column tells simulated workloads from real ones."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pyocm.cli.clusters import COLUMNS, cluster_rows

NOW = datetime(2025, 3, 1, tzinfo=UTC)


def cluster(name: str, claims: Any) -> Any:
    status: dict[str, Any] = {"version": {"kubernetes": "v1.30.0"}}
    if claims is not None:
        status["clusterClaims"] = claims
    return {
        "metadata": {"name": name, "creationTimestamp": "2025-03-01T00:00:00Z"},
        "spec": {"hubAcceptsClient": True},
        "status": status,
    }


def test_workloads_are_simulated_real_or_not_yet_known() -> None:
    rows = cluster_rows(
        [
            cluster(
                "embedded",
                [
                    {"name": "id.k8s.io", "value": "u1"},
                    {"name": "workloads.pyocm.io", "value": "simulated"},
                ],
            ),
            cluster("kind", [{"name": "id.k8s.io", "value": "u2"}]),
            cluster("pending", None),
            cluster("odd", "not a list"),
        ],
        now=NOW,
    )
    by_name = {row[0]: dict(zip(COLUMNS, row, strict=True)) for row in rows}
    assert by_name["embedded"]["WORKLOADS"] == "simulated"
    assert by_name["embedded"]["CLAIMS"] == "2"
    assert by_name["kind"]["WORKLOADS"] == "real"
    assert by_name["pending"]["WORKLOADS"] == by_name["odd"]["WORKLOADS"] == ""
