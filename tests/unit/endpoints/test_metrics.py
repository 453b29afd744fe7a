"""Metric labels as kube-apiserver reports them, and the text format Prometheus reads."""

from __future__ import annotations

import pytest

from pyocm.apiserver.metrics import LABELS, RequestMetrics, labels_for


def labels(**given: object) -> dict[str, str]:
    request = {"group": "", "version": "v1", "resource": "pods", "subresource": ""}
    request |= {"namespace": "", "named": False}
    request |= given
    return dict(zip(LABELS, labels_for(**request), strict=True))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("verb", "namespace", "named", "reported", "scope"),
    [
        ("get", "ns", True, "GET", "resource"),
        ("list", "ns", False, "LIST", "namespace"),
        ("list", "", False, "LIST", "cluster"),
        ("watch", "ns", False, "WATCH", "namespace"),
        ("create", "ns", False, "POST", "resource"),
        ("update", "", True, "PUT", "resource"),
        ("patch", "ns", True, "PATCH", "resource"),
        ("delete", "ns", True, "DELETE", "resource"),
        ("deletecollection", "ns", False, "DELETE", "namespace"),
        ("deletecollection", "", False, "DELETE", "cluster"),
    ],
)
def test_verbs_and_scopes(
    verb: str, namespace: str, named: bool, reported: str, scope: str
) -> None:
    found = labels(verb=verb, namespace=namespace, named=named)
    assert (found["verb"], found["scope"]) == (reported, scope)
    assert found["component"] == "apiserver" and found["dry_run"] == ""


def test_apply_and_dry_run() -> None:
    apply = labels(
        verb="patch", named=True, content_type="application/apply-patch+yaml; charset=utf-8"
    )
    assert apply["verb"] == "APPLY"
    assert (
        labels(verb="patch", named=True, content_type="application/merge-patch+json")["verb"]
        == "PATCH"
    )
    assert labels(verb="create", dry_run=True)["dry_run"] == "All"


def test_render_is_cumulative_with_go_bounds_and_escaped_labels() -> None:
    metrics = RequestMetrics()
    put = labels_for(
        verb="update", group="coordination.k8s.io", version="v1", resource="leases",
        subresource="", namespace="ns", named=True,
    )  # fmt: skip
    for seconds in (0.005, 0.004, 0.03, 100.0):  # 5 ms sits in the le="0.005" bucket
        metrics.observe(put, code=200, seconds=seconds)
    odd = labels_for(
        verb="get", group="x", version="v1", resource='we"ird\\', subresource="", namespace="",
        named=True,
    )  # fmt: skip
    metrics.observe(odd, code=404, seconds=0.001)
    text = metrics.render()
    lines = text.splitlines()
    series = 'component="apiserver",dry_run="",group="coordination.k8s.io",resource="leases"'
    series += ',scope="resource",subresource="",verb="PUT",version="v1"'
    assert f'apiserver_request_total{{code="200",{series}}} 4' in lines
    assert f'apiserver_request_duration_seconds_bucket{{{series},le="0.005"}} 2' in lines
    assert f'apiserver_request_duration_seconds_bucket{{{series},le="0.05"}} 3' in lines
    assert f'apiserver_request_duration_seconds_bucket{{{series},le="60"}} 3' in lines
    assert f'apiserver_request_duration_seconds_bucket{{{series},le="+Inf"}} 4' in lines
    assert f"apiserver_request_duration_seconds_count{{{series}}} 4" in lines
    assert f"apiserver_request_duration_seconds_sum{{{series}}} 100.039" in lines
    assert 'resource="we\\"ird\\\\"' in text
    assert "# TYPE apiserver_request_duration_seconds histogram" in lines
