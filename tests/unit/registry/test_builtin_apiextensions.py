"""CustomResourceDefinition strategy: defaults, stored versions, the status split."""

from __future__ import annotations

import copy
from typing import Any

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.registry.builtin import apiextensions
from pyocm.apiserver.registry.strategy import Context

CTX = Context(user=UserInfo(name="admin"))
SCHEMA = {
    "openAPIV3Schema": {
        "type": "object",
        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
}


def crd(*versions: tuple[str, bool]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "kind": "Widget"},
            "versions": [
                {"name": n, "served": True, "storage": s, "schema": copy.deepcopy(SCHEMA)}
                for n, s in versions
            ],
        },
    }


def test_create_defaults_names_and_records_storage_version() -> None:
    obj = crd(("v1", True))
    obj["status"] = {
        "storedVersions": ["v0"],
        "conditions": [{"type": "Established", "status": "True"}],
    }
    strategy = apiextensions.CustomResourceDefinitionStrategy()
    strategy.prepare_for_create(obj, CTX)
    assert obj["status"] == {"storedVersions": ["v1"]}
    assert obj["spec"]["names"]["singular"] == "widget"
    assert obj["spec"]["names"]["listKind"] == "WidgetList"
    assert obj["spec"]["conversion"] == {"strategy": "None"}
    assert strategy.validate_create(obj, CTX) == []


def test_create_reports_validator_errors() -> None:
    obj = crd(("v1", True))
    obj["metadata"]["name"] = "gadgets.example.com"
    strategy = apiextensions.CustomResourceDefinitionStrategy()
    strategy.prepare_for_create(obj, CTX)
    assert [e.field for e in strategy.validate_create(obj, CTX)] == ["metadata.name"]


def test_update_keeps_status_and_appends_new_storage_version() -> None:
    strategy = apiextensions.CustomResourceDefinitionStrategy()
    old = crd(("v1alpha1", True))
    strategy.prepare_for_create(old, CTX)
    new = crd(("v1alpha1", False), ("v1", True))
    new["status"] = {"storedVersions": []}
    strategy.prepare_for_update(new, old, CTX)
    assert new["status"]["storedVersions"] == ["v1alpha1", "v1"]
    assert strategy.validate_update(new, old, CTX) == []
    assert strategy.spec_of(new) != strategy.spec_of(old)


def test_update_refuses_group_change() -> None:
    strategy = apiextensions.CustomResourceDefinitionStrategy()
    old = crd(("v1", True))
    strategy.prepare_for_create(old, CTX)
    new = copy.deepcopy(old)
    new["spec"]["group"] = "other.example.com"
    strategy.prepare_for_update(new, old, CTX)
    assert "spec.group" in [e.field for e in strategy.validate_update(new, old, CTX)]


def test_status_update_writes_status_only() -> None:
    strategy = apiextensions.CustomResourceDefinitionStrategy()
    old = crd(("v1", True))
    strategy.prepare_for_create(old, CTX)
    new = copy.deepcopy(old)
    new["spec"]["scope"] = "Cluster"
    new["status"] = {
        "storedVersions": ["v1"],
        "conditions": [{"type": "Established", "status": "True"}],
    }
    status_ctx = Context(user=CTX.user, subresource="status")
    strategy.prepare_for_update(new, old, status_ctx)
    assert new["spec"] == old["spec"]
    assert new["status"]["conditions"] == [{"type": "Established", "status": "True"}]
    assert strategy.validate_update(new, old, status_ctx) == []


def test_generation_and_preconditions() -> None:
    strategy = apiextensions.CustomResourceDefinitionStrategy()
    assert strategy.tracks_generation is True
    assert strategy.allow_unconditional_update is False
    assert strategy.subresources == ("status",)
