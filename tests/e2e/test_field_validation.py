"""fieldValidation on built-in kinds: unknown fields are never stored; Strict refuses
them, Warn (the default) warns, Ignore says nothing."""

from __future__ import annotations

from pyocm.testing import Client

CM = "/api/v1/namespaces/default/configmaps"


def configmap(name: str) -> dict[str, object]:
    return {
        "metadata": {"name": name, "bogusMeta": 1},
        "data": {"a": "1"},
        "spec": {"x": 1},
        "extra": True,
    }


async def test_strict_warn_ignore(admin: Client, unique: str) -> None:
    code, body = await admin.post(
        CM, configmap(f"{unique}-strict"), params={"fieldValidation": "Strict"}
    )
    assert code == 400 and body["reason"] == "BadRequest"
    assert body["message"] == (
        'strict decoding error: unknown field "metadata.bogusMeta", unknown field "spec", unknown field "extra"'
    )

    code, warnings, stored = await admin.exchange("POST", CM, configmap(f"{unique}-warn"))
    assert code == 201
    assert '299 - "unknown field \\"extra\\""' in warnings
    assert '299 - "unknown field \\"metadata.bogusMeta\\""' in warnings
    assert "extra" not in stored and "spec" not in stored and "bogusMeta" not in stored["metadata"]

    code, warnings, _ = await admin.exchange(
        "POST", CM, configmap(f"{unique}-ignore"), params={"fieldValidation": "Ignore"}
    )
    assert code == 201 and warnings == []
    code, got = await admin.get(f"{CM}/{unique}-ignore")
    assert code == 200 and set(got) == {"apiVersion", "kind", "metadata", "data"}


async def test_nested_unknown_fields_of_a_role_binding(admin: Client, unique: str) -> None:
    binding = {
        "metadata": {"name": unique, "namespace": "default"},
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "view",
            "color": "red",
        },
        "subjects": [
            {"kind": "User", "name": "u", "apiGroup": "rbac.authorization.k8s.io", "age": 3}
        ],
    }
    path = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings"
    code, body = await admin.post(path, binding, params={"fieldValidation": "Strict"})
    assert code == 400
    assert (
        body["message"]
        == 'strict decoding error: unknown field "roleRef.color", unknown field "subjects[0].age"'
    )
