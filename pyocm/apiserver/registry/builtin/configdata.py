"""ConfigMaps and Secrets: key-value objects whose keys and total size Kubernetes limits.

Keys follow ``IsConfigMapKey``; values together may not exceed 1 MiB. Secrets take
write-only ``stringData`` merged into ``data`` (and then dropped) and default their
``type`` to ``Opaque``, which never changes afterwards; typed Secrets must carry their
well-known keys. An object stored with ``immutable: true`` keeps its data for good.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any

import orjson

from pyocm.apiserver.registry.builtin import bytefields
from pyocm.apiserver.registry.strategy import Context, FieldGetter, Obj, Strategy, meta
from pyocm.kube import names
from pyocm.kube.status import ErrorType, FieldError, forbidden, invalid, required

#: Limit on the summed value sizes of a ConfigMap or Secret (``core.MaxSecretSize``).
MAX_DATA_SIZE = 1024 * 1024
_KEY_MAX = 253
_KEY_FORMAT = re.compile(r"^[-._a-zA-Z0-9]+$")
_KEY_MESSAGE = names.regex_error(
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
    "[-._a-zA-Z0-9]+",
    "key.name",
    "KEY_NAME",
    "key-name",
)
_IMMUTABLE = "field is immutable when `immutable` is set"


def config_key_errors(key: str) -> list[str]:
    """``IsConfigMapKey``: the rule for ConfigMap and Secret data keys."""
    errs = []
    if len(key) > _KEY_MAX:
        errs.append(names.max_len_error(_KEY_MAX))
    if not _KEY_FORMAT.match(key):
        errs.append(_KEY_MESSAGE)
    if key == ".":
        errs.append("must not be '.'")
    elif key == "..":
        errs.append("must not be '..'")
    elif key.startswith(".."):
        errs.append("must not start with '..'")
    return errs


def _too_long(path: str) -> FieldError:
    # Kubernetes omits the (huge) value from this message.
    return FieldError(ErrorType.TOO_LONG, path, f"may not be more than {MAX_DATA_SIZE} bytes")


def _immutable_errors(obj: Obj, old: Obj, fields: tuple[str, ...]) -> list[FieldError]:
    """An object stored with ``immutable: true`` keeps its data and the flag itself."""
    if old.get("immutable") is not True:
        return []
    errs = [] if obj.get("immutable") is True else [forbidden("immutable", _IMMUTABLE)]
    return errs + [
        forbidden(f, _IMMUTABLE) for f in fields if (obj.get(f) or {}) != (old.get(f) or {})
    ]


class ConfigMapStrategy(Strategy):
    tracks_generation = False

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        bytefields.canonicalize_map(obj, "binaryData", kind="ConfigMap")

    def prepare_for_update(self, obj: Obj, old: Obj, ctx: Context) -> None:
        bytefields.canonicalize_map(obj, "binaryData", kind="ConfigMap")

    def validate_create(self, obj: Obj, ctx: Context) -> list[FieldError]:
        data: dict[str, Any] = obj.get("data") or {}
        binary = bytefields.decode_map(obj.get("binaryData"), kind="ConfigMap")
        errs: list[FieldError] = []
        for key in data:
            errs += [invalid(f"data[{key}]", key, msg) for msg in config_key_errors(key)]
            if key in binary:
                errs.append(invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
        for key in binary:
            errs += [invalid(f"binaryData[{key}]", key, msg) for msg in config_key_errors(key)]
        size = sum(len(str(v).encode()) for v in data.values()) + sum(
            len(v) for v in binary.values()
        )
        if size > MAX_DATA_SIZE:
            errs.append(_too_long(""))
        return errs

    def validate_update(self, obj: Obj, old: Obj, ctx: Context) -> list[FieldError]:
        return _immutable_errors(obj, old, ("data", "binaryData")) + self.validate_create(obj, ctx)


#: Keys a Secret of a given type must hold (any one of them for basic-auth).
_REQUIRED_KEYS: Mapping[str, tuple[str, ...]] = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/basic-auth": ("username", "password"),
    "kubernetes.io/ssh-auth": ("ssh-privatekey",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}
SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"


def merge_string_data(secret: Obj) -> None:
    """Fold the write-only ``stringData`` into ``data`` (it wins on equal keys) and drop it,
    as the v1 → internal conversion does; an empty ``type`` becomes ``Opaque``."""
    string_data = secret.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = secret.get("data")
        if not isinstance(data, dict):
            data = secret["data"] = {}
        for key, value in string_data.items():
            data[key] = base64.b64encode(str(value).encode()).decode()
    if not secret.get("type"):
        secret["type"] = "Opaque"


def _secret_type_errors(secret: Obj, data: Mapping[str, bytes]) -> list[FieldError]:
    kind = str(secret.get("type") or "")
    if kind == SERVICE_ACCOUNT_TOKEN:
        if not (meta(secret).get("annotations") or {}).get(SERVICE_ACCOUNT_NAME_KEY):
            return [required(f"metadata.annotations[{SERVICE_ACCOUNT_NAME_KEY}]")]
        return []
    keys = _REQUIRED_KEYS.get(kind, ())
    if kind == "kubernetes.io/basic-auth":
        return [] if any(k in data for k in keys) else [required(f"data[{k}]") for k in keys]
    if kind == "kubernetes.io/ssh-auth":
        return [] if data.get(keys[0]) else [required(f"data[{keys[0]}]")]
    missing = [required(f"data[{k}]") for k in keys if k not in data]
    if missing or kind not in ("kubernetes.io/dockercfg", "kubernetes.io/dockerconfigjson"):
        return missing
    problem = _json_object_problem(data[keys[0]])
    return [invalid(f"data[{keys[0]}]", "<secret contents redacted>", problem)] if problem else []


def _json_object_problem(raw: bytes) -> str:
    """What Go's ``json.Unmarshal`` into a map says about ``raw``, or "" when it fits."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        text = raw.decode(errors="replace").lstrip()
        if not text:
            return "unexpected end of JSON input"
        return f"invalid character {text[0]!r} looking for beginning of value"
    if isinstance(value, dict) or value is None:
        return ""
    name = {list: "array", str: "string", bool: "bool"}.get(type(value), "number")
    return f"json: cannot unmarshal {name} into Go value of type map[string]interface {{}}"


class SecretStrategy(Strategy):
    tracks_generation = False

    def field_getters(self) -> Mapping[str, FieldGetter]:
        return {"type": lambda o: str(o.get("type") or "")}

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        bytefields.canonicalize_map(obj, "data", kind="Secret")
        merge_string_data(obj)

    def prepare_for_update(self, obj: Obj, old: Obj, ctx: Context) -> None:
        self.prepare_for_create(obj, ctx)

    def validate_create(self, obj: Obj, ctx: Context) -> list[FieldError]:
        data = bytefields.decode_map(obj.get("data"), kind="Secret")
        errs: list[FieldError] = []
        for key in data:
            errs += [invalid(f"data[{key}]", key, msg) for msg in config_key_errors(key)]
        if sum(len(v) for v in data.values()) > MAX_DATA_SIZE:
            errs.append(_too_long("data"))
        return errs + _secret_type_errors(obj, data)

    def validate_update(self, obj: Obj, old: Obj, ctx: Context) -> list[FieldError]:
        errs = []
        if obj.get("type") != old.get("type"):
            errs.append(invalid("type", obj.get("type"), "field is immutable"))
        return errs + _immutable_errors(obj, old, ("data",)) + self.validate_create(obj, ctx)
