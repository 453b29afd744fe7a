"""The generated CRDs are the upstream OCM CRDs, apart from descriptions and ExclusiveLabel.

The upstream files are read from the shared reference directory and used only as data to
compare against. Two reference files may describe one CRD (the add-on ``v1alpha1`` files
carry one version, the ``v1beta1`` files both); each is compared version by version.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped,unused-ignore]

from pyocm.api import crds
from tests.reference import shared_files

REFERENCE_FILES = shared_files("reference", "ocm-crds")
CLUSTER_SET_CRD = "managedclustersets.cluster.open-cluster-management.io"
SELECTOR_PATH = ("openAPIV3Schema", "properties", "spec", "properties", "clusterSelector")


def _load(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return loaded


def _generated() -> dict[str, dict[str, Any]]:
    return {crd["metadata"]["name"]: crd for crd in crds.render_all()}


def _references() -> list[Any]:
    return [pytest.param(_load(path), id=path.name) for path in REFERENCE_FILES]


def without_descriptions(value: Any) -> Any:
    """Drop every schema ``description`` string; a property named "description" stays."""
    if isinstance(value, dict):
        return {
            key: without_descriptions(item)
            for key, item in value.items()
            if not (key == "description" and isinstance(item, str))
        }
    if isinstance(value, list):
        return [without_descriptions(item) for item in value]
    return value


def first_difference(generated: Any, reference: Any, path: str = "") -> str | None:
    """The first path (in sorted key order) where the two values differ, with both values."""
    if type(generated) is not type(reference):
        return f"{path or '<root>'}: generated {generated!r}, upstream {reference!r}"
    if isinstance(generated, dict):
        for key in sorted(set(generated) | set(reference)):
            if key not in generated:
                return f"{path}.{key}: missing from generated"
            if key not in reference:
                return f"{path}.{key}: not in upstream"
            found = first_difference(generated[key], reference[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(generated, list):
        if len(generated) != len(reference):
            return f"{path}: generated {generated!r}, upstream {reference!r}"
        for index, (mine, theirs) in enumerate(zip(generated, reference, strict=True)):
            found = first_difference(mine, theirs, f"{path}[{index}]")
            if found:
                return found
        return None
    if generated != reference:
        return f"{path or '<root>'}: generated {generated!r}, upstream {reference!r}"
    return None


def without_exclusive_label(schema: dict[str, Any]) -> dict[str, Any]:
    """Remove the documented pyocm addition after asserting its exact shape."""
    stripped = copy.deepcopy(schema)
    selector = stripped
    for key in SELECTOR_PATH:
        selector = selector[key]
    properties = selector["properties"]
    assert properties.pop("exclusiveLabel") == {
        "type": "object",
        "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
        "required": ["key", "value"],
    }
    selector_type = properties["selectorType"]
    assert selector_type["enum"][-1] == "ExclusiveLabel"
    selector_type["enum"] = selector_type["enum"][:-1]
    return stripped


def without_legacy_timeout(schema: Any) -> Any:
    """Remove pyocm's other addition, a rollout strategy's ``timeout`` (older OCM's name of
    ``progressDeadline``), after asserting its exact shape wherever it is."""
    if isinstance(schema, list):
        return [without_legacy_timeout(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    found = {key: without_legacy_timeout(value) for key, value in schema.items()}
    properties = found.get("properties")
    if isinstance(properties, dict) and "progressDeadline" in properties:
        assert properties.pop("timeout") == {
            "type": "string",
            "pattern": properties["progressDeadline"]["pattern"],
        }
    return found


def _versions(crd: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {version["name"]: version for version in crd["spec"]["versions"]}


@pytest.mark.parametrize("reference", _references())
def test_schema_of_every_version_matches_upstream(reference: dict[str, Any]) -> None:
    name = reference["metadata"]["name"]
    generated = _versions(_generated()[name])
    for version in reference["spec"]["versions"]:
        mine = without_legacy_timeout(without_descriptions(generated[version["name"]]["schema"]))
        if name == CLUSTER_SET_CRD:
            mine = without_exclusive_label(mine)
        difference = first_difference(mine, without_descriptions(version["schema"]))
        assert difference is None, f"{name} {version['name']}"


@pytest.mark.parametrize("reference", _references())
def test_names_group_and_scope_match_upstream(reference: dict[str, Any]) -> None:
    generated = _generated()[reference["metadata"]["name"]]
    for key in ("group", "names", "scope", "preserveUnknownFields"):
        assert generated["spec"][key] == reference["spec"][key], key


@pytest.mark.parametrize("reference", _references())
def test_served_storage_subresources_and_columns_match_upstream(
    reference: dict[str, Any],
) -> None:
    generated = _versions(_generated()[reference["metadata"]["name"]])
    for version in reference["spec"]["versions"]:
        mine = generated[version["name"]]
        assert (mine["served"], mine["storage"]) == (version["served"], version["storage"])
        # An empty subresources map (AddOnTemplate) means the same as none at all.
        assert mine.get("subresources", {}) == (version.get("subresources") or {})
        assert mine.get("additionalPrinterColumns", []) == version.get(
            "additionalPrinterColumns", []
        )


def test_every_crd_serves_exactly_the_union_of_upstream_versions() -> None:
    expected: dict[str, set[str]] = {}
    for path in REFERENCE_FILES:
        reference = _load(path)
        versions = {v["name"] for v in reference["spec"]["versions"]}
        expected.setdefault(reference["metadata"]["name"], set()).update(versions)
    generated = {name: set(_versions(crd)) for name, crd in _generated().items()}
    assert generated == expected


def test_addon_versions_are_listed_alpha_first_with_alpha_storage() -> None:
    for name in (
        "clustermanagementaddons.addon.open-cluster-management.io",
        "managedclusteraddons.addon.open-cluster-management.io",
        "addondeploymentconfigs.addon.open-cluster-management.io",
    ):
        versions = _generated()[name]["spec"]["versions"]
        flags = [(v["name"], v["served"], v["storage"]) for v in versions]
        assert flags == [("v1alpha1", True, True), ("v1beta1", True, False)], name


def test_no_crd_declares_a_conversion_webhook() -> None:
    assert all("conversion" not in crd["spec"] for crd in crds.render_all())


def test_cluster_set_selector_keeps_upstream_defaults_and_adds_exclusive_label() -> None:
    schema = _versions(_generated()[CLUSTER_SET_CRD])["v1beta2"]["schema"]
    spec = schema["openAPIV3Schema"]["properties"]["spec"]
    selector = spec["properties"]["clusterSelector"]
    assert spec["default"] == {"clusterSelector": {"selectorType": "ExclusiveClusterSetLabel"}}
    assert selector["default"] == {"selectorType": "ExclusiveClusterSetLabel"}
    assert selector["properties"]["selectorType"]["enum"] == [
        "ExclusiveClusterSetLabel",
        "LabelSelector",
        "ExclusiveLabel",
    ]
    assert selector["properties"]["exclusiveLabel"]["required"] == ["key", "value"]


@pytest.mark.parametrize(
    ("generated", "reference", "expected"),
    [
        pytest.param({"a": 1}, {"a": 1}, None, id="equal"),
        pytest.param(
            {"a": {"b": [1, {"c": "x"}]}},
            {"a": {"b": [1, {"c": "y"}]}},
            ".a.b[1].c: generated 'x', upstream 'y'",
            id="nested-value",
        ),
        pytest.param({"a": 1}, {"a": 1, "b": 2}, ".b: missing from generated", id="missing"),
        pytest.param({"a": 1, "z": 2}, {"a": 1}, ".z: not in upstream", id="extra"),
        pytest.param({"a": 0}, {"a": False}, ".a: generated 0, upstream False", id="type"),
        pytest.param({"l": [1]}, {"l": [1, 2]}, ".l: generated [1], upstream [1, 2]", id="length"),
    ],
)
def test_first_difference_names_the_first_differing_path(
    generated: Any, reference: Any, expected: str | None
) -> None:
    assert first_difference(generated, reference) == expected


def test_without_descriptions_keeps_properties_named_description() -> None:
    schema = {
        "description": "drop me",
        "properties": {"description": {"type": "string", "description": "drop me too"}},
    }
    assert without_descriptions(schema) == {"properties": {"description": {"type": "string"}}}
