"""Request counts and latencies for ``/metrics``, named and labelled as kube-apiserver's.

Two series, the ones dashboards and SLO alerts read first: ``apiserver_request_total``
and the ``apiserver_request_duration_seconds`` histogram, with kube-apiserver's buckets.
A WATCH is timed too, as upstream: its duration is the stream's, which is why
dashboards leave WATCH out of latency queries. The time is the handler's, from the
parsed request to the answer. Only resources the server serves are recorded, so a
client cannot grow the label sets by asking for made-up paths.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

#: kube-apiserver's buckets for ``apiserver_request_duration_seconds``.
BUCKETS = (
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0,
    8.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
)  # fmt: skip
#: The ``le`` labels, as Go's Prometheus client prints them: ``1``, not ``1.0``.
_BOUNDS = (*(f"{bound:g}" for bound in BUCKETS), "+Inf")
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LABELS = ("verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component")
COMPONENT = "apiserver"

#: The verb a metric reports for each request verb (``CleanVerb``/``CanonicalVerb``).
_VERBS = {
    "get": "GET",
    "list": "LIST",
    "watch": "WATCH",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    # Upstream reports the HTTP method: a collection's DELETE is a DELETE.
    "deletecollection": "DELETE",
}
APPLY_PATCH = "application/apply-patch+yaml"

Labels = tuple[str, ...]


class _Histogram:
    __slots__ = ("counts", "sum")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)  # the last one is +Inf
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(BUCKETS, seconds)] += 1
        self.sum += seconds


def labels_for(
    *,
    verb: str,
    group: str,
    version: str,
    resource: str,
    subresource: str,
    namespace: str,
    named: bool,
    dry_run: bool = False,
    content_type: str = "",
) -> Labels:
    """The label values of one resource request, in :data:`LABELS` order.

    ``named``: the path names an object. The scope comes from the path, as upstream's
    comes from the route: a list pinned to one name by a field selector is still a
    LIST of its namespace (or of the cluster), judged by dashboards as one."""
    if named or verb == "create":
        scope = "resource"
    elif namespace:
        scope = "namespace"
    else:
        scope = "cluster"
    reported = _VERBS.get(verb, "other")
    if reported == "PATCH" and content_type.split(";")[0].strip() == APPLY_PATCH:
        reported = "APPLY"
    return (
        reported,
        "All" if dry_run else "",
        group,
        version,
        resource,
        subresource,
        scope,
        COMPONENT,
    )


class RequestMetrics:
    def __init__(self) -> None:
        self._totals: dict[tuple[Labels, str], int] = {}
        self._durations: dict[Labels, _Histogram] = {}

    def observe(self, labels: Labels, *, code: int, seconds: float) -> None:
        """Count and time one answered request."""
        key = (labels, str(code))
        self._totals[key] = self._totals.get(key, 0) + 1
        histogram = self._durations.get(labels)
        if histogram is None:
            histogram = self._durations[labels] = _Histogram()
        histogram.observe(seconds)

    def render(self) -> str:
        """The Prometheus text exposition (format 0.0.4)."""
        return "".join(self._lines())

    def _lines(self) -> Iterator[str]:
        yield (
            "# HELP apiserver_request_total Counter of apiserver requests broken out for"
            " each verb, dry run value, group, version, resource, scope, component, and"
            " HTTP response code.\n"
        )
        yield "# TYPE apiserver_request_total counter\n"
        for (labels, code), count in sorted(self._totals.items()):
            yield f"apiserver_request_total{{{_render(labels, code=code)}}} {count}\n"
        yield (
            "# HELP apiserver_request_duration_seconds Response latency distribution in"
            " seconds for each verb, dry run value, group, version, resource, subresource,"
            " scope and component.\n"
        )
        yield "# TYPE apiserver_request_duration_seconds histogram\n"
        for labels, histogram in sorted(self._durations.items()):
            rendered = _render(labels)
            cumulative = 0
            for bound, count in zip(_BOUNDS, histogram.counts, strict=True):
                cumulative += count
                yield (
                    f'apiserver_request_duration_seconds_bucket{{{rendered},le="{bound}"}}'
                    f" {cumulative}\n"
                )
            yield f"apiserver_request_duration_seconds_sum{{{rendered}}} {histogram.sum!r}\n"
            yield f"apiserver_request_duration_seconds_count{{{rendered}}} {cumulative}\n"


def _render(labels: Labels, *, code: str = "") -> str:
    pairs = list(zip(LABELS, labels, strict=True))
    if code:
        pairs.append(("code", code))
    return ",".join(f'{name}="{_escape(value)}"' for name, value in sorted(pairs))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
