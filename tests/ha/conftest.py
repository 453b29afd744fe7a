from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.ha.hub import HaHub, running_ha_hub


@pytest.fixture(scope="module")
def ha(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HaHub]:
    """One HA hub with its fleet for a module's tests: each fault test puts back what
    it killed, so the next one starts from three etcd members and two replicas."""
    with running_ha_hub(tmp_path_factory.mktemp("ha")) as hub:
        yield hub
