"""Server-side printing: durations, typed cells, and the built-in printers."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from pyocm.apiserver.registry.builtin import printers
from pyocm.apiserver.registry.printing import (
    DEFAULT_COLUMNS,
    custom_resource_columns,
    human_duration,
    table,
)

NOW = datetime(2026, 6, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (310, "5m10s"),
        (600, "10m"),
        (179 * 60, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 20 * 60, "3h20m"),
        (47 * 3600, "47h"),
        (4 * 86400 + 2 * 3600, "4d2h"),
        (8 * 86400, "8d"),
        (800 * 86400, "2y70d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_human_duration(seconds: int, shown: str) -> None:
    assert human_duration(seconds) == shown


def test_custom_columns_type_their_cells() -> None:
    columns = custom_resource_columns(
        [
            {"name": "Count", "type": "integer", "jsonPath": ".status.count"},
            {"name": "Ratio", "type": "number", "jsonPath": ".status.ratio"},
            {"name": "On", "type": "boolean", "jsonPath": ".spec.on"},
            {"name": "Text", "type": "string", "jsonPath": ".spec.on"},
            {"name": "Map", "type": "string", "jsonPath": ".spec.map"},
            {"name": "When", "type": "date", "jsonPath": ".status.when"},
            {"name": "Bad date", "type": "date", "jsonPath": ".spec.on"},
            {"name": "Wrong type", "type": "integer", "jsonPath": ".spec.map"},
            {"name": "Missing", "type": "string", "jsonPath": ".status.none", "priority": 1},
        ]
    )
    obj = {
        "metadata": {"name": "x"},
        "spec": {"on": True, "map": {"a": 1}},
        "status": {"count": 3, "ratio": 0.5, "when": "2026-05-31T00:00:00Z"},
    }
    shown = table(columns, [obj], include_object="None", revision="7", now=NOW)
    assert shown["rows"] == [
        {"cells": ["x", 3, 0.5, True, "true", '{"a":1}', "24h", "<invalid>", None, None]}
    ]
    assert shown["columnDefinitions"][-1]["priority"] == 1
    assert shown["metadata"] == {"resourceVersion": "7"}


def test_a_crd_without_columns_shows_name_and_age() -> None:
    assert [c.name for c in custom_resource_columns([])] == ["Name", "Age"]
    assert [c.name for c in DEFAULT_COLUMNS] == ["Name", "Created At"]
    created = {"metadata": {"name": "x", "creationTimestamp": "2026-05-01T00:00:00Z"}}
    shown = table((), [created], include_object="None", revision=None, now=NOW)
    assert shown["rows"][0]["cells"] == ["x", "2026-05-01T00:00:00Z"]


def test_csr_and_node_printers() -> None:
    def cells(columns: object, obj: dict[str, object]) -> list[object]:
        return table(columns, [obj], include_object="None", revision=None, now=NOW)["rows"][0][  # type: ignore[arg-type]
            "cells"
        ]

    csr = {
        "metadata": {"name": "c1-abc", "creationTimestamp": "2026-06-01T00:00:00Z"},
        "spec": {
            "signerName": "kubernetes.io/kube-apiserver-client",
            "username": "system:bootstrap:abcdef",
            "expirationSeconds": 86400,
        },
        "status": {"conditions": [{"type": "Approved"}], "certificate": "LS0t"},
    }
    assert cells(printers.CSR, csr) == [
        "c1-abc",
        "0s",
        "kubernetes.io/kube-apiserver-client",
        "system:bootstrap:abcdef",
        "24h",
        "Approved,Issued",
    ]
    pending = {"metadata": {"name": "p"}, "spec": {}}
    assert cells(printers.CSR, pending)[4:] == ["<none>", "Pending"]
    node = {
        "metadata": {"name": "n1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "nodeInfo": {"kubeletVersion": "v1.30.0"},
        },
    }
    assert cells(printers.NODE, node) == [
        "n1",
        "Ready,SchedulingDisabled",
        "control-plane",
        None,
        "v1.30.0",
    ]
