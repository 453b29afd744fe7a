"""Protobuf request bodies through a real server: what client-go 1.32+ typed clients send."""

from __future__ import annotations

from pyocm.testing import Client
from tests.protowire import body, entry, m, s, v
from tests.support import eventually

PROTOBUF = "application/vnd.kubernetes.protobuf"


def meta(name: str, *more: bytes) -> bytes:
    return m(1, s(1, name), m(8), *more)


async def test_create_update_and_delete_with_protobuf(admin: Client, unique: str) -> None:
    code, made = await admin.request(
        "POST",
        "/api/v1/namespaces",
        raw=body("v1", "Namespace", meta(unique, entry(11, "team", s(2, "a")))),
        content_type=PROTOBUF,
    )
    assert code == 201, made
    assert made["metadata"]["labels"]["team"] == "a"
    lease = body(
        "coordination.k8s.io/v1",
        "Lease",
        meta("lock", s(3, unique)),
        m(2, s(1, "me"), v(2, 30)),
    )
    path = f"/apis/coordination.k8s.io/v1/namespaces/{unique}/leases"
    code, created = await admin.request("POST", path, raw=lease, content_type=PROTOBUF)
    assert code == 201, created
    assert created["spec"] == {"holderIdentity": "me", "leaseDurationSeconds": 30}
    updated = body(
        "coordination.k8s.io/v1",
        "Lease",
        meta("lock", s(3, unique), s(6, created["metadata"]["resourceVersion"])),
        m(2, s(1, "you"), v(2, 30)),
    )
    code, replaced = await admin.request("PUT", f"{path}/lock", raw=updated, content_type=PROTOBUF)
    assert code == 200 and replaced["spec"]["holderIdentity"] == "you"

    wrong_uid = body("coordination.k8s.io/v1", "DeleteOptions", m(2, s(1, "not-the-uid")))
    code, err = await admin.request("DELETE", f"{path}/lock", raw=wrong_uid, content_type=PROTOBUF)
    assert code == 409, err
    code, _ = await admin.request(
        "DELETE",
        f"{path}/lock",
        raw=body("coordination.k8s.io/v1", "DeleteOptions", s(5, "All")),
        content_type=PROTOBUF,
    )
    assert code == 200
    code, _ = await admin.get(f"{path}/lock")
    assert code == 200, "dryRun=All from a protobuf DeleteOptions deletes nothing"


async def test_bad_protobuf_bodies_get_clear_errors(admin: Client, unique: str) -> None:
    code, err = await admin.request(
        "POST", "/api/v1/namespaces", raw=b"k8s\x00\x0a\x09\x0a", content_type=PROTOBUF
    )
    assert code == 400
    assert err["message"].startswith("the body of the request could not be decoded as protobuf")
    code, err = await admin.request(
        "POST",
        "/api/v1/namespaces",
        raw=body("apps/v1", "Deployment", meta(unique)),
        content_type=PROTOBUF,
    )
    assert code == 400 and err["reason"] == "BadRequest"
    assert "apps/v1 Deployment" in err["message"]


async def test_a_node_registers_with_protobuf(admin: Client, unique: str) -> None:
    node = body(
        "v1",
        "Node",
        meta(unique),
        m(2, s(3, f"sim://{unique}")),
        m(3, entry(1, "cpu", m(2, s(1, "4"))), m(7, s(7, "v1.33.0"))),
    )
    code, made = await admin.request("POST", "/api/v1/nodes", raw=node, content_type=PROTOBUF)
    assert code == 201, made
    assert made["spec"] == {"providerID": f"sim://{unique}"}


async def test_a_crd_created_with_protobuf_is_served(admin: Client, unique: str) -> None:
    group = f"{unique}.example.com"
    schema = m(1, s(5, "object"), entry(29, "spec", m(2, s(5, "object"), v(38, 1))))
    crd = body(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        meta(f"gadgets.{group}"),
        m(
            2,
            s(1, group),
            m(3, s(1, "gadgets"), s(2, "gadget"), s(4, "Gadget")),
            s(4, "Cluster"),
            m(7, s(1, "v1"), v(2, 1), v(3, 1), m(4, schema), m(5, m(1))),
        ),
    )
    code, made = await admin.request(
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        raw=crd,
        content_type=PROTOBUF,
    )
    assert code == 201, made
    assert made["spec"]["versions"][0]["subresources"] == {"status": {}}

    async def served() -> bool:
        code, _ = await admin.post(
            f"/apis/{group}/v1/gadgets",
            {
                "apiVersion": f"{group}/v1",
                "kind": "Gadget",
                "metadata": {"name": "g1"},
                "spec": {"x": 1},
            },
        )
        return code == 201

    await eventually(served)
    code, gadget = await admin.get(f"/apis/{group}/v1/gadgets/g1")
    assert gadget["spec"] == {"x": 1}, "x-kubernetes-preserve-unknown-fields came through"
