"""A template add-on's registration (upstream templateagent/registration.go): the
registrations its template asks for, who approves which CSR (with pyocm's custom-signer
guard), the hub permissions, and the errors for templates that cannot be had."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from pyocm.addon.agent import KUBE_CLIENT_SIGNER, Subject, default_groups, default_user
from pyocm.addon.registration.permissions import CurrentCluster, SingleNamespace
from pyocm.addon.template import refs
from pyocm.addon.template.registration import TemplateRegistration, hub_permissions
from pyocm.base.clock import RealClock
from pyocm.pki import keys
from pyocm.pki.csr import build_csr
from pyocm.runtime.cache import Store

Obj = dict[str, Any]
CLUSTER: Any = {"metadata": {"name": "c1"}, "spec": {}}
AGENT_USER = "system:open-cluster-management:c1:agent-x"
SIGNER = "example.com/signer-name"
TEMPLATE: Obj = {
    "metadata": {"name": "hello-template"},
    "spec": {
        "addonName": "hello",
        "agentSpec": {"workload": {"manifests": []}},
        "registration": [
            {
                "type": "KubeClient",
                "kubeClient": {
                    "hubPermissions": [
                        {
                            "type": "CurrentCluster",
                            "currentCluster": {"clusterRoleName": "cm-admin"},
                        },
                        {
                            "type": "SingleNamespace",
                            "singleNamespace": {
                                "namespace": "open-cluster-management",
                                "roleRef": {
                                    "apiGroup": "rbac.authorization.k8s.io",
                                    "kind": "Role",
                                    "name": "cm-reader",
                                },
                            },
                        },
                    ]
                },
            },
            {
                "type": "CustomSigner",
                "customSigner": {
                    "signerName": SIGNER,
                    "subject": {
                        "user": "user1",
                        "groups": ["g1", "g2"],
                        "organizationUnit": ["o1"],
                    },
                    "signingCA": {"name": "ca-secret"},
                },
            },
        ],
    },
}


def mca(spec_hash: str = "abc", template: str = "hello-template") -> Any:
    return {
        "metadata": {"name": "hello", "namespace": "c1", "uid": "u-1"},
        "status": {
            "configReferences": [
                {
                    "group": "addon.open-cluster-management.io",
                    "resource": "addontemplates",
                    "desiredConfig": {"name": template, "specHash": spec_hash},
                }
            ],
            "registrations": [
                {
                    "type": "kubeClient",
                    "kubeClient": {
                        "subject": {
                            "user": default_user("c1", "hello", "hello-agent"),
                            "groups": list(default_groups("c1", "hello")),
                        }
                    },
                }
            ],
        },
    }


def registration(template: Obj = TEMPLATE) -> TemplateRegistration:
    templates = Store()
    templates.upsert(copy.deepcopy(template))
    return TemplateRegistration("hello", templates=templates, clock=RealClock())


def csr(
    *,
    user: str,
    groups: tuple[str, ...],
    signer: str,
    username: str = AGENT_USER,
    units: tuple[str, ...] = (),
    dns_names: tuple[str, ...] = (),
) -> Obj:
    request = build_csr(
        keys.generate_private_key(),
        common_name=user,
        organizations=groups,
        organizational_units=units,
        dns_names=dns_names,
    )
    return {
        "metadata": {"name": "addon-c1-hello-x", "labels": {}},
        "spec": {
            "signerName": signer,
            "username": username,
            "request": base64.b64encode(request).decode(),
        },
    }


async def test_configurations_follow_the_template() -> None:
    found = await registration().configurations(CLUSTER, mca())
    assert [(c.signer_name, c.subject) for c in found] == [
        (
            KUBE_CLIENT_SIGNER,
            Subject(default_user("c1", "hello", "hello-agent"), default_groups("c1", "hello")),
        ),
        (SIGNER, Subject("user1", ("g1", "g2"), ("o1",))),
    ]


async def test_a_custom_signer_without_subject_gets_the_default_one() -> None:
    template = copy.deepcopy(TEMPLATE)
    del template["spec"]["registration"][1]["customSigner"]["subject"]
    [_, custom] = await registration(template).configurations(CLUSTER, mca())
    assert custom.subject == Subject(
        default_user("c1", "hello", "hello-agent"), default_groups("c1", "hello")
    )


async def test_errors_name_the_step_and_the_cause() -> None:
    with pytest.raises(refs.TemplateError) as empty:
        await registration().configurations(CLUSTER, mca(spec_hash=""))
    assert str(empty.value) == (
        "CSRConfigurations failed to get addon template for addon c1/hello: "
        "addon hello template desired spec hash is empty"
    )
    with pytest.raises(refs.TemplateError) as gone:
        await registration().permissions(None, CLUSTER, mca(template="nope"))  # type: ignore[arg-type]
    assert str(gone.value) == (
        "PermissionConfig failed to get addon template for addon c1/hello: "
        'addontemplate.addon.open-cluster-management.io "nope" not found'
    )
    no_refs: Any = {"metadata": {"name": "hello", "namespace": "c1"}, "status": {}}
    with pytest.raises(refs.TemplateError) as nil:
        await registration().sign(None, CLUSTER, no_refs, {"spec": {}})  # type: ignore[arg-type]
    assert str(nil.value) == (
        "CSRSign failed to get addon template for addon c1/hello, template is nil"
    )


async def test_kube_client_csrs_are_approved_by_upstreams_default_rules() -> None:
    good = csr(
        user=default_user("c1", "hello", "hello-agent"),
        groups=default_groups("c1", "hello"),
        signer=KUBE_CLIENT_SIGNER,
    )
    assert await registration().approve(CLUSTER, mca(), good)
    # The agent name of a template add-on is <addon>-agent: the framework default is not.
    wrong_agent = csr(
        user=default_user("c1", "hello", "hello"),
        groups=default_groups("c1", "hello"),
        signer=KUBE_CLIENT_SIGNER,
    )
    assert not await registration().approve(CLUSTER, mca(), wrong_agent)
    # No approval without a template to read the rules from.
    assert not await registration().approve(CLUSTER, mca(spec_hash=""), good)


async def test_custom_signer_csrs_need_the_clusters_agent_and_the_templates_subject() -> None:
    def signed(**given: Any) -> Obj:
        wanted: dict[str, Any] = {
            "user": "user1",
            "groups": ("g1", "g2"),
            "units": ("o1",),
            "signer": SIGNER,
            "dns_names": ("hello.addon.open-cluster-management.io",),
        }
        return csr(**{**wanted, **given})

    assert await registration().approve(CLUSTER, mca(), signed())
    assert await registration().approve(CLUSTER, mca(), signed(dns_names=()))
    other_cluster = signed(username="system:open-cluster-management:c2:agent-x")
    assert not await registration().approve(CLUSTER, mca(), other_cluster)
    assert not await registration().approve(CLUSTER, mca(), signed(user="admin"))
    assert not await registration().approve(CLUSTER, mca(), signed(groups=("g1", "system:masters")))
    assert not await registration().approve(CLUSTER, mca(), signed(units=("admins",)))
    assert not await registration().approve(
        CLUSTER, mca(), signed(dns_names=("kubernetes.default.svc",))
    )
    assert not await registration().approve(CLUSTER, mca(), signed(signer="other.com/signer"))


async def test_a_custom_signer_naming_a_kubernetes_signer_is_not_honoured() -> None:
    """It would have the hub's own CA sign a subject of the template's choosing."""
    template = copy.deepcopy(TEMPLATE)
    spoof: dict[str, Any] = {
        "user": "system:open-cluster-management:c2:spoofed",
        "groups": ["system:masters"],
    }
    template["spec"]["registration"] = [
        {
            "type": "CustomSigner",
            "customSigner": {
                "signerName": KUBE_CLIENT_SIGNER,
                "subject": spoof,
                "signingCA": {"name": "x"},
            },
        }
    ]
    assert await registration(template).configurations(CLUSTER, mca()) == []
    request = csr(user=spoof["user"], groups=tuple(spoof["groups"]), signer=KUBE_CLIENT_SIGNER)
    assert not await registration(template).approve(CLUSTER, mca(), request)


def test_hub_permissions_and_their_errors() -> None:
    [client, _] = TEMPLATE["spec"]["registration"]
    assert hub_permissions(client["kubeClient"]) == [
        CurrentCluster("cm-admin"),
        SingleNamespace(
            "open-cluster-management",
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-reader"},
        ),
    ]
    with pytest.raises(refs.TemplateError, match=r"^current cluster is required when"):
        hub_permissions({"hubPermissions": [{"type": "CurrentCluster"}]})
    with pytest.raises(refs.TemplateError, match=r"^single namespace is required when"):
        hub_permissions({"hubPermissions": [{"type": "SingleNamespace"}]})
