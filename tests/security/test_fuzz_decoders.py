"""Fuzzing the request decoders of a real hub: JSON, YAML and protobuf bodies, and every
patch type. Whatever arrives, the hub answers within a deadline, never with a 5xx, and a
refused write leaves the stored object exactly as it was.

Values in fields whose types the server checks stay of the right type here: the
type checks of built-in kinds are another concern (tested with those kinds); the
decoders see hostile text, nesting, aliases, directives and bytes all the same.
"""

from __future__ import annotations

import asyncio
import string
from typing import Any

import orjson
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pyocm.testing import Client

CM = "/api/v1/namespaces/default/configmaps"
#: A hang guard, not a timing assertion.
DEADLINE = 30.0
FUZZ = settings(
    max_examples=1000,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
PATCH_TYPES = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
#: Any JSON value, nested a little.
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
keys = st.text(alphabet=string.ascii_letters + string.digits + "-._/ ~$", min_size=0, max_size=10)
strings = st.text(max_size=30)
#: ConfigMap data: right in type, anything in content (keys may be invalid: a 422).
data = st.dictionaries(keys, strings | st.none(), max_size=4)
#: Fields a ConfigMap does not have: dropped, whatever their value.
unknown = st.dictionaries(st.sampled_from(["x", "spec", "status", "zz"]), values, max_size=2)


def configmap_body(name: str, extra: dict[str, Any], cm_data: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name},
        "data": {k: v for k, v in cm_data.items() if v is not None},
        **extra,
    }


def mangle(text: bytes, cuts: list[int], insert: bytes) -> bytes:
    """Break well-formed text: cut it and splice bytes in."""
    for cut in cuts:
        position = cut % (len(text) + 1)
        text = text[:position] + insert + text[position + 1 :]
    return text


def as_yaml(value: Any) -> bytes:
    return yaml.safe_dump(value, default_flow_style=False, allow_unicode=True).encode()


async def exchange(
    client: Client,
    method: str,
    path: str,
    raw: bytes,
    content_type: str,
    params: dict[str, str] | None = None,
) -> tuple[int, Any]:
    return await asyncio.wait_for(
        client.request(method, path, raw=raw, content_type=content_type, params=params), DEADLINE
    )


async def stored(client: Client, path: str) -> tuple[int, Any]:
    return await asyncio.wait_for(client.get(path), DEADLINE)


class Tracked:
    """One ConfigMap and what it looked like after the last accepted write."""

    def __init__(self, client: Client, name: str) -> None:
        self.client = client
        self.path = f"{CM}/{name}"
        self.name = name
        self.last: Any = None

    async def ensure(self) -> None:
        if self.last is None:
            code, created = await self.client.post(CM, configmap_body(self.name, {}, {"a": "b"}))
            assert code in (201, 409), created
            self.last = (await stored(self.client, self.path))[1]

    async def check(self, code: int, answer: Any) -> None:
        assert code < 500, answer
        code_now, now = await stored(self.client, self.path)
        assert code_now == 200, now
        if code >= 400:
            assert now == self.last, f"a refused write ({code}: {answer}) changed the object"
        self.last = now


async def check_create(
    client: Client, name: str, raw: bytes, content_type: str, params: dict[str, str] | None = None
) -> None:
    code, answer = await exchange(client, "POST", CM, raw, content_type, params)
    assert code < 500, answer
    if code >= 400:
        assert (await stored(client, f"{CM}/{name}"))[0] == 404, "a refused create stored something"
    else:
        await client.delete(f"{CM}/{name}")


@FUZZ
@given(
    extra=unknown,
    cm_data=data,
    cuts=st.lists(st.integers(0, 10_000), max_size=3),
    insert=st.binary(max_size=4),
    strict=st.booleans(),
)
async def test_json_bodies(
    admin: Client,
    unique: str,
    extra: dict[str, Any],
    cm_data: dict[str, Any],
    cuts: list[int],
    insert: bytes,
    strict: bool,
) -> None:
    raw = mangle(orjson.dumps(configmap_body(unique, extra, cm_data)), cuts, insert)
    params = {"fieldValidation": "Strict" if strict else "Warn"}
    await check_create(admin, unique, raw, "application/json", params)


@FUZZ
@given(
    extra=unknown,
    cm_data=data,
    cuts=st.lists(st.integers(0, 10_000), max_size=3),
    insert=st.sampled_from(
        [b"", b"&a ", b"*a", b"- ", b": ", b"\n  ", b"!!binary ", b"<<: *a\n", b"[", b"{"]
    ),
    anchors=st.booleans(),
)
async def test_yaml_bodies(
    admin: Client,
    unique: str,
    extra: dict[str, Any],
    cm_data: dict[str, Any],
    cuts: list[int],
    insert: bytes,
    anchors: bool,
) -> None:
    text = as_yaml(configmap_body(unique, extra, cm_data))
    if anchors:
        text += b"x: &a {k: [1, 2, {z: 2001-12-14t21:59:43.10-05:00}]}\nzz: [*a, *a, {<<: *a}]\n"
    await check_create(admin, unique, mangle(text, cuts, insert), "application/yaml")


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


@FUZZ
@given(
    payload=st.binary(max_size=200),
    kind=st.sampled_from(["ConfigMap", "Secret", "Lease", "Nope"]),
    raw_only=st.booleans(),
)
async def test_protobuf_bodies(
    admin: Client, unique: str, payload: bytes, kind: str, raw_only: bool
) -> None:
    type_meta = _field(1, b"v1") + _field(2, kind.encode())
    body = payload if raw_only else b"k8s\x00" + _field(1, type_meta) + _field(2, payload)
    await check_create(admin, unique, body, "application/vnd.kubernetes.protobuf")


#: Paths into the ConfigMap a JSON patch may name; values fit them or are refused.
json_ops = st.one_of(
    st.fixed_dictionaries(
        {
            "op": st.sampled_from(["add", "replace", "test"]),
            "path": st.sampled_from(["/data/a", "/data/b", "/data/~1x", "/x", "/x/0", "/data/-"]),
            "value": strings,
        }
    ),
    st.fixed_dictionaries(
        {
            "op": st.sampled_from(["add", "replace"]),
            "path": st.sampled_from(["/x", "/zz"]),
            "value": values,
        }
    ),
    st.fixed_dictionaries(
        {
            "op": st.sampled_from(["remove", "move", "copy", "nope"]),
            "path": st.sampled_from(["/data/a", "/data/c", "/x", "/x/k", "", "/"]),
            "from": st.sampled_from(["/data/a", "/data/b", "/x", "/missing", "bad"]),
        }
    ),
    values,
)
merge_docs = st.fixed_dictionaries(
    {},
    optional={
        "data": data,
        "x": values,
        "metadata": st.fixed_dictionaries(
            {},
            optional={
                "annotations": st.dictionaries(
                    st.sampled_from(["a", "b/c", "x y"]), strings | st.none(), max_size=2
                )
            },
        ),
    },
)
smp_directives = st.fixed_dictionaries(
    {},
    optional={
        "$patch": st.sampled_from(["replace", "delete", "merge", "nope"]),
        "$retainKeys": st.lists(st.sampled_from(["data", "x", "metadata"]), max_size=2),
        "$setElementOrder/data": st.lists(values, max_size=2),
        "$deleteFromPrimitiveList/finalizers": st.lists(strings, max_size=2),
    },
)


@FUZZ
@given(
    kind=st.sampled_from(list(PATCH_TYPES)),
    ops=st.lists(json_ops, max_size=4),
    merge=merge_docs,
    directives=smp_directives,
    cuts=st.lists(st.integers(0, 2_000), max_size=2),
    insert=st.sampled_from([b"", b"{", b"]", b'"', b"\x00", b"&a", b"*a"]),
    strict=st.booleans(),
)
async def test_patches(
    admin: Client,
    unique: str,
    kind: str,
    ops: list[Any],
    merge: dict[str, Any],
    directives: dict[str, Any],
    cuts: list[int],
    insert: bytes,
    strict: bool,
) -> None:
    target = Tracked(admin, unique)
    await target.ensure()
    if kind == "json":
        body = orjson.dumps(ops)
    elif kind == "merge":
        body = orjson.dumps(merge)
    elif kind == "strategic":
        body = orjson.dumps({**merge, **directives})
    else:
        config = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": unique},
            **{k: v for k, v in merge.items() if k != "metadata"},
        }
        if isinstance(config.get("data"), dict):
            config["data"] = {k: v for k, v in config["data"].items() if v is not None}
        body = as_yaml(config)
    params = {"fieldManager": "fuzz", "fieldValidation": "Strict" if strict else "Warn"}
    code, answer = await exchange(
        admin, "PATCH", target.path, mangle(body, cuts, insert), PATCH_TYPES[kind], params
    )
    await target.check(code, answer)


# --- Targeted: the limits the generic strategies above cannot reach -------------------
#: Fewer examples: each may carry a body of up to a megabyte.
TARGETED = settings(FUZZ, max_examples=60)


def _nest(depth: int, inner: str) -> str:
    return "[" * depth + inner + "]" * depth


@TARGETED
@given(
    anchor_depth=st.integers(0, 200),
    alias_depth=st.integers(0, 200),
    scalar_size=st.sampled_from([0, 10, 4096, 100_000, 1_000_000]),
    aliases=st.integers(1, 1500),
)
@example(anchor_depth=190, alias_depth=190, scalar_size=0, aliases=1)  # nests 380 deep
@example(anchor_depth=0, alias_depth=1, scalar_size=1_000_000, aliases=1000)  # ~1 GB
async def test_yaml_aliases_of_deep_or_large_values(
    admin: Client, unique: str, anchor_depth: int, alias_depth: int, scalar_size: int, aliases: int
) -> None:
    """An alias placed deep of a value anchored deep, and many aliases of one large
    scalar: each within the limits alone, past them together. Refused (400 or 413)
    before being expanded, never a 5xx."""
    anchored = _nest(anchor_depth, "v" * scalar_size if scalar_size else "''")
    refs = ", ".join(["*a"] * aliases)
    text = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {unique}\n"
    text += f"x: &a {anchored}\ny: {_nest(alias_depth, refs)}\n"
    await check_create(admin, unique, text.encode(), "application/yaml")


def _nested_object(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {"a": value}
    return value


@TARGETED
@given(
    first=st.integers(1, 198),
    at=st.integers(0, 198),
    second=st.integers(1, 198),
    last=st.sampled_from(["copy", "move", "test", "replace", "remove"]),
)
@example(first=190, at=189, second=190, last="copy")  # a copy of a value 380 deep
async def test_json_patches_that_nest_by_steps(
    admin: Client, unique: str, first: int, at: int, second: int, last: str
) -> None:
    """Two adds, each within the depth limit, nest a value past it; a third operation
    then reads it. The patch is refused (422), never a 5xx."""
    target = Tracked(admin, unique)
    await target.ensure()
    at = min(at, first - 1)
    ops: list[dict[str, Any]] = [
        {"op": "add", "path": "/x", "value": _nested_object(first)},
        {"op": "add", "path": "/x" + "/a" * at, "value": _nested_object(second)},
    ]
    if last in ("copy", "move"):
        ops.append({"op": last, "from": "/x", "path": "/y"})
    elif last == "test":
        ops.append({"op": "test", "path": "/x", "value": _nested_object(first)})
    elif last == "replace":
        ops.append({"op": "replace", "path": "/x/a", "value": {}})
    else:
        ops.append({"op": "remove", "path": "/x"})
    code, answer = await exchange(
        admin, "PATCH", target.path, orjson.dumps(ops), PATCH_TYPES["json"]
    )
    await target.check(code, answer)
