"""Rendering deploy/'s kustomizations with kubectl's built-in kustomize, and checking the
objects against the schemas a cluster would hold them to: Kubernetes' published schemas
(``kubernetes-validate``, strict: unknown fields are errors) for built-in kinds, pyocm's own
CRD schemas for OCM's kinds."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import kubernetes_validate  # type: ignore[import-untyped,unused-ignore]
import yaml  # type: ignore[import-untyped,unused-ignore]

from pyocm.api import catalog

if TYPE_CHECKING:
    from pyocm.testing import HubProcess

Obj = dict[str, Any]
DEPLOY = Path(__file__).resolve().parent.parent.parent / "deploy"
OCM_GROUPS = frozenset(
    {
        "cluster.open-cluster-management.io",
        "addon.open-cluster-management.io",
        "work.open-cluster-management.io",
    }
)
#: The oldest Kubernetes release the manifests are meant for, and the newest schemas shipped.
KUBE_VERSIONS = ("1.30", kubernetes_validate.utils.latest_version())


def kubectl() -> str:
    found = shutil.which("kubectl")
    assert found, "kubectl is not on PATH"
    return found


def render_text(directory: Path) -> str:
    done = subprocess.run(
        [kubectl(), "kustomize", str(directory)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"kubectl kustomize {directory} failed:\n{done.stderr}"
    return done.stdout


def render(directory: Path) -> list[Obj]:
    return [doc for doc in yaml.safe_load_all(render_text(directory)) if doc]


def klusterlet_copy(target: Path, *, bootstrap: str) -> Path:
    """deploy/klusterlet copied to ``target`` with the bootstrap kubeconfig a user supplies."""
    copied = target / "klusterlet"
    shutil.copytree(DEPLOY / "klusterlet", copied)
    (copied / "bootstrap-hub-kubeconfig").write_text(bootstrap, encoding="utf-8")
    return copied


def is_custom(obj: Obj) -> bool:
    return str(obj["apiVersion"]).split("/")[0] in OCM_GROUPS


def problems(obj: Obj) -> list[str]:
    """Why ``obj`` would not pass its schema; empty when it does."""
    if is_custom(obj):
        return _custom_problems(obj)
    found = []
    for version in KUBE_VERSIONS:
        try:
            kubernetes_validate.validate(obj, version, strict=True)
        except kubernetes_validate.ValidationError as err:
            found.append(f"kube {version}: {'.'.join(map(str, err.path))}: {err.message}")
    return found


def _custom_problems(obj: Obj) -> list[str]:
    group, version = str(obj["apiVersion"]).split("/")
    resource = catalog.find(group=group, version=version, kind=obj["kind"])
    validator = jsonschema.Draft7Validator(resource.openapi_schema())
    return [
        f"{'.'.join(map(str, err.absolute_path))}: {err.message}"
        for err in validator.iter_errors(obj)
    ]


def ident(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj['kind']} {where}{meta.get('name')}"


def run(server: HubProcess, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [kubectl(), f"--kubeconfig={server.kubeconfig}", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        # a discovery cache of its own, so kubectl sees the CRDs it just applied
        env={"HOME": str(server.data_dir), "PATH": "/usr/bin:/bin"},
    )


def apply(server: HubProcess, manifests: str) -> None:
    """``kubectl apply --server-side``, taking over fields another manager set: the pyocm hub
    made the OCM CRDs when it started (conversion None), as ``pyocm controller
    --install-crds`` would have on a cluster the manifests later move to (deploy/README.md)."""
    done = run(
        server,
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager=pyocm-deploy",
        "-f",
        "-",
        stdin=manifests,
    )
    assert done.returncode == 0, f"kubectl apply failed:\n{done.stdout}\n{done.stderr}"
