"""The typed models in pyocm/api/models are what the generator makes of today's sources.

This is the CI check: change a descriptor (or Kubernetes' definitions) without
regenerating, and the first test fails with the command that brings them back in line.
"""

from __future__ import annotations

import importlib
import typing
from pathlib import Path

import pytest

from pyocm.api import catalog, descriptor, models, typedgen
from pyocm.api.models import cluster_v1
from pyocm.api.typedgen import ocm
from pyocm.api.typedgen.render import REGENERATE


def test_committed_models_are_current() -> None:
    problems = typedgen.differences()
    assert not problems, (
        "pyocm/api/models is out of date with its sources:\n  "
        + "\n  ".join(problems)
        + f"\nregenerate with: {REGENERATE}"
    )


def test_differences_name_missing_stale_and_orphaned_files(tmp_path: Path) -> None:
    typedgen.write(tmp_path)
    assert typedgen.differences(tmp_path) == []
    (tmp_path / "cluster_v1.py").write_text("# edited by hand\n")
    (tmp_path / "core_v1.py").unlink()
    (tmp_path / "gone_v1.py").write_text("")
    assert typedgen.differences(tmp_path) == [
        "gone_v1.py: no longer generated",
        "cluster_v1.py: out of date",
        "core_v1.py: missing",
    ]
    typedgen.write(tmp_path)
    assert typedgen.differences(tmp_path) == []


def test_a_changed_descriptor_makes_the_models_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = catalog.DESCRIPTORS[0]
    schema = cluster.openapi_schema()
    schema["properties"]["spec"]["properties"]["newField"] = {"type": "string"}
    changed = type(cluster)(**{**vars(cluster), "schema": schema})
    monkeypatch.setattr(catalog, "DESCRIPTORS", (changed, *catalog.DESCRIPTORS[1:]))
    assert "cluster_v1.py: out of date" in typedgen.differences()


@pytest.mark.parametrize("name", sorted(typedgen.generate()))
def test_every_annotation_resolves(name: str) -> None:
    module = importlib.import_module(f"pyocm.api.models.{name.removesuffix('.py')}")
    classes = [v for v in vars(module).values() if typing.is_typeddict(v)]
    assert classes
    for cls in classes:
        typing.get_type_hints(cls)  # a dangling forward reference raises NameError


@pytest.mark.parametrize("resource", catalog.DESCRIPTORS, ids=lambda d: f"{d.api_version}/{d.kind}")
def test_a_kind_model_has_its_schema_fields_and_requirements(
    resource: descriptor.ResourceDescriptor,
) -> None:
    module = importlib.import_module(f"pyocm.api.models.{ocm.module_name(resource)}")
    model = getattr(module, resource.kind)
    spec = resource.schema["properties"].get("spec")
    assert set(model.__annotations__) == set(resource.schema["properties"])
    assert model.__required_keys__ == frozenset(resource.schema.get("required", ()))
    if spec is not None and "properties" in spec:
        spec_model = typing.get_type_hints(model)["spec"]
        assert set(spec_model.__annotations__) == set(spec["properties"])
        assert spec_model.__required_keys__ == frozenset(spec.get("required", ()))


def test_shared_types_are_referred_to_not_repeated() -> None:
    hints = typing.get_type_hints(cluster_v1.ManagedClusterStatus)
    assert hints["conditions"] == list[models.common.Condition]


def test_view_and_wire_hand_back_the_very_object() -> None:
    obj = {"metadata": {"name": "c1"}, "spec": {"hubAcceptsClient": True}}
    cluster = models.view(cluster_v1.ManagedCluster, obj)
    assert cluster is obj
    assert models.wire(cluster) is obj
    assert models.view(cluster_v1.ManagedCluster, None) is None
