"""Micro-benchmark of the per-write path on a ManagedCluster; figures are printed, never asserted."""

from __future__ import annotations

import functools
import time
from typing import Any

import orjson
import pytest
import yaml

from pyocm.apiserver.apiextensions import defaulting, pruning, validation
from pyocm.apiserver.apiextensions.schema import CompiledSchema
from tests.unit.apiextensions.test_validation import (
    CRDS,
    condition,
    managed_cluster,
    managed_cluster_schema,
)

pytestmark = pytest.mark.bench


def big_managed_cluster() -> dict[str, Any]:
    obj = managed_cluster()
    obj["metadata"]["finalizers"] = ["cluster.open-cluster-management.io/api-resource-cleanup"]
    obj["status"]["conditions"].append(condition("ManagedClusterConditionClockSynced", "ManagedClusterClockSynced"))
    obj["status"]["clusterClaims"] += [{"name": f"claim{i}.example.com", "value": f"value-{i}"} for i in range(12)]
    return obj


def rate(action: Any, seconds: float = 0.3) -> float:
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        action()
        count += 1
    return count / (time.perf_counter() - start)


def test_per_write_throughput(capsys: pytest.CaptureFixture[str]) -> None:
    schema = managed_cluster_schema()
    obj = big_managed_cluster()
    raw = orjson.dumps(obj)
    assert validation.validate(obj, schema) == []

    def full_write() -> None:
        copy = orjson.loads(raw)
        pruning.prune(copy, schema)
        defaulting.apply_defaults(copy, schema)
        assert not validation.validate(copy, schema)

    figures = {
        "validate": rate(lambda: validation.validate(obj, schema)),
        "decode+prune+default+validate": rate(full_write),
        "compile schema": rate(lambda: CompiledSchema.from_openapi(schema_doc())),
    }
    with capsys.disabled():
        print(f"\nManagedCluster of {len(raw)} bytes:")
        for name, per_second in figures.items():
            print(f"  {name:32} {per_second:10.0f}/s")


@functools.cache
def schema_doc() -> dict[str, Any]:
    (path,) = CRDS.glob("*managedclusters.crd.yaml")
    doc: dict[str, Any] = yaml.safe_load(path.read_text())["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return doc
