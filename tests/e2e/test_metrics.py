"""``/metrics``: kube-apiserver's request counts and latencies, readable by system:monitoring."""

from __future__ import annotations

import re

from pyocm.testing import Client, HubProcess

LEASES = "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases"
SAMPLE = re.compile(r"^(?P<name>[a-z_]+)\{(?P<labels>[^}]*)\} (?P<value>\S+)$")


def samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    found = []
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        match = SAMPLE.match(line)
        assert match, f"not a Prometheus sample: {line!r}"
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match["labels"]))
        found.append((match["name"], labels, float(match["value"])))
    return found


def value(found: list[tuple[str, dict[str, str], float]], name: str, **labels: str) -> float:
    """The sum of the samples of ``name`` whose labels include ``labels``."""
    return sum(v for n, ls, v in found if n == name and labels.items() <= ls.items())


async def metrics(client: Client) -> list[tuple[str, dict[str, str], float]]:
    code, text = await client.get("/metrics")
    assert code == 200, text
    return samples(text)


async def test_requests_are_counted_and_timed_as_kube_apiserver_labels_them(
    admin: Client, unique: str
) -> None:
    await admin.post("/api/v1/namespaces", {"metadata": {"name": unique}})
    before = await metrics(admin)
    lease = {"metadata": {"name": "l"}, "spec": {"holderIdentity": "me"}}
    code, created = await admin.post(LEASES.format(ns=unique), lease)
    assert code == 201
    changed = {**created, "spec": {"holderIdentity": "you"}}
    code, _ = await admin.put(LEASES.format(ns=unique) + "/l", changed)
    assert code == 200
    code, _ = await admin.put(LEASES.format(ns=unique) + "/l", changed)
    assert code == 409, "a stale resourceVersion"
    assert (await admin.get(LEASES.format(ns=unique)))[0] == 200
    pinned = {"fieldSelector": "metadata.name=l"}
    assert (await admin.get(LEASES.format(ns=unique), params=pinned))[0] == 200
    assert (await admin.get("/apis/coordination.k8s.io/v1/madeups"))[0] == 404
    code, _ = await admin.get(
        LEASES.format(ns=unique), params={"watch": "1", "timeoutSeconds": "1"}
    )
    assert code == 200
    after = await metrics(admin)

    put = {"group": "coordination.k8s.io", "version": "v1", "resource": "leases", "verb": "PUT"}
    put |= {"scope": "resource", "subresource": "", "dry_run": "", "component": "apiserver"}
    total = "apiserver_request_total"
    for code_label, more in (("200", 1), ("409", 1)):
        grew = value(after, total, code=code_label, **put) - value(
            before, total, code=code_label, **put
        )
        assert grew >= more, (code_label, grew)
    posted = value(after, total, verb="POST", resource="leases", scope="resource", code="201")
    assert posted >= 1
    listed = {"verb": "LIST", "resource": "leases", "code": "200"}
    grew = value(after, total, scope="namespace", **listed) - value(
        before, total, scope="namespace", **listed
    )
    assert grew >= 2, "a list pinned to one name is still a LIST of the namespace"
    assert value(after, total, verb="WATCH", resource="leases", code="200") >= 1
    assert not [ls for _, ls, _ in after if ls.get("resource") == "madeups"], "only served kinds"

    # The histogram: cumulative buckets ending at +Inf, equal to the count.
    duration = "apiserver_request_duration_seconds"
    buckets = [
        (ls["le"], v)
        for n, ls, v in after
        if n == f"{duration}_bucket" and put.items() <= ls.items()
    ]
    assert [le for le, _ in buckets][:3] == ["0.005", "0.025", "0.05"]
    assert buckets[-1][0] == "+Inf"
    counts = [v for _, v in buckets]
    assert counts == sorted(counts)
    assert counts[-1] == value(after, f"{duration}_count", **put) >= 2
    assert value(after, f"{duration}_sum", **put) > 0
    watched = {"verb": "WATCH", "resource": "leases", "scope": "namespace"}
    assert value(after, f"{duration}_sum", **watched) >= 1.0, "a watch lasts its timeout"


async def test_metrics_are_for_system_monitoring_and_admins(hub: HubProcess, unique: str) -> None:
    monitor = hub.identity(f"{unique}-monitor", ("system:monitoring",))
    nobody = hub.identity(f"{unique}-nobody")
    async with Client(monitor.kubeconfig) as client:
        code, text = await client.get("/metrics")
        assert code == 200
        assert "# TYPE apiserver_request_duration_seconds histogram" in text
    async with Client(nobody.kubeconfig) as client:
        code, body = await client.get("/metrics")
        assert code == 403
        assert body["reason"] == "Forbidden"
        # Denied by RBAC before any handler: not counted, as in kube-apiserver.
        assert (await client.get("/api/v1/nodes"))[0] == 403
    async with Client(monitor.kubeconfig) as client:
        code, text = await client.get("/metrics")
    assert not value(samples(text), "apiserver_request_total", resource="nodes", code="403")
