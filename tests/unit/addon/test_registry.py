"""The live mapping of add-ons the framework controllers serve."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from pyocm.addon.agent import (
    ADDON_DEPLOYMENT_CONFIG,
    BUILT_IN_CONFIGS,
    AgentAddonOptions,
    ConfigGVR,
)
from pyocm.addon.registry import AddonRegistry

OTHER = ConfigGVR("example.com", "v1", "things")


@dataclass
class Named:
    name: str
    configs: tuple[ConfigGVR, ...] = ()

    def options(self) -> AgentAddonOptions:
        return AgentAddonOptions(name=self.name, supported_configs=self.configs)

    async def manifests(self, cluster: Any, addon: Any) -> list[dict[str, Any]]:
        return []


def test_added_addons_are_served_and_announced_and_fixed_ones_kept() -> None:
    fixed = Named("helloworld", (ADDON_DEPLOYMENT_CONFIG, OTHER))
    registry = AddonRegistry({"helloworld": fixed})
    heard: list[str] = []
    registry.on_added(heard.append)
    template = Named("hello-template")
    registry.add(template)
    assert dict(registry) == {"helloworld": fixed, "hello-template": template}
    assert heard == ["hello-template"]
    with pytest.raises(ValueError, match="already"):
        registry.add(Named("helloworld"))
    with pytest.raises(ValueError, match="already"):
        registry.add(Named("hello-template"))
    registry.remove("hello-template")
    registry.remove("helloworld")  # a fixed add-on never leaves
    assert list(registry) == ["helloworld"] and len(registry) == 1
    assert "hello-template" not in registry
    assert registry.config_gvrs() == [ADDON_DEPLOYMENT_CONFIG, OTHER, BUILT_IN_CONFIGS[1]]
