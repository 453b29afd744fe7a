"""An add-on agent's issued Secret written out as files, as a Secret volume mounts it."""

from __future__ import annotations

import base64
import stat
from pathlib import Path
from typing import Any

import pytest

from pyocm.addon.builtin import addons_named
from pyocm.addon.secretvolume import SecretVolume
from pyocm.kube.status import not_found


class Spoke:
    def __init__(self) -> None:
        self.data: dict[str, str] | None = None

    async def get(self, _kind: Any, name: str, *, namespace: str) -> dict[str, Any]:
        if self.data is None:
            raise not_found(resource="secrets", group="", name=name)
        encoded = {k: base64.b64encode(v.encode()).decode() for k, v in self.data.items()}
        return {"metadata": {"name": name, "namespace": namespace}, "data": encoded}


async def test_the_secret_becomes_private_files_kept_current(tmp_path: Path) -> None:
    spoke = Spoke()
    (tmp_path / "hub").mkdir(mode=0o755)  # already there, too open
    volume = SecretVolume(spoke, namespace="default", name="hw-hub-kubeconfig",  # type: ignore[arg-type]
                          directory=tmp_path / "hub")  # fmt: skip
    assert not await volume.refresh() and not volume.ready  # not issued yet
    spoke.data = {"kubeconfig": "k1", "tls.crt": "c1", "tls.key": "key1"}
    assert await volume.refresh() and volume.ready
    assert (tmp_path / "hub" / "tls.key").read_text() == "key1"
    assert stat.S_IMODE((tmp_path / "hub" / "tls.key").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "hub").stat().st_mode) == 0o700
    assert not await volume.refresh()  # unchanged: no restart
    spoke.data = {"kubeconfig": "k1", "tls.crt": "c2"}  # rotated, a key gone
    assert await volume.refresh()
    assert (tmp_path / "hub" / "tls.crt").read_text() == "c2"
    assert sorted(p.name for p in (tmp_path / "hub").iterdir()) == ["kubeconfig", "tls.crt"]


def test_only_built_in_add_ons_are_known() -> None:
    assert list(addons_named(["helloworld"])) == ["helloworld"]
    with pytest.raises(ValueError, match=r"unknown add-on\(s\) nope \(pyocm has: helloworld\)"):
        addons_named(["helloworld", "nope"])
