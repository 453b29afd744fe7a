"""Server-side printing: the Table answers ``kubectl get`` asks for, through a real server."""

from __future__ import annotations

from typing import Any

from pyocm.testing import Client

TABLE = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)
CLUSTERS = "/apis/cluster.open-cluster-management.io/v1/managedclusters"


def columns(table: dict[str, Any]) -> list[str]:
    return [c["name"] for c in table["columnDefinitions"]]


async def test_managed_clusters_print_upstreams_columns(admin: Client, unique: str) -> None:
    spec = {
        "hubAcceptsClient": True,
        "managedClusterClientConfigs": [{"url": "https://a.example.com"}, {"url": "https://b"}],
    }
    code, _ = await admin.post(CLUSTERS, {"metadata": {"name": unique}, "spec": spec})
    assert code == 201
    status = {
        "conditions": [
            {
                "type": "ManagedClusterJoined",
                "status": "True",
                "reason": "ManagedClusterJoined",
                "message": "Managed cluster joined",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ]
    }
    code, _ = await admin.patch(
        f"{CLUSTERS}/{unique}/status",
        {"status": status},
    )
    assert code == 200

    code, table = await admin.get(f"{CLUSTERS}/{unique}", headers={"Accept": TABLE})
    assert code == 200 and table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert columns(table) == [
        "Name",
        "Hub Accepted",
        "Managed Cluster URLs",
        "Joined",
        "Available",
        "Age",
    ]
    assert table["columnDefinitions"][0]["format"] == "name"
    (row,) = table["rows"]
    name, accepted, urls, joined, available, age = row["cells"]
    assert (name, accepted, urls, joined, available) == (
        unique,
        True,
        "https://a.example.com",  # the first result only, as apiextensions prints
        "True",
        None,
    )
    assert age.endswith("s")
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["name"] == unique

    code, listed = await admin.get(
        CLUSTERS,
        headers={"Accept": TABLE},
        params={"fieldSelector": f"metadata.name={unique}", "includeObject": "None"},
    )
    assert code == 200 and listed["metadata"]["resourceVersion"]
    assert [r["cells"][0] for r in listed["rows"]] == [unique]
    assert "object" not in listed["rows"][0]

    code, whole = await admin.get(
        f"{CLUSTERS}/{unique}", headers={"Accept": TABLE}, params={"includeObject": "Object"}
    )
    assert whole["rows"][0]["object"]["spec"]["hubAcceptsClient"] is True

    code, err = await admin.get(
        CLUSTERS, headers={"Accept": TABLE}, params={"includeObject": "All"}
    )
    assert code == 400 and "includeObject" in err["message"]


async def test_plain_json_and_metadata_answers_are_unchanged(admin: Client) -> None:
    code, listed = await admin.get("/api/v1/namespaces", headers={"Accept": "application/json"})
    assert code == 200 and listed["kind"] == "NamespaceList"


async def test_built_in_kinds_have_kubectls_columns(admin: Client, unique: str) -> None:
    code, _ = await admin.post("/api/v1/namespaces", {"metadata": {"name": unique}})
    assert code == 201
    code, _ = await admin.post(
        f"/api/v1/namespaces/{unique}/configmaps",
        {"metadata": {"name": "cm"}, "data": {"a": "1", "b": "2"}},
    )
    assert code == 201
    code, table = await admin.get(f"/api/v1/namespaces/{unique}", headers={"Accept": TABLE})
    assert columns(table) == ["Name", "Status", "Age"]
    assert table["rows"][0]["cells"][:2] == [unique, "Active"]
    code, table = await admin.get(
        f"/api/v1/namespaces/{unique}/configmaps", headers={"Accept": TABLE}
    )
    assert columns(table) == ["Name", "Data", "Age"]
    assert table["rows"][0]["cells"][:2] == ["cm", 2]
    code, table = await admin.get(
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/cluster-admin",
        headers={"Accept": TABLE},
    )
    assert columns(table) == ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"]
    assert [c["priority"] for c in table["columnDefinitions"]] == [0, 0, 0, 1, 1, 1]
    assert table["rows"][0]["cells"][1] == "ClusterRole/cluster-admin"
    assert table["rows"][0]["cells"][4] == "system:masters"
    code, table = await admin.get("/apis/authorization.k8s.io/v1", headers={"Accept": TABLE})
    assert code == 200 and table["kind"] == "APIResourceList", "discovery is not a table"


async def test_a_watch_sends_one_row_tables(admin: Client, unique: str) -> None:
    code, _ = await admin.post("/api/v1/namespaces", {"metadata": {"name": unique}})
    assert code == 201
    events = await admin.watch_lines(
        "/api/v1/namespaces",
        params={"fieldSelector": f"metadata.name={unique}"},
        limit=1,
        headers={"Accept": TABLE},
    )
    (event,) = events
    assert event["type"] == "ADDED" and event["object"]["kind"] == "Table"
    assert [r["cells"][0] for r in event["object"]["rows"]] == [unique]


METADATA_ONLY = (
    "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
)


async def test_metadata_only_answers_for_the_metadata_client(admin: Client, unique: str) -> None:
    """What client-go's metadata informers (the OCM hub's GC) ask for."""
    code, _ = await admin.post(
        "/api/v1/namespaces", {"metadata": {"name": unique, "labels": {"x": "y"}}}
    )
    assert code == 201
    code, listed = await admin.get(
        "/api/v1/namespaces",
        headers={"Accept": METADATA_ONLY},
        params={"fieldSelector": f"metadata.name={unique}"},
    )
    assert code == 200 and listed["kind"] == "PartialObjectMetadataList"
    assert listed["apiVersion"] == "meta.k8s.io/v1" and listed["metadata"]["resourceVersion"]
    (item,) = listed["items"]
    assert item["kind"] == "PartialObjectMetadata" and item["metadata"]["labels"]["x"] == "y"
    assert "spec" not in item and "status" not in item
    single = METADATA_ONLY.replace("PartialObjectMetadataList", "PartialObjectMetadata")
    code, one = await admin.get(f"/api/v1/namespaces/{unique}", headers={"Accept": single})
    assert one["kind"] == "PartialObjectMetadata" and one["metadata"]["name"] == unique
    events = await admin.watch_lines(
        "/api/v1/namespaces",
        params={"fieldSelector": f"metadata.name={unique}"},
        limit=1,
        headers={"Accept": single},
    )
    assert events[0]["object"]["kind"] == "PartialObjectMetadata"
