"""Approval of add-on CSRs: upstream's DefaultCSRApprover rules, pyocm's requester and
signer guards, and which CSRs the chain's add-on approver calls its own."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from pyocm.addon.agent import (
    AgentAddonOptions,
    RegistrationOption,
    default_groups,
    default_user,
    kube_client_configurations,
)
from pyocm.addon.registration.approve import (
    APPROVE_MESSAGE,
    AddonCsrApprover,
    default_csr_approver,
    kube_client_csr_approver,
)
from pyocm.pki import keys
from pyocm.pki.csr import build_csr
from pyocm.registration.hub.approvers import DECLINE
from pyocm.runtime.cache import Store

Obj = dict[str, Any]
CLUSTER: Obj = {"metadata": {"name": "c1"}, "spec": {}}
ADDON: Obj = {
    "metadata": {"name": "hello", "namespace": "c1"},
    "spec": {},
    "status": {"registrations": [{"type": "kubeClient", "kubeClient": {"subject": {"user": ""}}}]},
}
AGENT_USER = "system:open-cluster-management:c1:agent-x"


def csr(
    *,
    user: str | None = None,
    groups: tuple[str, ...] | None = None,
    username: str = AGENT_USER,
    signer: str = "kubernetes.io/kube-apiserver-client",
    name: str = "addon-c1-hello-abc",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> Obj:
    request = build_csr(
        keys.generate_private_key(),
        common_name=default_user("c1", "hello", "hello") if user is None else user,
        organizations=default_groups("c1", "hello") if groups is None else groups,
    )
    return {
        "metadata": {
            "name": name,
            "labels": {
                "open-cluster-management.io/cluster-name": "c1",
                "open-cluster-management.io/addon-name": "hello",
            }
            if labels is None
            else labels,
            "annotations": annotations or {},
        },
        "spec": {
            "request": base64.b64encode(request).decode(),
            "signerName": signer,
            "username": username,
        },
    }


async def default_check(obj: Obj) -> bool:
    return await default_csr_approver("hello")(CLUSTER, ADDON, obj)  # type: ignore[arg-type]


async def test_the_default_subject_from_the_cluster_agent_is_approved() -> None:
    assert await default_check(csr())


async def test_system_authenticated_as_a_third_group_is_still_approved() -> None:
    assert await default_check(csr(groups=(*default_groups("c1", "hello"), "system:authenticated")))


@pytest.mark.parametrize(
    "groups",
    [
        ("system:open-cluster-management:cluster:c1:addon:hello",),
        (*default_groups("c1", "hello"), "a", "b"),
        ("system:open-cluster-management:cluster:c1:addon:hello", "other"),
        (*default_groups("c2", "hello"),),
        (*default_groups("c1", "other"),),
    ],
    ids=["one", "four", "lacks-addon-group", "other-cluster", "other-addon"],
)
async def test_groups_must_be_the_default_ones(groups: tuple[str, ...]) -> None:
    assert not await default_check(csr(groups=groups))


@pytest.mark.parametrize(
    "user",
    [
        default_user("c2", "hello", "hello"),
        default_user("c1", "other", "hello"),
        default_user("c1", "hello", "someone"),
        "system:admin",
    ],
    ids=["other-cluster", "other-addon", "other-agent", "admin"],
)
async def test_the_common_name_must_be_the_default_user(user: str) -> None:
    assert not await default_check(csr(user=user))


@pytest.mark.parametrize(
    "username",
    [
        "system:open-cluster-management:c10:agent-x",  # upstream's prefix check passes this
        "system:open-cluster-management:c1",
        "system:open-cluster-management:cluster:c1:addon:hello:agent:hello",
        "system:open-cluster-management:c2:agent-x",
        "kubernetes-admin",
    ],
)
async def test_only_the_clusters_own_agent_may_ask(username: str) -> None:
    assert not await default_check(csr(username=username))


async def test_the_grpc_server_asks_for_the_agent_it_names() -> None:
    grpc = "system:serviceaccount:open-cluster-management-hub:grpc-server-sa"
    named = {"open-cluster-management.io/csr-user": AGENT_USER}
    assert await default_check(csr(username=grpc, annotations=named))
    other = {"open-cluster-management.io/csr-user": "system:open-cluster-management:c2:x"}
    assert not await default_check(csr(username=grpc, annotations=other))


async def test_a_request_that_is_no_csr_is_not_approved() -> None:
    obj = csr()
    obj["spec"]["request"] = base64.b64encode(b"nonsense").decode()
    assert not await default_check(obj)


async def test_the_kube_client_approver_refuses_other_signers() -> None:
    check = kube_client_csr_approver("hello")
    assert await check(CLUSTER, ADDON, csr())  # type: ignore[arg-type]
    assert not await check(CLUSTER, ADDON, csr(signer="example.com/hello"))  # type: ignore[arg-type]


class Hello:
    def __init__(self, *, approve: bool = True) -> None:
        self.approve = approve

    def options(self) -> AgentAddonOptions:
        return AgentAddonOptions(
            name="hello",
            registration=RegistrationOption(
                configurations=kube_client_configurations("hello", "hello"),
                approve=default_csr_approver("hello") if self.approve else None,
            ),
        )

    async def manifests(self, cluster: Any, addon: Any) -> list[Obj]:
        return []


def approver(
    *, clusters: tuple[Obj, ...] = (CLUSTER,), addons: tuple[Obj, ...] = (ADDON,), **kw: bool
) -> AddonCsrApprover:
    made = AddonCsrApprover({"hello": Hello(**kw)})
    cluster_store, addon_store = Store(), Store()
    for obj in clusters:
        cluster_store.upsert(obj)
    for obj in addons:
        addon_store.upsert(obj)
    made.bind(clusters=cluster_store, addons=addon_store)
    return made


async def test_the_addon_approver_approves_with_upstreams_message() -> None:
    verdict = await approver().review(csr())
    assert verdict is not None and verdict.approved
    assert verdict.message == APPROVE_MESSAGE == "Auto approving addon agent certificate."


@pytest.mark.parametrize(
    ("name", "labels"),
    [
        ("c1-abc", None),
        ("addon-c1-hello-abc", {"open-cluster-management.io/cluster-name": "c1"}),
        (
            "addon-c1-other-abc",
            {
                "open-cluster-management.io/cluster-name": "c1",
                "open-cluster-management.io/addon-name": "other",
            },
        ),
    ],
    ids=["not-addon-named", "no-addon-label", "unknown-addon"],
)
async def test_csrs_of_no_registered_addon_are_passed_on(
    name: str, labels: dict[str, str] | None
) -> None:
    assert await approver().review(csr(name=name, labels=labels)) is None


async def test_an_addon_csr_is_declined_without_an_approve_check() -> None:
    assert await approver(approve=False).review(csr()) is DECLINE


async def test_an_addon_csr_is_declined_without_its_cluster_or_addon() -> None:
    assert await approver(clusters=()).review(csr()) is DECLINE
    assert await approver(addons=()).review(csr()) is DECLINE


async def test_an_addon_csr_is_declined_when_its_subject_fails_the_rules() -> None:
    other = csr(user=default_user("c2", "hello", "hello"), groups=default_groups("c2", "hello"))
    assert await approver().review(other) is DECLINE


async def test_a_signer_the_addon_registers_no_registration_for_is_declined() -> None:
    unregistered: Obj = {**ADDON, "status": {}}
    assert await approver(addons=(unregistered,)).review(csr()) is DECLINE


async def test_the_approver_refuses_to_run_unbound() -> None:
    with pytest.raises(RuntimeError):
        await AddonCsrApprover({"hello": Hello()}).review(csr())


async def test_a_third_group_other_than_authenticated_is_not_approved() -> None:
    # Found by review: a third O naming another cluster's hub group (which the hub
    # binds to that cluster's roles) would give the agent that cluster's permissions.
    for third in (
        "system:open-cluster-management:c2",
        "system:open-cluster-management:managed-clusters",
    ):
        assert not await default_check(csr(groups=(*default_groups("c1", "hello"), third)))
    assert await default_check(csr(groups=(*default_groups("c1", "hello"), "system:authenticated")))
