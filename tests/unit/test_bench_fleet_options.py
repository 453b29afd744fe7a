"""What ``pyocm bench fleet --agents`` makes each simulated cluster run."""

from __future__ import annotations

import pytest

from pyocm.bench.fleet import Scenario, fleet_options


def scenario(name: str, agents: str) -> Scenario:
    return Scenario.named(
        name, clusters=10, duration=1, join_rate=None, lease_seconds=None, agents=agents
    )


def test_all_agents_run_the_work_agent_and_the_add_on_side() -> None:
    options = fleet_options(scenario("rotation-storm", "all"))
    assert options.work is not None
    assert options.addons.enabled and options.addon_agents


def test_registration_alone_runs_neither() -> None:
    options = fleet_options(scenario("rotation-storm", "registration"))
    assert options.work is None
    assert not options.addons.enabled and not options.addon_agents
    assert options.clusters == 10 and options.auto_accept


@pytest.mark.parametrize("name", ["works", "addons", "template"])
def test_scenarios_of_works_and_add_ons_refuse_registration_alone(name: str) -> None:
    with pytest.raises(ValueError, match=f"the {name} scenario needs --agents all"):
        scenario(name, "registration")


def test_an_unknown_agents_value_is_refused() -> None:
    with pytest.raises(ValueError, match="--agents is all or registration"):
        scenario("steady", "work")
