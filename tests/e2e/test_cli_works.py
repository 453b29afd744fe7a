"""``pyocm create work``, ``pyocm get works`` and ``pyocm delete work`` as a person runs
them against a real hub: what they write, what they show, and each error they can meet.

No work agent runs here: the status a cluster's agent would report is written by the
test, as the agent writes it, through ``manifestworks/status``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from pyocm.api import kinds as ocm
from pyocm.kube import kinds
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api
from pyocm.testing import HubProcess
from tests.cli import pyocm
from tests.support import cluster_set as cluster_set_body
from tests.support import eventually, label_selector

MANIFESTS = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: hello
  namespace: default
spec:
  selector:
    matchLabels:
      app: hello
  template:
    metadata:
      labels:
        app: hello
    spec:
      containers:
        - name: hello
          image: quay.io/asmacdo/busybox
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: default
data:
  greeting: hello
"""


async def add_cluster(api: Api, name: str, *, namespace: bool = True) -> None:
    """A registered cluster as the hub keeps it: the ManagedCluster and, once accepted,
    its namespace (the registration controllers do not run on this hub)."""
    await api.create(ocm.MANAGED_CLUSTER, {"metadata": {"name": name}})
    if namespace:
        await api.create(kinds.NAMESPACE, {"metadata": {"name": name}})


async def missing(api: Api, name: str, cluster: str) -> bool:
    try:
        await api.get(ocm.MANIFEST_WORK, name, namespace=cluster)
    except ApiError as err:
        return err.code == 404
    return False


@pytest.fixture
def k(hub: HubProcess) -> list[str]:
    return ["--kubeconfig", str(hub.kubeconfig)]


@pytest.fixture
def manifests(tmp_path: Path) -> str:
    path = tmp_path / "hello.yaml"
    path.write_text(MANIFESTS)
    return str(path)


async def test_create_get_and_delete_on_two_clusters(
    api: Api, k: list[str], manifests: str, tmp_path: Path, unique: str
) -> None:
    c1, c2, name = f"{unique}-a", f"{unique}-b", f"hello-{unique}"
    await add_cluster(api, c1)
    await add_cluster(api, c2)
    created = pyocm("create", "work", name, "-f", manifests, "--clusters", f"{c1},{c2}", *k)
    assert created.returncode == 0, created.stderr
    assert created.stdout.splitlines() == [
        f"create work {name} in cluster {c1}",
        f"create work {name} in cluster {c2}",
    ]
    sent = list(yaml.safe_load_all(MANIFESTS))
    for cluster in (c1, c2):
        stored = await api.get(ocm.MANIFEST_WORK, name, namespace=cluster)
        assert stored["spec"]["workload"]["manifests"] == sent

    # As kubectl create: an existing work fails the command, the other clusters get theirs.
    c3 = f"{unique}-c"
    await add_cluster(api, c3)
    again = pyocm("create", "work", name, "-f", manifests, "--clusters", f"{c1},{c3}", *k)
    assert again.returncode == 1
    assert again.stderr.strip() == (
        f"error: work {name} in cluster {c1} already exists "
        "(use --overwrite to replace its manifests)"
    )
    assert again.stdout.strip() == f"create work {name} in cluster {c3}"
    made = await api.get(ocm.MANIFEST_WORK, name, namespace=c3)
    assert made["spec"]["workload"]["manifests"] == sent
    await api.delete(ocm.MANIFEST_WORK, name, namespace=c3)  # no agent: no finalizer to wait on

    # --overwrite replaces the manifests and keeps the rest of the spec.
    await api.patch(
        ocm.MANIFEST_WORK,
        name,
        {"spec": {"deleteOption": {"propagationPolicy": "Orphan"}}},
        namespace=c1,
    )
    smaller = tmp_path / "smaller.yaml"
    smaller.write_text(MANIFESTS.split("---\n")[1])
    updated = pyocm("create", "work", name, "-f", str(smaller), "--clusters", c1, "--overwrite", *k)
    assert updated.returncode == 0, updated.stderr
    assert updated.stdout.strip() == f"update work {name} in cluster {c1}"
    stored = await api.get(ocm.MANIFEST_WORK, name, namespace=c1)
    assert stored["spec"]["workload"]["manifests"] == sent[1:]
    assert stored["spec"]["deleteOption"] == {"propagationPolicy": "Orphan"}

    # What c1's agent would report.
    stored["status"] = {
        "conditions": [
            condition("Applied", "True", "AppliedManifestWorkComplete"),
            condition("Available", "True", "ResourcesAvailable"),
            condition("Progressing", "False", "AppliedManifestWorkComplete"),
        ]
    }
    await api.update(ocm.MANIFEST_WORK, stored, subresource="status")

    shown = pyocm("get", "works", name, *k)
    assert shown.returncode == 0, shown.stderr
    lines = [line.split() for line in shown.stdout.strip().splitlines()]
    assert lines[0] == [
        "NAME",
        "CLUSTER",
        "MANIFESTS",
        "APPLIED",
        "AVAILABLE",
        "PROGRESSING",
        "AGE",
    ]
    assert [line[:-1] for line in lines[1:]] == [
        [name, c1, "1", "True", "True", "False"],
        [name, c2, "2"],
    ]
    only = pyocm("get", "works", "--cluster", c2, "-o", "json", *k)
    assert only.returncode == 0, only.stderr
    listed = json.loads(only.stdout)
    assert listed["kind"] == "List"
    assert [(w["kind"], w["metadata"]["namespace"]) for w in listed["items"]] == [
        ("ManifestWork", c2)
    ]
    as_yaml = yaml.safe_load(pyocm("get", "works", name, "--cluster", c1, "-o", "yaml", *k).stdout)
    assert as_yaml["items"][0]["status"]["conditions"][0]["type"] == "Applied"
    names = pyocm("get", "works", name, "-o", "name", *k)
    assert names.stdout.splitlines() == [f"manifestwork.work.open-cluster-management.io/{name}"] * 2

    deleted = pyocm("delete", "work", name, "--clusters", f"{c1},{c2}", *k)
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.splitlines() == [
        f"work {name} in cluster {c1} is deleted",
        f"work {name} in cluster {c2} is deleted",
    ]
    assert await missing(api, name, c1) and await missing(api, name, c2)


def condition(type: str, status: str, reason: str) -> dict[str, Any]:
    return {
        "type": type,
        "status": status,
        "reason": reason,
        "message": "as the agent reports it",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }


async def test_nothing_is_created_for_a_bad_cluster_list(
    api: Api, k: list[str], manifests: str, unique: str
) -> None:
    good, pending, name = f"{unique}-ok", f"{unique}-new", f"w-{unique}"
    await add_cluster(api, good)
    await add_cluster(api, pending, namespace=False)
    unknown = pyocm("create", "work", name, "-f", manifests, "--clusters", f"{good},nope", *k)
    assert unknown.returncode == 1
    assert unknown.stderr.strip() == "error: no managed cluster named nope"
    not_accepted = pyocm(
        "create", "work", name, "-f", manifests, "--clusters", f"{good},{pending}", *k
    )
    assert not_accepted.returncode == 1
    assert not_accepted.stderr.strip() == (
        f'error: managed cluster {pending} has no namespace "{pending}" yet: '
        f"accept it first (pyocm accept --clusters {pending})"
    )
    assert await missing(api, name, good)
    bad_name = pyocm("create", "work", "Bad_Name", "-f", manifests, "--clusters", good, *k)
    assert bad_name.returncode == 2
    assert bad_name.stderr.startswith('error: work name "Bad_Name" is invalid: ')
    unknown_get = pyocm("get", "works", "--cluster", "nope", *k)
    assert unknown_get.returncode == 1
    assert unknown_get.stderr.strip() == "error: no managed cluster named nope"
    none = pyocm("get", "works", name, *k)
    assert none.returncode == 1
    assert none.stderr.strip() == f"error: no work named {name} in any cluster"


async def test_bad_files_are_refused_before_anything_is_sent(
    api: Api, k: list[str], tmp_path: Path, unique: str
) -> None:
    cluster, name = unique, f"w-{unique}"
    await add_cluster(api, cluster)
    nameless = tmp_path / "nameless.yaml"
    nameless.write_text(MANIFESTS.replace("  name: settings\n", ""))
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    for args, message in (
        (
            [str(tmp_path / "absent.yaml")],
            f"cannot read {tmp_path / 'absent.yaml'}: No such file or directory",
        ),
        ([str(empty)], f"no manifests in {empty}"),
        ([str(nameless)], f"{nameless}, document 2: name must be set in manifest"),
    ):
        refused = pyocm("create", "work", name, "-f", *args, "--clusters", cluster, *k)
        assert refused.returncode == 1
        assert refused.stderr.strip() == f"error: {message}"
    assert await missing(api, name, cluster)


async def test_the_hubs_admission_answers_through_the_command(
    api: Api, k: list[str], tmp_path: Path, unique: str
) -> None:
    cluster, name = unique, f"w-{unique}"
    await add_cluster(api, cluster)
    big = tmp_path / "big.json"
    items = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"c{i}"},
            "data": {"k": "x" * 110_000},
        }
        for i in range(5)
    ]
    big.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    refused = pyocm("create", "work", name, "-f", str(big), "--clusters", cluster, *k)
    assert refused.returncode == 1
    assert refused.stderr.startswith(
        'error: admission webhook "manifestworkvalidators.admission.work.open-cluster-management.io" '
        "denied the request: the size of manifests is "
    )
    assert refused.stderr.rstrip().endswith("exceeds the 512000 limit (BadRequest)")


async def test_delete_reports_each_cluster_and_waits_for_the_agent(
    api: Api, k: list[str], manifests: str, unique: str
) -> None:
    cluster, name = unique, f"w-{unique}"
    await add_cluster(api, cluster)
    assert pyocm("create", "work", name, "-f", manifests, "--clusters", cluster, *k).returncode == 0
    # The finalizer a work agent puts on the works it has applied.
    finalizer = "cluster.open-cluster-management.io/manifest-work-cleanup"
    await api.patch(
        ocm.MANIFEST_WORK, name, {"metadata": {"finalizers": [finalizer]}}, namespace=cluster
    )
    waiting = pyocm("delete", "work", name, "--clusters", cluster, "--timeout", "0.5", *k)
    assert waiting.returncode == 1
    assert waiting.stderr.strip() == (
        f"error: work {name} in cluster {cluster} is still being deleted after 0.5s: "
        f"waiting for its finalizers {finalizer}; the cluster's work agent removes them "
        "once it has removed what the work applied"
    )
    stored = await api.get(ocm.MANIFEST_WORK, name, namespace=cluster)
    assert stored["metadata"]["deletionTimestamp"]
    await api.patch(ocm.MANIFEST_WORK, name, {"metadata": {"finalizers": None}}, namespace=cluster)
    assert await missing(api, name, cluster)
    gone = pyocm("delete", "work", name, "--clusters", f"{cluster},nope", *k)
    assert gone.returncode == 1
    assert gone.stderr.splitlines() == [
        f"error: work {name} not found in cluster {cluster}",
        f"error: work {name} not found in cluster nope",
    ]


@pytest.fixture(scope="module")
def gated_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    """A whole hub (placement controller included) with the gate ManifestWorkReplicaSet on."""
    process = HubProcess(
        tmp_path_factory.mktemp("cli-mwrs-hub"),
        extra_args=["--feature-gates", "ManifestWorkReplicaSet=true"],
    )
    process.start()
    try:
        yield process
    finally:
        process.stop()


async def placement_with_clusters(api: Api, unique: str, count: int) -> tuple[str, list[str]]:
    """A namespace bound to a set of ``count`` new agentless clusters, and a placement
    there (tolerating the taints the hub puts on them) choosing them all."""
    namespace, cluster_set = f"ns-{unique}", f"set-{unique}"
    await api.create(kinds.NAMESPACE, {"metadata": {"name": namespace}})
    await api.create(
        ocm.MANAGED_CLUSTER_SET, cluster_set_body(cluster_set, label_selector({"fleet": unique}))
    )
    await api.create(
        ocm.MANAGED_CLUSTER_SET_BINDING,
        {
            "metadata": {"name": cluster_set, "namespace": namespace},
            "spec": {"clusterSet": cluster_set},
        },
    )
    clusters = [f"{unique}-{i}" for i in range(count)]
    for cluster in clusters:
        await api.create(
            ocm.MANAGED_CLUSTER,
            {
                "metadata": {"name": cluster, "labels": {"fleet": unique}},
                "spec": {"hubAcceptsClient": True},
            },
        )
    tolerate = [
        {"key": f"cluster.open-cluster-management.io/{taint}", "operator": "Exists"}
        for taint in ("unreachable", "unavailable")
    ]
    await api.create(
        ocm.PLACEMENT,
        {"metadata": {"name": "all", "namespace": namespace}, "spec": {"tolerations": tolerate}},
    )
    return namespace, clusters


async def test_replicaset_puts_the_work_on_the_placements_clusters(
    gated_hub: HubProcess, manifests: str, tmp_path: Path, unique: str
) -> None:
    k = ["--kubeconfig", str(gated_hub.kubeconfig)]
    name = f"hello-{unique}"
    async with Api.from_kubeconfig(gated_hub.kubeconfig) as api:
        namespace, clusters = await placement_with_clusters(api, unique, 2)
        created = pyocm(
            "create", "work", name, "--replicaset", "--placement", "all", "-n", namespace,
            "-f", manifests, *k,
        )  # fmt: skip
        assert created.returncode == 0, created.stderr
        assert (
            created.stdout.strip()
            == f"create manifestworkreplicaset {name} in namespace {namespace}"
        )
        stored = await api.get(ocm.MANIFEST_WORK_REPLICA_SET, name, namespace=namespace)
        sent = list(yaml.safe_load_all(MANIFESTS))
        assert stored["spec"]["manifestWorkTemplate"]["workload"]["manifests"] == sent
        assert [r["name"] for r in stored["spec"]["placementRefs"]] == ["all"]

        owner = f"work.open-cluster-management.io/manifestworkreplicaset={namespace}.{name}"

        async def works(count: int) -> dict[str, Any]:
            listed = await api.list(ocm.MANIFEST_WORK, labels=owner)
            found = {w["metadata"]["namespace"]: w for w in listed["items"]}
            assert sorted(found) == clusters
            assert all(len(w["spec"]["workload"]["manifests"]) == count for w in found.values())
            return found

        found = await eventually(lambda: works(2))
        # `pyocm get works` shows them as any works, under their generated names.
        shown = pyocm("get", "works", "-o", "name", *k)
        assert shown.returncode == 0, shown.stderr
        for work in found.values():
            line = f"manifestwork.work.open-cluster-management.io/{work['metadata']['name']}"
            assert line in shown.stdout.splitlines()

        again = pyocm(
            "create", "work", name, "-r", "--placement", f"{namespace}/all", "-f", manifests, *k
        )
        assert again.returncode == 1
        assert again.stdout == ""
        assert again.stderr.strip() == (
            f"error: manifestworkreplicaset {name} in namespace {namespace} already exists "
            "(use --overwrite to replace its manifests)"
        )
        smaller = tmp_path / "smaller.yaml"
        smaller.write_text(MANIFESTS.split("---\n")[1])
        updated = pyocm(
            "create", "work", name, "-r", "--placement", f"{namespace}/all", "-f", str(smaller),
            "--overwrite", *k,
        )  # fmt: skip
        assert updated.returncode == 0, updated.stderr
        assert (
            updated.stdout.strip()
            == f"update manifestworkreplicaset {name} in namespace {namespace}"
        )
        await eventually(lambda: works(1))


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--replicaset"], 2, "--clusters or --placement must be specified"),
        (
            ["--replicaset", "--clusters", "c1"],
            2,
            "--placement must be specified when enable --replicaset",
        ),
        (
            ["--placement", "ns/p", "--clusters", "c1"],
            2,
            "--clusters and --placement can only specify one",
        ),
        (
            ["--placement", "ns/p"],
            2,
            "--placement needs --replicaset: pyocm puts a work on a placement's clusters through a ManifestWorkReplicaSet",
        ),
        (
            ["-r", "--placement", "p"],
            2,
            "--placement p needs a namespace: <namespace>/<name>, or -n",
        ),
        (
            ["-r", "--placement", "a/b/c"],
            2,
            "the name of the placement a/b/c must be in the format of <namespace>/<name>",
        ),
        (
            ["-r", "--placement", "ns/p", "-n", "other"],
            2,
            '--placement ns/p is in namespace "ns", not "other"',
        ),
        (["-r", "--placement", "Bad_NS/p"], 2, 'namespace "Bad_NS" is invalid: '),
        (
            ["-r", "--placement", "p", "-n", "default"],
            1,
            'placement "p" not found in namespace "default"',
        ),
    ],
)
async def test_replicaset_refusals(
    api: Api, k: list[str], manifests: str, args: list[str], code: int, message: str
) -> None:
    refused = pyocm("create", "work", "w", "-f", manifests, *args, *k)
    assert refused.returncode == code
    assert refused.stderr.startswith(f"error: {message}")
    listed = await api.list(ocm.MANIFEST_WORK_REPLICA_SET)
    assert [s for s in listed["items"] if s["metadata"]["name"] == "w"] == []
