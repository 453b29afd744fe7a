"""Issue 19's walk-through, as a person does it: ``pyocm up``, a ManifestWork with a
Deployment and a ConfigMap applied with kubectl, both seen on cluster1 with its own
kubeconfig, Applied and Available with the Deployment's readiness as feedback, an edit
arriving, and the resources gone with the work."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli import running_up

pytestmark = pytest.mark.kubectl

WORK = """
apiVersion: work.open-cluster-management.io/v1
kind: ManifestWork
metadata:
  name: hello
  namespace: cluster1
spec:
  workload:
    manifests:
      - apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: hello
          namespace: default
        spec:
          replicas: {replicas}
          selector:
            matchLabels: {{app: hello}}
          template:
            metadata:
              labels: {{app: hello}}
            spec:
              containers:
                - name: hello
                  image: nginx:1.27
      - apiVersion: v1
        kind: ConfigMap
        metadata:
          name: hello
          namespace: default
        data:
          greeting: {greeting}
  manifestConfigs:
    - resourceIdentifier:
        group: apps
        resource: deployments
        name: hello
        namespace: default
      feedbackRules:
        - type: WellKnownStatus
"""


def kubectl(
    kubeconfig: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kubectl", "--kubeconfig", str(kubeconfig), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def until(check: Callable[[], Any], *, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.3)
    raise AssertionError(f"not reached in {timeout}s; last: {last!r}")


def get_json(kubeconfig: Path, *args: str) -> dict[str, Any] | None:
    done = kubectl(kubeconfig, "get", *args, "-o", "json")
    return json.loads(done.stdout) if done.returncode == 0 else None


def test_a_work_on_pyocm_up(tmp_path: Path) -> None:
    with running_up(tmp_path, clusters=1) as fleet:
        hub, cluster1 = fleet.hub, fleet.clusters["cluster1"]
        applied = kubectl(hub, "apply", "-f", "-", stdin=WORK.format(replicas=2, greeting="hello"))
        assert applied.returncode == 0, applied.stderr

        def reported() -> dict[str, Any] | None:
            work = get_json(hub, "manifestwork", "hello", "-n", "cluster1")
            if work is None:
                return None
            conditions = {
                c["type"]: c["status"] for c in work.get("status", {}).get("conditions", [])
            }
            manifests = (
                work["status"].get("resourceStatus", {}).get("manifests", [])
                if "status" in work
                else []
            )
            values = {
                v["name"]: v["fieldValue"].get("integer")
                for m in manifests
                for v in (m.get("statusFeedback") or {}).get("values", [])
            }
            ok = conditions.get("Applied") == "True" and conditions.get("Available") == "True"
            return work if ok and values.get("ReadyReplicas") == 2 else None

        until(reported)
        deployment = get_json(cluster1, "deployment", "hello", "-n", "default")
        assert deployment is not None and deployment["status"]["readyReplicas"] == 2
        configmap = get_json(cluster1, "configmap", "hello", "-n", "default")
        assert configmap is not None and configmap["data"] == {"greeting": "hello"}

        edited = kubectl(hub, "apply", "-f", "-", stdin=WORK.format(replicas=3, greeting="bonjour"))
        assert edited.returncode == 0, edited.stderr
        until(
            lambda: (
                (get_json(cluster1, "configmap", "hello", "-n", "default") or {}).get("data")
                == {"greeting": "bonjour"}
            )
        )
        until(
            lambda: (
                (get_json(cluster1, "deployment", "hello", "-n", "default") or {})
                .get("status", {})
                .get("readyReplicas")
                == 3
            )
        )

        deleted = kubectl(hub, "delete", "manifestwork", "hello", "-n", "cluster1", "--wait=true")
        assert deleted.returncode == 0, deleted.stderr
        for kind in ("deployment", "configmap"):
            until(lambda kind=kind: get_json(cluster1, kind, "hello", "-n", "default") is None)  # type: ignore[misc]
        assert get_json(hub, "manifestwork", "hello", "-n", "cluster1") is None
        records = get_json(cluster1, "appliedmanifestworks")
        assert records is not None and records["items"] == []
