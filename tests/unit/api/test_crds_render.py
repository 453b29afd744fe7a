"""Rendering: YAML that round-trips, the ``python -m pyocm.api.crds`` command, sanity checks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped,unused-ignore]

from pyocm.api import catalog, cluster_v1, crds, descriptor
from pyocm.api import schema as s

EXPECTED_CRDS = {
    "managedclusters.cluster.open-cluster-management.io",
    "clusterclaims.cluster.open-cluster-management.io",
    "addonplacementscores.cluster.open-cluster-management.io",
    "placements.cluster.open-cluster-management.io",
    "placementdecisions.cluster.open-cluster-management.io",
    "managedclustersets.cluster.open-cluster-management.io",
    "managedclustersetbindings.cluster.open-cluster-management.io",
    "clustermanagementaddons.addon.open-cluster-management.io",
    "managedclusteraddons.addon.open-cluster-management.io",
    "addondeploymentconfigs.addon.open-cluster-management.io",
    "addontemplates.addon.open-cluster-management.io",
    "manifestworks.work.open-cluster-management.io",
    "appliedmanifestworks.work.open-cluster-management.io",
    "manifestworkreplicasets.work.open-cluster-management.io",
}


def _run_module(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pyocm.api.crds", *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )


def test_one_crd_per_resource() -> None:
    names = [crd["metadata"]["name"] for crd in crds.render_all()]
    assert sorted(names) == sorted(EXPECTED_CRDS)
    assert names == list(catalog.crd_names())


@pytest.mark.parametrize(
    "crd", [pytest.param(c, id=c["metadata"]["name"]) for c in crds.render_all()]
)
def test_yaml_round_trips_without_aliases(crd: dict[str, Any]) -> None:
    text = crds.to_yaml(crd)
    assert yaml.safe_load(text) == crd
    assert "&id" not in text and "*id" not in text
    assert text.startswith("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n")


def test_condition_status_enum_stays_strings_in_yaml() -> None:
    crd = crds.render([cluster_v1.MANAGED_CLUSTER])
    loaded = yaml.safe_load(crds.to_yaml(crd))
    schema = loaded["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    condition = schema["properties"]["status"]["properties"]["conditions"]["items"]
    assert condition["properties"]["status"]["enum"] == ["True", "False", "Unknown"]


def test_module_writes_one_file_per_crd(tmp_path: Path) -> None:
    out = tmp_path / "crds"
    result = _run_module("--out", str(out))
    written = sorted(path.name for path in out.iterdir())
    assert written == sorted(f"{name}.yaml" for name in EXPECTED_CRDS)
    assert sorted(result.stdout.split()) == sorted(str(out / name) for name in written)
    for crd in crds.render_all():
        path = out / f"{crd['metadata']['name']}.yaml"
        assert yaml.safe_load(path.read_text(encoding="utf-8")) == crd


def test_module_prints_all_crds_as_one_stream() -> None:
    documents = list(yaml.safe_load_all(_run_module().stdout))
    assert documents == crds.render_all()


def _tiny(*, version: str, storage: bool, plural: str = "things") -> descriptor.ResourceDescriptor:
    return descriptor.ResourceDescriptor(
        group="example.io",
        version=version,
        kind="Thing",
        plural=plural,
        singular="thing",
        namespaced=True,
        storage=storage,
        schema=s.kind_root(description="A thing."),
    )


@pytest.mark.parametrize(
    ("versions", "message"),
    [
        pytest.param(
            [_tiny(version="v1", storage=True), _tiny(version="v2", storage=True)],
            r"things.example.io: need exactly one storage version, got \['v1', 'v2'\]",
            id="two-storage",
        ),
        pytest.param(
            [_tiny(version="v1", storage=False)],
            r"things.example.io: need exactly one storage version, got \[\]",
            id="no-storage",
        ),
        pytest.param(
            [_tiny(version="v1", storage=True), _tiny(version="v2", storage=False, plural="x")],
            "things.example.io: versions disagree on plural",
            id="names-differ",
        ),
        pytest.param([], "a CRD needs at least one version", id="empty"),
    ],
)
def test_render_rejects_inconsistent_versions(
    versions: list[descriptor.ResourceDescriptor], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        crds.render(versions)


def test_render_lists_versions_in_given_order_with_optional_parts() -> None:
    crd = crds.render([_tiny(version="v1", storage=True), _tiny(version="v2", storage=False)])
    assert crd["spec"]["scope"] == "Namespaced"
    assert crd["spec"]["names"] == {
        "kind": "Thing",
        "listKind": "ThingList",
        "plural": "things",
        "singular": "thing",
    }
    first, second = crd["spec"]["versions"]
    assert (first["name"], first["storage"], second["name"], second["storage"]) == (
        "v1",
        True,
        "v2",
        False,
    )
    assert "subresources" not in first and "additionalPrinterColumns" not in first
