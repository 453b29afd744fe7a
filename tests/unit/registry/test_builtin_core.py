"""Namespace, ServiceAccount and Node strategies."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.registry.builtin import core
from pyocm.apiserver.registry.strategy import Context
from pyocm.kube.status import ErrorType

USER = UserInfo(name="admin", groups=("system:masters",))


def ctx(subresource: str = "") -> Context:
    return Context(user=USER, subresource=subresource)


def namespace(**extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}, **extra}


def test_namespace_create_sets_phase_finalizer_and_name_label() -> None:
    obj = namespace(status={"phase": "Terminating"}, spec={"finalizers": ["example.com/cleanup"]})
    core.NamespaceStrategy().prepare_for_create(obj, ctx())
    assert obj["status"] == {"phase": "Active"}
    assert obj["spec"] == {"finalizers": ["example.com/cleanup", "kubernetes"]}
    assert obj["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team-a"}


def test_namespace_create_keeps_a_single_kubernetes_finalizer() -> None:
    obj = namespace(spec={"finalizers": ["kubernetes"]})
    core.NamespaceStrategy().prepare_for_create(obj, ctx())
    assert obj["spec"]["finalizers"] == ["kubernetes"]


def test_namespace_name_label_cannot_be_overridden() -> None:
    obj = namespace()
    obj["metadata"]["labels"] = {"kubernetes.io/metadata.name": "other", "team": "a"}
    core.NamespaceStrategy().prepare_for_update(
        obj, namespace(spec={"finalizers": ["kubernetes"]}), ctx()
    )
    assert obj["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team-a", "team": "a"}


def test_namespace_main_update_keeps_status_and_finalizers() -> None:
    old = namespace(spec={"finalizers": ["kubernetes"]}, status={"phase": "Active"})
    new = namespace(spec={"finalizers": []}, status={"phase": "Terminating"})
    core.NamespaceStrategy().prepare_for_update(new, old, ctx())
    assert new["spec"] == {"finalizers": ["kubernetes"]}
    assert new["status"] == {"phase": "Active"}


def test_namespace_finalize_changes_only_finalizers() -> None:
    old = namespace(spec={"finalizers": ["kubernetes"]}, status={"phase": "Terminating"})
    new = namespace(spec={"finalizers": []}, status={"phase": "Active"})
    core.NamespaceStrategy().prepare_for_update(new, old, ctx("finalize"))
    assert new["spec"] == {"finalizers": []}
    assert new["status"] == {"phase": "Terminating"}


def test_namespace_status_changes_only_status_and_defaults_phase() -> None:
    old = namespace(spec={"finalizers": ["kubernetes"]}, status={"phase": "Active"})
    new = namespace(spec={"finalizers": []}, status={"conditions": []})
    core.NamespaceStrategy().prepare_for_update(new, old, ctx("status"))
    assert new["spec"] == {"finalizers": ["kubernetes"]}
    assert new["status"] == {"conditions": [], "phase": "Active"}


@pytest.mark.parametrize(
    ("finalizer", "detail"),
    [
        pytest.param(
            "custom",
            "name is neither a standard finalizer name nor is it fully qualified",
            id="bare-name",
        ),
        pytest.param("a/b/c", None, id="too-many-slashes"),
    ],
)
def test_namespace_finalizer_names_are_checked(finalizer: str, detail: str | None) -> None:
    obj = namespace(spec={"finalizers": ["kubernetes", finalizer]})
    errs = core.NamespaceStrategy().validate_create(obj, ctx())
    assert errs
    assert all(e.type is ErrorType.INVALID and e.field == "spec.finalizers" for e in errs)
    if detail:
        assert [e.message() for e in errs] == [
            f'spec.finalizers: Invalid value: "{finalizer}": {detail}'
        ]


def test_namespace_standard_and_qualified_finalizers_pass() -> None:
    obj = namespace(
        spec={"finalizers": ["kubernetes", "orphan", "foregroundDeletion", "example.com/x"]}
    )
    assert core.NamespaceStrategy().validate_create(obj, ctx()) == []


def test_namespace_finalize_reports_indexed_paths() -> None:
    obj = namespace(spec={"finalizers": ["kubernetes", "bad"]})
    errs = core.NamespaceStrategy().validate_update(obj, namespace(), ctx("finalize"))
    assert [e.field for e in errs] == ["spec.finalizers[1]"]


@pytest.mark.parametrize(
    ("deleting", "phase", "message"),
    [
        pytest.param(
            False,
            "Terminating",
            "status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty",
            id="active-only",
        ),
        pytest.param(
            True,
            "Active",
            "status.Phase: Invalid value: \"Active\": may only be 'Terminating' if `deletionTimestamp` is not empty",
            id="terminating-only",
        ),
    ],
)
def test_namespace_status_phase_follows_deletion(deleting: bool, phase: str, message: str) -> None:
    obj = namespace(status={"phase": phase})
    if deleting:
        obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    errs = core.NamespaceStrategy().validate_update(obj, namespace(), ctx("status"))
    assert [e.message() for e in errs] == [message]


def test_namespace_delete_turns_terminating_and_waits_for_spec_finalizers() -> None:
    strategy = core.NamespaceStrategy()
    obj = namespace(spec={"finalizers": ["kubernetes"]}, status={"phase": "Active"})
    assert strategy.prepare_for_delete(obj) is True
    assert obj["status"]["phase"] == "Terminating"
    assert strategy.prepare_for_delete(namespace(spec={"finalizers": []})) is False


def test_namespace_names_are_dns_labels_and_fields_select_phase() -> None:
    strategy = core.NamespaceStrategy()
    assert strategy.name_validator("team-a") == []
    assert strategy.name_validator("team.a") == ["must not contain dots"]
    obj = namespace(status={"phase": "Active"})
    assert strategy.fields["status.phase"](obj) == "Active"
    assert strategy.fields["name"](obj) == "team-a"
    assert strategy.tracks_generation is False


def test_node_create_keeps_status_and_update_splits() -> None:
    strategy = core.NodeStrategy()
    node = {"metadata": {"name": "n1"}, "spec": {}, "status": {"capacity": {"cpu": "4"}}}
    strategy.prepare_for_create(node, ctx())
    assert node["status"] == {"capacity": {"cpu": "4"}}
    new = {"metadata": {"name": "n1"}, "spec": {"unschedulable": True}, "status": {}}
    strategy.prepare_for_update(new, node, ctx())
    assert new["status"] == {"capacity": {"cpu": "4"}} and new["spec"] == {"unschedulable": True}
    status = {
        "metadata": {"name": "n1"},
        "spec": {"unschedulable": True},
        "status": {"capacity": {"cpu": "8"}},
    }
    strategy.prepare_for_update(status, node, ctx("status"))
    assert status["spec"] == {} and status["status"] == {"capacity": {"cpu": "8"}}
    assert strategy.fields["spec.unschedulable"](new) == "true"
    assert strategy.fields["spec.unschedulable"](node) == "false"


def test_service_account_is_plain() -> None:
    strategy = core.ServiceAccountStrategy()
    sa = {"metadata": {"name": "agent", "namespace": "ns"}, "secrets": [{"name": "s"}]}
    strategy.prepare_for_create(sa, ctx())
    assert sa == {"metadata": {"name": "agent", "namespace": "ns"}, "secrets": [{"name": "s"}]}
    assert strategy.validate_create(sa, ctx()) == []
    assert strategy.name_validator("Agent") != []
