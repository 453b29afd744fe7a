"""The rendered manifests applied with kubectl, as a user applies them: the hub's to a pyocm
hub (its own controllers off), the klusterlet's to a second pyocm API server standing in for
the managed cluster (what pyocm's embedded clusters are). Every object is accepted and reads
back as applied."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pyocm.testing import HubProcess
from tests.conftest import hub_process
from tests.deploy.manifests import (
    DEPLOY,
    Obj,
    apply,
    ident,
    klusterlet_copy,
    render,
    render_text,
    run,
)

pytestmark = pytest.mark.kubectl


@pytest.fixture(scope="module")
def deploy_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    yield from hub_process(tmp_path_factory, "deploy-hub", ["--no-controllers"])


@pytest.fixture(scope="module")
def managed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    yield from hub_process(tmp_path_factory, "deploy-managed", ["--no-controllers"])


def missing(server: HubProcess, objects: list[Obj]) -> list[str]:
    """The objects the server does not return by kind and name."""
    absent = []
    for obj in objects:
        meta = obj["metadata"]
        kind = (
            f"{obj['kind'].lower()}.{obj['apiVersion'].rsplit('/', 1)[0]}"
            if "/" in obj["apiVersion"]
            else obj["kind"].lower()
        )
        where = ["-n", meta["namespace"]] if meta.get("namespace") else []
        if run(server, "get", kind, meta["name"], *where, "-o", "name").returncode != 0:
            absent.append(ident(obj))
    return absent


def test_hub_manifests_apply_to_a_pyocm_hub(deploy_hub: HubProcess) -> None:
    text = render_text(DEPLOY / "hub")
    apply(deploy_hub, text)
    assert missing(deploy_hub, render(DEPLOY / "hub")) == []
    # what a second apply of the same manifests (an upgrade) must not undo
    crd = run(
        deploy_hub,
        "get",
        "crd",
        "managedclusteraddons.addon.open-cluster-management.io",
        "-o",
        "jsonpath={.spec.conversion.webhook.clientConfig.service.name}",
    )
    assert crd.stdout == "cluster-manager-webhook"


def test_klusterlet_manifests_apply_to_a_managed_cluster(
    deploy_hub: HubProcess, managed: HubProcess, tmp_path: Path
) -> None:
    directory = klusterlet_copy(
        tmp_path, bootstrap=deploy_hub.kubeconfig.read_text(encoding="utf-8")
    )
    apply(managed, render_text(directory))
    assert missing(managed, render(directory)) == []
    stored = run(
        managed,
        "get",
        "secret",
        "bootstrap-hub-kubeconfig",
        "-n",
        "open-cluster-management-agent",
        "-o",
        "jsonpath={.data.kubeconfig}",
    )
    assert stored.returncode == 0 and stored.stdout
