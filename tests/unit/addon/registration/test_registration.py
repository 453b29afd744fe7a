"""The registration controller's status writes (upstream's addonRegistrationController):
ownership gate, registrations by driver, install namespace precedence, RegistrationApplied
reasons and messages, and the permission helper's RoleBindings."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pyocm.addon.agent import (
    AgentAddonOptions,
    ConfigGVR,
    PermissionConfig,
    RegistrationConfig,
    RegistrationOption,
    Subject,
    SubjectNotReady,
    default_groups,
    default_user,
    kube_client_configurations,
)
from pyocm.addon.registration.controller import RegistrationController
from pyocm.addon.registration.permissions import (
    CurrentCluster,
    SingleNamespace,
    permission_binding,
)
from pyocm.addon.registration.status import build_registrations
from pyocm.base.clock import FakeClock
from pyocm.runtime.cache import Store

Obj = dict[str, Any]
CMA_OWNER = {
    "apiVersion": "addon.open-cluster-management.io/v1alpha1",
    "kind": "ClusterManagementAddOn",
    "name": "hello",
    "uid": "cma-uid",
}


def mca(
    *, owned: bool = True, annotations: dict[str, str] | None = None, status: Obj | None = None
) -> Obj:
    meta: Obj = {"name": "hello", "namespace": "c1", "uid": "mca-uid", "resourceVersion": "5"}
    if owned:
        meta["ownerReferences"] = [CMA_OWNER]
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": {}, "status": status or {}}


class Hub:
    def __init__(self) -> None:
        self.patches: list[Obj] = []

    async def patch(self, kind: Any, name: str, patch: Obj, **options: Any) -> Obj:
        assert (kind.kind, name, options) == (
            "ManagedClusterAddOn",
            "hello",
            {"namespace": "c1", "subresource": "status"},
        )
        self.patches.append(patch)
        return patch


class Cache:
    def __init__(self, *objs: Obj) -> None:
        self.store = Store()
        for obj in objs:
            self.store.upsert(obj)


class Addon:
    def __init__(self, options: AgentAddonOptions) -> None:
        self._options = options

    def options(self) -> AgentAddonOptions:
        return self._options

    async def manifests(self, cluster: Any, addon: Any) -> list[Obj]:
        return []


async def reconcile(options: AgentAddonOptions, addon: Obj) -> Hub:
    hub = Hub()
    controller = RegistrationController(
        hub,  # type: ignore[arg-type]
        addons={"hello": Addon(options)},
        clusters=Cache({"metadata": {"name": "c1"}, "spec": {}}),  # type: ignore[arg-type]
        mcas=Cache(addon),  # type: ignore[arg-type]
        clock=FakeClock(),
    )
    await controller.reconcile("c1/hello")
    return hub


def registration(
    *, permissions: PermissionConfig | None = None, configs: list[RegistrationConfig] | None = None
) -> RegistrationOption:
    if configs is None:
        return RegistrationOption(
            configurations=kube_client_configurations("hello", "hello-agent"),
            permissions=permissions,
        )
    fixed = configs

    async def configurations(cluster: Any, addon: Any) -> list[RegistrationConfig]:
        return fixed

    return RegistrationOption(configurations=configurations, permissions=permissions)


def condition(patch: Obj) -> tuple[str, str, str]:
    [found] = patch["status"]["conditions"]
    assert found["type"] == "RegistrationApplied"
    return found["status"], found["reason"], found["message"]


async def test_nothing_is_written_before_the_cma_owns_the_addon() -> None:
    hub = await reconcile(AgentAddonOptions("hello", registration=registration()), mca(owned=False))
    assert hub.patches == []


async def test_no_registration_option_is_nil_registration() -> None:
    options = AgentAddonOptions(
        "hello",
        supported_configs=[
            ConfigGVR("addon.open-cluster-management.io", "v1alpha1", "addondeploymentconfigs")
        ],
    )
    [patch] = (await reconcile(options, mca())).patches
    assert patch["metadata"] == {"resourceVersion": "5"}
    assert patch["status"]["supportedConfigs"] == [
        {"group": "addon.open-cluster-management.io", "resource": "addondeploymentconfigs"}
    ]
    assert condition(patch) == (
        "True",
        "NilRegistration",
        "Registration of the addon agent is configured",
    )
    assert "registrations" not in patch["status"]


async def test_registrations_and_namespace_are_written_with_set_permission_applied() -> None:
    [patch] = (
        await reconcile(AgentAddonOptions("hello", registration=registration()), mca())
    ).patches
    assert patch["status"]["registrations"] == [
        {
            "type": "kubeClient",
            "kubeClient": {
                "subject": {
                    "user": "system:open-cluster-management:cluster:c1:addon:hello:agent:hello-agent",
                    "groups": [
                        "system:open-cluster-management:cluster:c1:addon:hello",
                        "system:open-cluster-management:addon:hello",
                    ],
                }
            },
        }
    ]
    assert patch["status"]["namespace"] == "open-cluster-management-agent-addon"
    assert condition(patch) == (
        "True",
        "SetPermissionApplied",
        "Registration of the addon agent is configured",
    )


async def test_an_addon_already_as_desired_is_not_patched() -> None:
    first = mca()
    [patch] = (
        await reconcile(AgentAddonOptions("hello", registration=registration()), first)
    ).patches
    settled = copy.deepcopy(first)
    settled["status"] = patch["status"]
    assert (
        await reconcile(AgentAddonOptions("hello", registration=registration()), settled)
    ).patches == []


async def test_a_subject_not_ready_is_permission_config_pending() -> None:
    async def pending(api: Any, cluster: Any, addon: Any) -> None:
        raise SubjectNotReady()

    [patch] = (
        await reconcile(
            AgentAddonOptions("hello", registration=registration(permissions=pending)), mca()
        )
    ).patches
    assert condition(patch) == (
        "False",
        "PermissionConfigPending",
        "registration subject not ready",
    )
    assert patch["status"]["registrations"]


async def test_a_permission_error_is_set_permission_failed_and_retried() -> None:
    async def broken(api: Any, cluster: Any, addon: Any) -> None:
        raise ValueError("role missing")

    hub = Hub()
    controller = RegistrationController(
        hub,  # type: ignore[arg-type]
        addons={
            "hello": Addon(
                AgentAddonOptions("hello", registration=registration(permissions=broken))
            )
        },
        clusters=Cache({"metadata": {"name": "c1"}, "spec": {}}),  # type: ignore[arg-type]
        mcas=Cache(mca()),  # type: ignore[arg-type]
        clock=FakeClock(),
    )
    with pytest.raises(ValueError, match="role missing"):
        await controller.reconcile("c1/hello")
    [patch] = hub.patches
    assert condition(patch) == (
        "False",
        "SetPermissionFailed",
        "Failed to set permission for hub agent: role missing",
    )
    assert "registrations" not in patch["status"] and "namespace" not in patch["status"]


async def test_the_namespace_annotation_and_the_addons_own_namespace_take_precedence() -> None:
    annotated = mca(
        annotations={"addon.open-cluster-management.io/v1alpha1-install-namespace": "ns-a"}
    )
    [patch] = (
        await reconcile(AgentAddonOptions("hello", registration=registration()), annotated)
    ).patches
    assert patch["status"]["namespace"] == "ns-a"

    async def own(api: Any, addon: Any) -> str:
        return "ns-own"

    async def empty(api: Any, addon: Any) -> str:
        return ""

    [patch] = (
        await reconcile(
            AgentAddonOptions("hello", registration=registration(), install_namespace=own),
            annotated,
        )
    ).patches
    assert patch["status"]["namespace"] == "ns-own"
    [patch] = (
        await reconcile(
            AgentAddonOptions("hello", registration=registration(), install_namespace=empty),
            annotated,
        )
    ).patches
    assert patch["status"]["namespace"] == "ns-a"


KUBE = RegistrationConfig("kubernetes.io/kube-apiserver-client", Subject())
SIGNER = RegistrationConfig("example.com/s1", Subject("u", ("g",), ("ou",)))


def test_a_csr_driver_fills_an_empty_subject_with_the_default() -> None:
    existing = [{"type": "kubeClient", "kubeClient": {"driver": "csr"}}]
    [built] = build_registrations([KUBE], existing, cluster="c1", addon="hello")  # type: ignore[list-item]
    assert built["kubeClient"] == {
        "driver": "csr",
        "subject": {
            "user": default_user("c1", "hello", "hello"),
            "groups": list(default_groups("c1", "hello")),
        },
    }


def test_a_token_driver_keeps_the_subject_the_agent_reported() -> None:
    reported = {"user": "system:serviceaccount:c1:hello-agent"}
    existing = [{"type": "kubeClient", "kubeClient": {"driver": "token", "subject": reported}}]
    configs = [RegistrationConfig("kubernetes.io/kube-apiserver-client", Subject("x", ("y",)))]
    [built] = build_registrations(configs, existing, cluster="c1", addon="hello")  # type: ignore[arg-type]
    assert built["kubeClient"] == {"driver": "token", "subject": reported}


def test_no_driver_writes_an_empty_subject_as_go_encodes_it() -> None:
    [built] = build_registrations([KUBE], [], cluster="c1", addon="hello")
    assert built == {"type": "kubeClient", "kubeClient": {"subject": {"user": ""}}}


SA = "system:serviceaccount:c1:hello-agent"


def test_custom_signers_are_written_as_configured_and_drivers_match_by_kube_client_position() -> (
    None
):
    existing = [
        {"type": "customSigner", "customSigner": {"signerName": "example.com/s1"}},
        {"type": "kubeClient", "kubeClient": {"driver": "token", "subject": {"user": SA}}},
    ]
    built = build_registrations([SIGNER, KUBE], existing, cluster="c1", addon="hello")  # type: ignore[arg-type]
    assert built == [
        {
            "type": "customSigner",
            "customSigner": {
                "signerName": "example.com/s1",
                "subject": {"user": "u", "groups": ["g"], "organizationUnits": ["ou"]},
            },
        },
        {"type": "kubeClient", "kubeClient": {"driver": "token", "subject": {"user": SA}}},
    ]


def test_a_token_driver_subject_is_kept_only_when_it_is_the_addons_service_account() -> None:
    """The agent writes it, and hub permissions are bound to it: only the ServiceAccount
    upstream's token infrastructure makes, in the cluster's namespace, with its groups."""

    def built(subject: Obj) -> Obj:
        existing = [{"type": "kubeClient", "kubeClient": {"driver": "token", "subject": subject}}]
        [found] = build_registrations([KUBE], existing, cluster="c1", addon="hello")  # type: ignore[list-item]
        return dict(found["kubeClient"]["subject"])

    good = {"user": SA, "groups": ["system:serviceaccounts", "system:serviceaccounts:c1"]}
    assert built(good) == good
    assert built({"user": SA, "groups": ["system:unauthenticated"]}) == {"user": ""}
    assert built({"user": "system:serviceaccount:c2:hello-agent"}) == {"user": ""}
    assert built({"user": "", "groups": ["system:serviceaccounts"]}) == {"user": ""}


REGISTERED: Obj = mca(
    status={
        "registrations": [
            {
                "type": "kubeClient",
                "kubeClient": {"subject": {"user": "u1", "groups": ["g1", "system:authenticated"]}},
            }
        ]
    }
)


def test_current_cluster_binds_in_the_cluster_namespace_owned_by_the_addon() -> None:
    binding = permission_binding(
        CurrentCluster("hello-role"), {"metadata": {"name": "c1"}}, REGISTERED
    )  # type: ignore[arg-type]
    assert binding == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": "open-cluster-management:hello:clusterrole:agent",
            "namespace": "c1",
            "labels": {
                "open-cluster-management.io/addon-name": "hello",
                "open-cluster-management.io/addon-template-name": "",
            },
            "ownerReferences": [
                {
                    "apiVersion": "addon.open-cluster-management.io/v1beta1",
                    "kind": "ManagedClusterAddOn",
                    "name": "hello",
                    "uid": "mca-uid",
                }
            ],
        },
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "hello-role",
        },
        "subjects": [
            {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "u1"},
            {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "g1"},
        ],
    }


def test_single_namespace_binds_the_given_role_without_an_owner() -> None:
    role = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"}
    binding = permission_binding(
        SingleNamespace("shared", role), {"metadata": {"name": "c1"}}, REGISTERED
    )  # type: ignore[arg-type,typeddict-item]
    assert binding["metadata"]["name"] == "open-cluster-management:hello:role:agent"
    assert binding["metadata"]["namespace"] == "shared"
    assert "ownerReferences" not in binding["metadata"]
    assert binding["roleRef"] == role


def test_no_kube_client_subject_is_not_ready() -> None:
    with pytest.raises(SubjectNotReady):
        permission_binding(CurrentCluster("r"), {"metadata": {"name": "c1"}}, mca())  # type: ignore[arg-type]


async def test_a_failing_install_namespace_leaves_the_namespace_written() -> None:
    # Found by review: the default namespace was written when the add-on's own answer
    # failed, and the agent then moved the credential there (upstream writes nothing).
    async def install_namespace(_api: Any, _addon: Any) -> str:
        raise RuntimeError("failed to get deployment config for addon hello")

    options = AgentAddonOptions(
        name="hello", registration=registration(), install_namespace=install_namespace
    )
    hub = Hub()
    controller = RegistrationController(
        hub,  # type: ignore[arg-type]
        addons={"hello": Addon(options)},
        clusters=Cache({"metadata": {"name": "c1"}, "spec": {}}),  # type: ignore[arg-type]
        mcas=Cache(mca(status={"namespace": "custom-ns"})),  # type: ignore[arg-type]
        clock=FakeClock(),
    )
    with pytest.raises(RuntimeError):
        await controller.reconcile("c1/hello")
    assert [p["status"]["namespace"] for p in hub.patches if "namespace" in p["status"]] == []
