"""What the fault tests watch a hub through, each in a thread of its own so a fault
never stalls the test: a writer acknowledging a ConfigMap write every 50 ms, a sampler
of every ManagedCluster's Available condition, and the request counters of each
replica's /metrics. All of them go through the replicas' one shared address."""

from __future__ import annotations

import abc
import http.client
import itertools
import json
import re
import ssl
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pyocm.api import wellknown

Obj = dict[str, Any]
#: Seconds a request may take before the probe counts it failed and reconnects: longer
#: than any election, so a slow answer is measured as a gap, not turned into an error.
REQUEST_TIMEOUT = 30.0
#: What a request through a replica that died (or a member it lost) may end with.
FAILURES = (OSError, http.client.HTTPException)


class Connection:
    """One keep-alive HTTPS connection to ``port``, made again after any failure (the
    kernel may then give it to another replica)."""

    def __init__(self, port: int, context: ssl.SSLContext) -> None:
        self.port = port
        self.context = context
        self.conn: http.client.HTTPSConnection | None = None

    def open(self) -> http.client.HTTPSConnection:
        if self.conn is None:
            self.conn = http.client.HTTPSConnection(
                "127.0.0.1", self.port, context=self.context, timeout=REQUEST_TIMEOUT
            )
        return self.conn

    def call(
        self, method: str, path: str, body: Obj | None = None, *, content_type: str = ""
    ) -> tuple[int, Any]:
        """(status, decoded body); raises OSError or HTTPException after closing."""
        conn = self.open()
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": content_type or "application/json"}
        try:
            conn.request(method, path, body=data, headers=headers)
            answer = conn.getresponse()
            raw = answer.read()
        except FAILURES:
            self.close()
            raise
        if "json" in (answer.getheader("Content-Type") or ""):
            return answer.status, json.loads(raw)
        return answer.status, raw.decode(errors="replace")

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


class Probe(threading.Thread, abc.ABC):
    """A daemon thread repeating ``tick`` every ``period`` seconds until stopped."""

    period = 1.0

    def __init__(self, connection: Connection) -> None:
        super().__init__(daemon=True, name=type(self).__name__)
        self.connection = connection
        self._stopped = threading.Event()

    def run(self) -> None:
        due = time.monotonic()
        while not self._stopped.is_set():
            self.tick()
            due = max(due + self.period, time.monotonic())
            self._stopped.wait(due - time.monotonic())
        self.connection.close()

    @abc.abstractmethod
    def tick(self) -> None:
        """One probe: a write, a read; what the subclass measures."""

    def stop(self) -> None:
        self._stopped.set()
        self.join(REQUEST_TIMEOUT + 5)


@dataclass(frozen=True)
class Ack:
    """A write the API acknowledged: the ConfigMap, its resourceVersion and when."""

    name: str
    resource_version: int
    n: int  # the value written
    at: float


class Writer(Probe):
    """Writes ConfigMap ``<prefix>-<n mod keys>`` in ``namespace`` every 50 ms (a merge
    patch, so each write is unconditional) and records every acknowledged one."""

    period = 0.05
    keys = 10

    def __init__(self, connection: Connection, *, namespace: str, prefix: str) -> None:
        super().__init__(connection)
        self.namespace = namespace
        self.prefix = prefix
        self.acks: list[Ack] = []
        self.failures: list[tuple[float, str]] = []
        self._n = 0

    def names(self) -> list[str]:
        return [f"{self.prefix}-{i}" for i in range(self.keys)]

    def create(self) -> None:
        """The ConfigMaps the writer patches (before it starts)."""
        path = f"/api/v1/namespaces/{self.namespace}/configmaps"
        for name in self.names():
            code, made = self.connection.call("POST", path, {"metadata": {"name": name}})
            assert code == 201, made

    def tick(self) -> None:
        self._n += 1
        name = f"{self.prefix}-{self._n % self.keys}"
        path = f"/api/v1/namespaces/{self.namespace}/configmaps/{name}"
        patch = {"data": {"n": str(self._n)}}
        try:
            code, answer = self.connection.call(
                "PATCH", path, patch, content_type="application/merge-patch+json"
            )
        except FAILURES as err:
            self.failures.append((time.monotonic(), type(err).__name__))
            return
        if code == 200:
            version = int(answer["metadata"]["resourceVersion"])
            self.acks.append(Ack(name, version, self._n, time.monotonic()))
        else:
            self.failures.append((time.monotonic(), f"{code} {str(answer)[:200]}"))

    def acked_since(self, since: float) -> int:
        return sum(1 for ack in self.acks if ack.at >= since)

    def longest_gap(self, since: float, until: float) -> float:
        """The longest time between two acknowledged writes around [since, until]."""
        times = [ack.at for ack in list(self.acks)]
        gaps = [
            later - earlier
            for earlier, later in itertools.pairwise(times)
            if later >= since and earlier <= until
        ]
        return max(gaps, default=0.0)


@dataclass
class Sample:
    at: float
    #: Each cluster read in this round: the status of its Available condition.
    available: dict[str, str] = field(default_factory=dict)
    errors: int = 0


class Availability(Probe):
    """Reads every ManagedCluster once a second (GETs, so the fleet's LIST count on
    /metrics is the fleet's own) and keeps what each said about Available."""

    def __init__(self, connection: Connection, clusters: list[str]) -> None:
        super().__init__(connection)
        self.clusters = clusters
        self.samples: list[Sample] = []

    def tick(self) -> None:
        sample = Sample(time.monotonic())
        for name in self.clusters:
            try:
                code, cluster = self.connection.call(
                    "GET", f"/apis/cluster.open-cluster-management.io/v1/managedclusters/{name}"
                )
            except FAILURES:
                sample.errors += 1
                continue
            if code != 200:
                sample.errors += 1
                continue
            sample.available[name] = available(cluster)
        self.samples.append(sample)

    def since(self, start: float) -> list[Sample]:
        return [sample for sample in list(self.samples) if sample.at >= start]

    def not_available(self, start: float) -> list[tuple[float, str, str]]:
        """(seconds after ``start``, cluster, status) for every read of a cluster whose
        Available condition was not True since ``start``."""
        return [
            (round(sample.at - start, 1), name, status)
            for sample in self.since(start)
            for name, status in sample.available.items()
            if status != "True"
        ]

    def all_available_after(self, start: float) -> bool:
        """Whether one complete round after ``start`` saw every cluster Available."""
        return any(
            len(s.available) == len(self.clusters)
            and all(v == "True" for v in s.available.values())
            for s in self.since(start)
        )


def available(cluster: Obj) -> str:
    for condition in cluster.get("status", {}).get("conditions", []):
        if condition.get("type") == wellknown.CLUSTER_AVAILABLE:
            return str(condition.get("status"))
    return "missing"


REQUESTS = re.compile(r"^apiserver_request_total\{([^}]*)\} (\S+)$", re.MULTILINE)
LABEL = re.compile(r'(\w+)="([^"]*)"')


def requests_by_verb(metrics: str, verb: str) -> Counter[str]:
    """apiserver_request_total of ``verb`` per resource, from a /metrics text."""
    counts: Counter[str] = Counter()
    for labels, value in REQUESTS.findall(metrics):
        found = dict(LABEL.findall(labels))
        if found.get("verb") == verb:
            counts[found.get("resource", "")] += int(float(value))
    return counts
