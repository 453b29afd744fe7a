"""OpenAPI v3 documents: one per served group-version, a schema per kind."""

from __future__ import annotations

from pyocm.testing import Client


async def test_index_and_documents(admin: Client) -> None:
    code, index = await admin.get("/openapi/v3")
    assert code == 200
    paths = index["paths"]
    assert "api/v1" in paths and "apis/cluster.open-cluster-management.io/v1" in paths
    url = paths["apis/cluster.open-cluster-management.io/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/cluster.open-cluster-management.io/v1?hash=")
    code, doc = await admin.get(url)
    assert code == 200 and doc["openapi"].startswith("3.")
    schemas = doc["components"]["schemas"]
    cluster = schemas["io.open-cluster-management.cluster.v1.ManagedCluster"]
    assert cluster["x-kubernetes-group-version-kind"] == [
        {"group": "cluster.open-cluster-management.io", "version": "v1", "kind": "ManagedCluster"}
    ]
    spec = cluster["properties"]["spec"]["properties"]
    assert spec["leaseDurationSeconds"]["default"] == 60
    assert cluster["properties"]["metadata"]["allOf"][0]["$ref"] == (
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    )
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas
    patch = doc["paths"]["/apis/cluster.open-cluster-management.io/v1/managedclusters/{name}"][
        "patch"
    ]
    assert "fieldValidation" in [p["name"] for p in patch["parameters"]]

    code, core = await admin.get(paths["api/v1"]["serverRelativeURL"])
    assert core["components"]["schemas"]["io.k8s.api.core.v1.Namespace"][
        "x-kubernetes-group-version-kind"
    ] == [{"group": "", "version": "v1", "kind": "Namespace"}]
    assert "/api/v1/namespaces/{namespace}/configmaps/{name}" in core["paths"]

    code, _ = await admin.get("/openapi/v3/apis/nothing.example.com/v1")
    assert code == 404


async def test_a_new_crd_shows_up_with_a_new_hash(admin: Client, unique: str) -> None:
    _, before = await admin.get("/openapi/v3")
    group = f"{unique}.example.com"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {"size": {"type": "integer"}},
                                }
                            },
                        }
                    },
                }
            ],
        },
    }
    code, _ = await admin.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert code == 201
    _, after = await admin.get("/openapi/v3")
    assert f"apis/{group}/v1" not in before["paths"] and f"apis/{group}/v1" in after["paths"]
    _, doc = await admin.get(after["paths"][f"apis/{group}/v1"]["serverRelativeURL"])
    widget = doc["components"]["schemas"][f"com.example.{unique}.v1.Widget"]
    assert widget["properties"]["spec"]["properties"]["size"] == {"type": "integer"}


async def test_openapi_v2_json_and_protobuf(admin: Client) -> None:
    code, doc = await admin.get("/openapi/v2", headers={"Accept": "application/json"})
    assert code == 200 and doc["swagger"] == "2.0"
    cluster = doc["definitions"]["io.open-cluster-management.cluster.v1.ManagedCluster"]
    assert cluster["properties"]["metadata"]["allOf"][0]["$ref"] == (
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    )
    assert "io.k8s.api.core.v1.ConfigMap" in doc["definitions"]
    async with admin.session.get(
        "/openapi/v2",
        headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"},
        ssl=admin._ssl,
    ) as resp:
        assert resp.status == 200
        assert resp.headers["Content-Type"].startswith(
            "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
        )
        assert await resp.read() == b"", "an empty document: kubectl leaves validation to us"
