"""``pyocm create work``'s reading of -f (files, directories, stdin, documents, Lists)
and its checks, and ``pyocm get works``' rows."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pyocm.cli import manifestfiles
from pyocm.cli.manifestfiles import ManifestFileError
from pyocm.cli.works import work_rows

NOW = datetime(2025, 3, 1, 0, 5, tzinfo=UTC)

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: cm1
  namespace: default
data:
  when: 2001-12-14
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: hello, namespace: default}
spec: {replicas: 1}
"""


def write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(text)
    return str(path)


def failure(sources: list[str], *, stdin: str = "") -> str:
    with pytest.raises(ManifestFileError) as caught:
        manifestfiles.read(sources, stdin=io.StringIO(stdin))
    return str(caught.value)


def test_documents_lists_directories_and_stdin(tmp_path: Path) -> None:
    multi = write(tmp_path, "multi.yaml", f"---\n{CONFIGMAP}---\n---\n{DEPLOYMENT}")
    listed = write(
        tmp_path,
        "list.json",
        '{"apiVersion": "v1", "kind": "List", "items": ['
        '{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}},'
        '{"apiVersion": "v1", "kind": "ServiceList", "items": ['
        '{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}}]}]}',
    )
    folder = tmp_path / "more"
    folder.mkdir()
    write(folder, "b.yml", DEPLOYMENT.replace("hello", "b"))
    write(folder, "a.yaml", CONFIGMAP.replace("cm1", "a"))
    write(folder, "notes.txt", "not a manifest")
    stdin = CONFIGMAP.replace("cm1", "from-stdin")
    found = manifestfiles.read([multi, listed, str(folder), "-"], stdin=io.StringIO(stdin))
    assert [(m.obj["kind"], m.obj["metadata"]["name"]) for m in found] == [
        ("ConfigMap", "cm1"),
        ("Deployment", "hello"),
        ("Secret", "s1"),
        ("Service", "svc"),
        ("ConfigMap", "a"),
        ("Deployment", "b"),
        ("ConfigMap", "from-stdin"),
    ]
    assert [m.source for m in found[:4]] == [
        f"{multi}, document 1",
        f"{multi}, document 3",
        f"{listed}, document 1, item 1",
        f"{listed}, document 1, item 2, item 1",
    ]
    assert found[-1].source == "STDIN, document 1"
    # A timestamp stays the text it was written as, as kubectl's YAML reader keeps it.
    assert found[0].obj["data"]["when"] == "2001-12-14"


def test_unreadable_empty_and_invalid_sources(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.yaml")
    assert failure([missing]) == f"cannot read {missing}: No such file or directory"
    empty = write(tmp_path, "empty.yaml", "---\n# nothing\n---\n")
    assert failure([empty]) == f"no manifests in {empty}"
    (tmp_path / "nothing").mkdir()
    assert failure([str(tmp_path / "nothing")]).endswith(
        "no .json, .yaml, .yml files in the directory"
    )
    broken = write(tmp_path, "broken.yaml", "kind: [unclosed\n")
    assert failure([broken]).startswith(f"{broken}: not valid YAML: ")
    scalar = write(tmp_path, "scalar.yaml", "just text\n")
    assert failure([scalar]) == f"{scalar}, document 1: not a Kubernetes object but a string"
    binary = write(tmp_path, "binary.yaml", "")
    Path(binary).write_bytes(b"\xff\xfe\x00")
    assert failure([binary]).startswith(f"cannot read {binary}: ")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (CONFIGMAP.replace("apiVersion: v1\n", ""), "apiVersion must be set in manifest"),
        (CONFIGMAP.replace("kind: ConfigMap\n", ""), "kind must be set in manifest"),
        (CONFIGMAP.replace("  name: cm1\n", ""), "name must be set in manifest"),
        (CONFIGMAP.replace("name: cm1", 'name: ""'), "name must be set in manifest"),
        (
            CONFIGMAP.replace("name: cm1", "generateName: cm-"),
            "name must be set in manifest",
        ),
        (
            CONFIGMAP.replace("name: cm1", "name: cm1\n  generateName: cm-"),
            "generateName must not be set in manifest",
        ),
    ],
)
def test_each_manifest_is_checked_as_upstream_checks_it(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = write(tmp_path, "m.yaml", f"{DEPLOYMENT}---\n{text}")
    assert failure([path]) == f"{path}, document 2: {problem}"


def test_duplicates_are_refused_with_both_places(tmp_path: Path) -> None:
    first = write(tmp_path, "a.yaml", CONFIGMAP)
    second = write(tmp_path, "b.yaml", f"{DEPLOYMENT}---\n{CONFIGMAP}")
    assert failure([first, second]) == (
        f"{second}, document 2: duplicate manifest for resource default/cm1 "
        f"with resource type v1.ConfigMap (as {first}, document 1)"
    )
    other_namespace = CONFIGMAP.replace("namespace: default", "namespace: other")
    other = write(tmp_path, "c.yaml", other_namespace)
    assert len(manifestfiles.read([first, other])) == 2


def work(name: str, cluster: str, manifests: int, conditions: list[dict[str, Any]]) -> Any:
    return {
        "metadata": {
            "name": name,
            "namespace": cluster,
            "creationTimestamp": "2025-03-01T00:00:00Z",
        },
        "spec": {"workload": {"manifests": [{}] * manifests}},
        "status": {"conditions": conditions},
    }


def condition(type: str, status: str) -> dict[str, str]:
    return {"type": type, "status": status, "reason": "R", "message": "m"}


def test_rows_show_applied_and_available_and_the_others_when_present() -> None:
    plain = [
        work("a", "c1", 2, [condition("Applied", "True"), condition("Available", "False")]),
        work("b", "c2", 1, []),
    ]
    headers, rows = work_rows(plain, now=NOW)
    assert headers == ["NAME", "CLUSTER", "MANIFESTS", "APPLIED", "AVAILABLE", "AGE"]
    assert rows == [("a", "c1", "2", "True", "False", "5m"), ("b", "c2", "1", "", "", "5m")]
    degraded = work("d", "c1", 3, [condition("Degraded", "True")])
    headers, rows = work_rows([*plain, degraded], now=NOW)
    assert headers == ["NAME", "CLUSTER", "MANIFESTS", "APPLIED", "AVAILABLE", "DEGRADED", "AGE"]
    assert rows[2] == ("d", "c1", "3", "", "", "True", "5m")


def test_rows_read_odd_objects_defensively() -> None:
    odd = {"metadata": {"name": "x", "namespace": "c"}, "spec": "nonsense", "status": None}
    _, rows = work_rows([odd], now=NOW)
    assert rows == [("x", "c", "0", "", "", "")]
