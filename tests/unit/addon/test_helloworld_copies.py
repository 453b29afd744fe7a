"""Test copies of helloworld (``helloworld-<suffix>``): the same add-on under another name,
so a hub can run several add-ons of pyocm's own (the fleet benchmark's three)."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.addon.agent import default_user
from pyocm.addon.builtin import addons_named, is_helloworld
from pyocm.addon.helloworld.addon import AGENT_NAME, cluster_management_addon

CLUSTER: Any = {"metadata": {"name": "cluster1"}}


def addon(name: str) -> Any:
    return {"metadata": {"name": name, "namespace": "cluster1"}}


async def test_a_copy_registers_deploys_and_is_managed_under_its_own_name() -> None:
    copy = addons_named(["helloworld-b"])["helloworld-b"]
    options = copy.options()
    assert options.name == "helloworld-b"
    assert options.registration is not None
    [config] = await options.registration.configurations(CLUSTER, addon("helloworld-b"))
    assert config.subject.user == default_user("cluster1", "helloworld-b", AGENT_NAME)
    found = await copy.manifests(CLUSTER, addon("helloworld-b"))
    assert [o["metadata"]["name"] for o in found] == [
        "helloworld-b-agent-sa",
        "helloworld-b-agent",
        "helloworld-b-agent",
    ]
    container = found[2]["spec"]["template"]["spec"]["containers"][0]
    assert container["args"][:4] == ["pyocm", "addon", "agent", "helloworld-b"]
    assert cluster_management_addon("helloworld-b")["metadata"]["name"] == "helloworld-b"


async def test_helloworld_itself_keeps_its_names() -> None:
    found = await addons_named(["helloworld"])["helloworld"].manifests(CLUSTER, addon("helloworld"))
    assert [o["metadata"]["name"] for o in found] == [
        "helloworld-agent-sa",
        "helloworld-agent",
        "helloworld-agent",
    ]


@pytest.mark.parametrize("name", ["helloworld-", "helloworld-B", "helloworld_b", "hello-b"])
def test_other_names_are_refused(name: str) -> None:
    assert not is_helloworld(name)
    with pytest.raises(ValueError, match=f"unknown add-on\\(s\\) {name} "):
        addons_named([name])
