"""Who may get a cluster-agent certificate: bootstrap identities join, agents renew themselves."""

from __future__ import annotations

import pytest

from pyocm.registration.hub.requesters import Requester, join_refusal, renewal_refusal

AGENT = "system:open-cluster-management:cb:agent1"
CB_GROUPS = ("system:open-cluster-management:cb", "system:open-cluster-management:managed-clusters")


def csr(username: str, *groups: str) -> dict[str, object]:
    return {"metadata": {"name": "cb-x"}, "spec": {"username": username, "groups": list(groups)}}


@pytest.mark.parametrize(
    ("username", "groups"),
    [
        (
            "system:bootstrap:abcdef",
            ("system:bootstrappers", "system:bootstrappers:managedcluster"),
        ),
        (
            "system:serviceaccount:open-cluster-management:cluster-bootstrap",
            ("system:serviceaccounts", "system:serviceaccounts:open-cluster-management"),
        ),
    ],
)
def test_bootstrap_identities_may_join(username: str, groups: tuple[str, ...]) -> None:
    assert join_refusal(csr(username, *groups)) is None


@pytest.mark.parametrize(
    ("username", "groups"),
    [
        ("system:open-cluster-management:ca:agent1", ("system:open-cluster-management:ca",)),
        ("system:bootstrap:abcdef", ("system:bootstrappers",)),  # not a managed-cluster token
        ("system:serviceaccount:default:cluster-bootstrap", ("system:serviceaccounts:default",)),
        ("admin", ("system:masters",)),
        ("", ()),
    ],
)
def test_anyone_else_is_refused_by_name(username: str, groups: tuple[str, ...]) -> None:
    refusal = join_refusal(csr(username, *groups))
    assert refusal is not None
    assert "CSR cb-x" in refusal and (username or "<nobody>") in refusal


def test_a_renewal_is_the_agent_asking_for_itself_in_its_group() -> None:
    assert (
        renewal_refusal(Requester(AGENT, frozenset(CB_GROUPS)), cluster="cb", common_name=AGENT)
        is None
    )


def test_another_agent_or_group_is_no_renewal() -> None:
    other = Requester("system:open-cluster-management:ca:agent1", frozenset())
    assert "not by the agent it names" in str(
        renewal_refusal(other, cluster="cb", common_name=AGENT)
    )
    mixed = Requester(AGENT, frozenset({"system:open-cluster-management:ca"}))
    assert "not in cluster cb's group" in str(
        renewal_refusal(mixed, cluster="cb", common_name=AGENT)
    )


def test_cluster_agents_are_recognised_by_name_or_group() -> None:
    assert Requester(AGENT, frozenset()).cluster_agent
    assert Requester("x", frozenset(CB_GROUPS[1:])).cluster_agent
    assert not Requester(
        "system:bootstrap:abcdef", frozenset({"system:bootstrappers"})
    ).cluster_agent
