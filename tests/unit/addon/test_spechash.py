"""The add-on config spec hash matches upstream's ``GetSpecHash`` values."""

from __future__ import annotations

import pytest

from pyocm.addon.hub.spechash import go_json, spec_hash


def adc(variable: str) -> dict[str, object]:
    """An AddOnDeploymentConfig as upstream's integration tests store it: a Go client
    sends ``proxyConfig: {}`` (a struct, never omitted), the CRD defaults the namespace."""
    return {
        "apiVersion": "addon.open-cluster-management.io/v1alpha1",
        "kind": "AddOnDeploymentConfig",
        "metadata": {"name": "c", "namespace": "n", "generation": 3, "resourceVersion": "9"},
        "spec": {
            "agentInstallNamespace": "open-cluster-management-agent-addon",
            "customizedVariables": [{"name": variable, "value": variable}],
            "proxyConfig": {},
        },
        "status": {"ignored": True},
    }


@pytest.mark.parametrize(
    ("variable", "expected"),
    [
        ("test", "ea4e6089e8b2f584c1cd8b86e16a15df3186b30744f433ede7436091c93a4cc7"),
        ("test1", "b746cc98936955dd2168640f0011a14f2a74be306c747bc8ba829328cc772690"),
        ("test2", "3e6348b0c0f0a341ce28d0a2f99bc41fc63fb17d947eb5a45284729fbeb63b32"),
        ("test3", "9b3c6d09731ed254589fa4fc2936e6fb00537de92da5e035183da313eb98d27e"),
    ],
)
def test_upstream_worked_examples(variable: str, expected: str) -> None:
    assert spec_hash(adc(variable)) == expected


def test_metadata_and_status_do_not_count_but_other_top_level_fields_do() -> None:
    base = adc("test")
    moved = {**base, "metadata": {"name": "other"}, "status": {}}
    assert spec_hash(moved) == spec_hash(base)
    assert spec_hash({**base, "data": {"a": "b"}}) != spec_hash(base)


def test_go_encoding_of_strings() -> None:
    """HTML characters and the JS line separators escaped, other text kept as UTF-8,
    control characters as Go 1.22+ writes them."""
    text = '<a & b>\u2028\u2029é\n\t\b\f\x01"\\'
    assert go_json(text) == '"\\u003ca \\u0026 b\\u003e\\u2028\\u2029é\\n\\t\\b\\f\\u0001\\"\\\\"'


def test_go_encoding_of_maps_and_numbers() -> None:
    assert go_json({"b": [1, True, None], "a": {"d": 1.5, "c": 2.0}}) == (
        '{"a":{"c":2,"d":1.5},"b":[1,true,null]}'
    )
    assert [go_json(f) for f in (1e20, 1e21, 1e-7, 1.5e-7, 0.00001234, -0.5, 0.0)] == [
        "100000000000000000000",
        "1e+21",
        "1e-7",
        "1.5e-7",
        "0.00001234",
        "-0.5",
        "0",
    ]
