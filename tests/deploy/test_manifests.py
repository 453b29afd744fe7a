"""deploy/'s kustomizations render with kubectl's kustomize, and every object they render
passes Kubernetes' published schemas (strict) or, for OCM's kinds, pyocm's CRD schemas."""

from __future__ import annotations

import base64
import copy
from pathlib import Path

import pytest

from pyocm.api import models
from pyocm.hooks import webhooks
from pyocm.hooks.request import Config
from pyocm.registration.hub import rbac
from tests.deploy.manifests import DEPLOY, Obj, ident, is_custom, klusterlet_copy, problems, render

BOOTSTRAP = """apiVersion: v1
kind: Config
clusters:
- name: hub
  cluster:
    server: https://hub.example.com:6443
contexts:
- name: bootstrap
  context: {cluster: hub, user: bootstrap}
current-context: bootstrap
users:
- name: bootstrap
  user: {token: not-a-real-token}
"""


@pytest.fixture(scope="module")
def hub_objects() -> list[Obj]:
    return render(DEPLOY / "hub")


@pytest.fixture(scope="module")
def klusterlet_objects(tmp_path_factory: pytest.TempPathFactory) -> list[Obj]:
    return render(klusterlet_copy(tmp_path_factory.mktemp("klusterlet"), bootstrap=BOOTSTRAP))


def test_hub_objects_pass_their_schemas(hub_objects: list[Obj]) -> None:
    assert len(hub_objects) > 20
    assert {ident(o): problems(o) for o in hub_objects if problems(o)} == {}


def test_klusterlet_objects_pass_their_schemas(klusterlet_objects: list[Obj]) -> None:
    assert len(klusterlet_objects) > 15
    assert {ident(o): problems(o) for o in klusterlet_objects if problems(o)} == {}


def test_strict_validation_refuses_an_unknown_field(hub_objects: list[Obj]) -> None:
    """What the two tests above rely on: a misspelled field is an error, not ignored."""
    deployment = copy.deepcopy(next(o for o in hub_objects if o["kind"] == "Deployment"))
    deployment["spec"]["template"]["spec"]["containers"][0]["livenesProbe"] = {}
    assert problems(deployment)


def test_custom_objects_are_checked_against_pyocms_schemas() -> None:
    cluster_set: Obj = {
        "apiVersion": "cluster.open-cluster-management.io/v1beta2",
        "kind": "ManagedClusterSet",
        "metadata": {"name": "apac"},
        "spec": {"clusterSelector": {"selectorType": "ExclusiveLabel"}},
    }
    assert is_custom(cluster_set)
    assert problems(cluster_set) == []
    cluster_set["spec"]["clusterSelector"]["selectorType"] = "NoSuchSelector"
    assert problems(cluster_set)


@pytest.mark.parametrize("side", ["hub", "klusterlet"])
def test_every_namespaced_object_names_its_namespace(
    side: str, hub_objects: list[Obj], klusterlet_objects: list[Obj]
) -> None:
    """Without one, ``kubectl apply`` would put it into the user's current namespace."""
    objects = hub_objects if side == "hub" else klusterlet_objects
    wanted = f"open-cluster-management-{'hub' if side == 'hub' else 'agent'}"
    namespaced = {
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "Deployment",
        "Service",
        "Secret",
        "ConfigMap",
    }
    found = {ident(o): o["metadata"].get("namespace") for o in objects if o["kind"] in namespaced}
    # The bootstrap ServiceAccount is where upstream's is, and clusteradm asks for it there.
    bootstrap = f"ServiceAccount {rbac.BOOTSTRAP_NAMESPACE}/{rbac.BOOTSTRAP_SERVICE_ACCOUNT}"
    assert found.pop(bootstrap, rbac.BOOTSTRAP_NAMESPACE) == rbac.BOOTSTRAP_NAMESPACE
    assert found and set(found.values()) == {wanted}, found


def test_hub_images_are_set_by_the_kustomization(
    hub_objects: list[Obj], klusterlet_objects: list[Obj]
) -> None:
    images = {
        c["image"]
        for o in [*hub_objects, *klusterlet_objects]
        if o["kind"] == "Deployment"
        for c in o["spec"]["template"]["spec"]["containers"]
    }
    assert images == {"quay.io/pyocm/pyocm:0.1.0"}


def test_the_bootstrap_secret_holds_the_users_file(klusterlet_objects: list[Obj]) -> None:
    secret = next(o for o in klusterlet_objects if o["kind"] == "Secret")
    assert secret["metadata"]["name"] == "bootstrap-hub-kubeconfig"
    assert base64.b64decode(secret["data"]["kubeconfig"]).decode() == BOOTSTRAP


def test_an_overlay_sets_the_cluster_name(tmp_path: Path) -> None:
    """As deploy/README.md tells users to: a configMapGenerator merged over the base's."""
    klusterlet_copy(tmp_path, bootstrap=BOOTSTRAP)
    overlay = tmp_path / "cluster7"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "resources:\n- ../klusterlet\n"
        "configMapGenerator:\n- name: klusterlet-config\n  namespace: open-cluster-management-agent\n"
        "  behavior: merge\n  literals:\n  - cluster-name=cluster7\n"
        "images:\n- name: quay.io/pyocm/pyocm\n  newName: registry.example.com/pyocm\n  newTag: dev\n",
        encoding="utf-8",
    )
    objects = render(overlay)
    config = next(o for o in objects if o["kind"] == "ConfigMap")
    agent = next(o for o in objects if o["kind"] == "Deployment")
    container = agent["spec"]["template"]["spec"]["containers"][0]
    assert config["data"] == {"cluster-name": "cluster7"}
    assert container["env"][0]["valueFrom"]["configMapKeyRef"]["name"] == config["metadata"]["name"]
    assert "--cluster-name=$(CLUSTER_NAME)" in container["args"]
    assert container["image"] == "registry.example.com/pyocm:dev"


def test_webhook_configurations_register_what_pyocm_webhook_serves(
    hub_objects: list[Obj],
) -> None:
    """Names, paths, kinds and groups as pyocm.hooks.webhooks defines the webhooks that
    ``pyocm webhook`` serves with its default gates; each calls the one Service."""
    served = {
        (w.name, w.path, w.mutating, w.group, tuple(sorted(w.resources)))
        for w in webhooks.enabled(Config())
    }
    registered = set()
    for obj in hub_objects:
        if obj["kind"] not in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
            continue
        for hook in obj["webhooks"]:
            service = hook["clientConfig"]["service"]
            assert (service["namespace"], service["name"], service["port"]) == (
                "open-cluster-management-hub",
                "cluster-manager-webhook",
                9443,
            )
            assert "caBundle" not in hook["clientConfig"]
            # upstream's settings: a refusal when the webhook cannot answer (never fail open),
            # no side effects, its timeout; CREATE and UPDATE, as the in-process rules.
            assert (hook["failurePolicy"], hook["sideEffects"], hook["timeoutSeconds"]) == (
                "Fail",
                "None",
                10,
            ), hook["name"]
            (rule,) = hook["rules"]
            assert sorted(rule["operations"]) == ["CREATE", "UPDATE"], hook["name"]
            assert hook.get("matchPolicy", "Equivalent") == "Equivalent", hook["name"]
            (group,) = rule["apiGroups"]
            registered.add(
                (
                    hook["name"],
                    service["path"],
                    obj["kind"] == "MutatingWebhookConfiguration",
                    group,
                    tuple(sorted(rule["resources"])),
                )
            )
    assert registered == served


def test_the_bootstrap_rbac_is_what_the_hub_controller_keeps(hub_objects: list[Obj]) -> None:
    """The hub controller makes sure the bootstrap role and bindings are as pyocm's code
    says; deployed, it may not grant them (it holds none of their rights), so the manifests
    must carry exactly those objects or the controller's write is refused."""
    wanted = {(o["kind"], o["metadata"]["name"]): models.wire(o) for o in rbac.bootstrap_objects()}
    shipped = {
        (o["kind"], o["metadata"]["name"]): o
        for o in hub_objects
        if (o["kind"], o["metadata"]["name"]) in wanted
    }
    assert shipped.keys() == wanted.keys()
    for key, obj in wanted.items():
        got = shipped[key]
        for field in ("rules", "roleRef", "subjects"):
            assert got.get(field) == obj.get(field), key
    accounts = [o for o in hub_objects if o["kind"] == "ServiceAccount"]
    assert {"name": rbac.BOOTSTRAP_SERVICE_ACCOUNT, "namespace": rbac.BOOTSTRAP_NAMESPACE} in [
        {k: a["metadata"].get(k) for k in ("name", "namespace")} for a in accounts
    ]
