"""ConfigMap and Secret strategies: keys, sizes, immutability, stringData, secret types."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.registry.builtin import configdata
from pyocm.apiserver.registry.strategy import Context
from pyocm.kube.status import ApiError, ErrorType

CTX = Context(user=UserInfo(name="admin"))
KEY_MESSAGE = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
    "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def configmap(**fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "ns"},
        **fields,
    }


def secret(**fields: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "ns"},
        **fields,
    }


@pytest.mark.parametrize(
    ("key", "messages"),
    [
        pytest.param("good.key_1-x", [], id="valid"),
        pytest.param("bad key", [KEY_MESSAGE], id="space"),
        pytest.param(".", ["must not be '.'"], id="dot"),
        pytest.param("..", ["must not be '..'"], id="dotdot"),
        pytest.param("..x", ["must not start with '..'"], id="dotdot-prefix"),
        pytest.param("k" * 254, ["must be no more than 253 characters"], id="too-long"),
    ],
)
def test_config_key_rule(key: str, messages: list[str]) -> None:
    assert configdata.config_key_errors(key) == messages


def test_configmap_valid_passes() -> None:
    obj = configmap(data={"a": "1"}, binaryData={"b": b64("2")})
    assert configdata.ConfigMapStrategy().validate_create(obj, CTX) == []


def test_configmap_bad_key_and_duplicate_between_data_and_binary() -> None:
    obj = configmap(data={"bad key": "1", "x": "1"}, binaryData={"x": b64("2")})
    errs = configdata.ConfigMapStrategy().validate_create(obj, CTX)
    assert [e.message() for e in errs] == [
        f'data[bad key]: Invalid value: "bad key": {KEY_MESSAGE}',
        'data[x]: Invalid value: "x": duplicate of key present in binaryData',
    ]


def test_configmap_total_size_limit_counts_both_maps() -> None:
    half = "x" * (512 * 1024)
    obj = configmap(data={"a": half}, binaryData={"b": b64(half + "y")})
    errs = configdata.ConfigMapStrategy().validate_create(obj, CTX)
    assert [(e.type, e.field, e.message()) for e in errs] == [
        (ErrorType.TOO_LONG, "", "Too long: may not be more than 1048576 bytes")
    ]
    obj["binaryData"] = {"b": b64(half)}
    assert configdata.ConfigMapStrategy().validate_create(obj, CTX) == []


def test_configmap_immutable_forbids_data_changes_and_unsetting() -> None:
    old = configmap(immutable=True, data={"a": "1"}, binaryData={"b": b64("2")})
    new = configmap(data={"a": "2"}, binaryData={"b": b64("2")})
    errs = configdata.ConfigMapStrategy().validate_update(new, old, CTX)
    assert [(e.type, e.field) for e in errs] == [
        (ErrorType.FORBIDDEN, "immutable"),
        (ErrorType.FORBIDDEN, "data"),
    ]
    assert errs[0].message() == "immutable: Forbidden: field is immutable when `immutable` is set"
    same = configmap(immutable=True, data={"a": "1"}, binaryData={"b": b64("2")})
    same["metadata"]["labels"] = {"x": "y"}
    assert configdata.ConfigMapStrategy().validate_update(same, old, CTX) == []


def test_configmap_bad_base64_is_a_bad_request() -> None:
    with pytest.raises(ApiError) as caught:
        configdata.ConfigMapStrategy().prepare_for_create(configmap(binaryData={"b": "ab$d"}), CTX)
    assert caught.value.code == 400
    assert caught.value.message == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 2'
    )


def test_secret_string_data_merges_into_data_and_is_dropped() -> None:
    obj = secret(data={"a": b64("old"), "b": b64("keep")}, stringData={"a": "new", "c": "plain"})
    configdata.SecretStrategy().prepare_for_create(obj, CTX)
    assert "stringData" not in obj
    assert obj["data"] == {"a": b64("new"), "b": b64("keep"), "c": b64("plain")}
    assert obj["type"] == "Opaque"


def test_secret_string_data_merges_on_update_too() -> None:
    obj = secret(type="Opaque", stringData={"token": "t"})
    configdata.SecretStrategy().prepare_for_update(obj, secret(type="Opaque"), CTX)
    assert obj == secret(type="Opaque", data={"token": b64("t")})


def test_secret_data_is_reencoded_canonically() -> None:
    obj = secret(data={"a": "aGVs\nbG8="})
    configdata.SecretStrategy().prepare_for_create(obj, CTX)
    assert obj["data"] == {"a": b64("hello")}


def test_secret_type_is_immutable() -> None:
    errs = configdata.SecretStrategy().validate_update(
        secret(type="Opaque"), secret(type="kubernetes.io/tls", data={}), CTX
    )
    assert [e.message() for e in errs] == ['type: Invalid value: "Opaque": field is immutable']


def test_secret_immutable_data() -> None:
    old = secret(type="Opaque", immutable=True, data={"a": b64("1")})
    new = secret(type="Opaque", immutable=True, data={"a": b64("2")})
    errs = configdata.SecretStrategy().validate_update(new, old, CTX)
    assert [(e.type, e.field) for e in errs] == [(ErrorType.FORBIDDEN, "data")]


def test_secret_size_limit_and_keys() -> None:
    big = secret(type="Opaque", data={"a": b64("x" * (1024 * 1024 + 1)), "b@d": b64("")})
    errs = configdata.SecretStrategy().validate_create(big, CTX)
    assert [(e.type, e.field) for e in errs] == [
        (ErrorType.INVALID, "data[b@d]"),
        (ErrorType.TOO_LONG, "data"),
    ]
    assert errs[1].message() == "data: Too long: may not be more than 1048576 bytes"


@pytest.mark.parametrize(
    ("kind", "data", "annotations", "fields"),
    [
        pytest.param(
            "kubernetes.io/service-account-token",
            {},
            {},
            ["metadata.annotations[kubernetes.io/service-account.name]"],
            id="sa-token-needs-annotation",
        ),
        pytest.param(
            "kubernetes.io/service-account-token",
            {},
            {"kubernetes.io/service-account.name": "sa"},
            [],
            id="sa-token-ok",
        ),
        pytest.param(
            "kubernetes.io/tls", {"tls.crt": b64("c")}, {}, ["data[tls.key]"], id="tls-needs-key"
        ),
        pytest.param(
            "kubernetes.io/basic-auth",
            {},
            {},
            ["data[username]", "data[password]"],
            id="basic-auth-needs-one",
        ),
        pytest.param(
            "kubernetes.io/basic-auth",
            {"password": b64("p")},
            {},
            [],
            id="basic-auth-password-only",
        ),
        pytest.param(
            "kubernetes.io/ssh-auth",
            {"ssh-privatekey": ""},
            {},
            ["data[ssh-privatekey]"],
            id="ssh-needs-content",
        ),
        pytest.param(
            "kubernetes.io/dockerconfigjson",
            {},
            {},
            ["data[.dockerconfigjson]"],
            id="docker-needs-key",
        ),
        pytest.param(
            "bootstrap.kubernetes.io/token",
            {"token-id": b64("abcdef")},
            {},
            [],
            id="bootstrap-not-api-validated",
        ),
        pytest.param("example.com/custom", {}, {}, [], id="custom-type"),
    ],
)
def test_secret_types(
    kind: str, data: dict[str, str], annotations: dict[str, str], fields: list[str]
) -> None:
    obj = secret(type=kind, data=data)
    obj["metadata"]["annotations"] = annotations
    errs = configdata.SecretStrategy().validate_create(obj, CTX)
    assert [e.field for e in errs] == fields
    assert all(e.type is ErrorType.REQUIRED for e in errs)


def test_secret_dockercfg_must_be_a_json_object() -> None:
    obj = secret(type="kubernetes.io/dockercfg", data={".dockercfg": b64("[1]")})
    errs = configdata.SecretStrategy().validate_create(obj, CTX)
    assert [e.message() for e in errs] == [
        'data[.dockercfg]: Invalid value: "<secret contents redacted>": '
        "json: cannot unmarshal array into Go value of type map[string]interface {}"
    ]


def test_secret_type_field_selector() -> None:
    strategy = configdata.SecretStrategy()
    assert strategy.fields["type"](secret(type="kubernetes.io/tls")) == "kubernetes.io/tls"
    assert strategy.fields["metadata.namespace"](secret()) == "ns"
