"""How a protobuf message maps to its JSON form: one small table per message.

A :class:`Message` maps field numbers to :class:`F` entries (the JSON name and how the
value converts). Conversion follows the JSON encoding Kubernetes uses, given that
gogo-protobuf writes every non-pointer field even when it is zero:

* zero values of non-pointer fields are dropped (``omitempty``), empty messages, lists
  and maps too; a pointer field (``ptr``) present on the wire keeps its value, even zero;
* ``Time`` becomes RFC 3339 seconds, ``MicroTime`` microseconds; a zero time is absent;
* ``bytes`` become base64; ``Quantity`` its string; ``IntOrString`` an int or a string;
  ``ExtraValue`` a plain list of strings; ``double`` a float;
  ``RawExtension``/``FieldsV1``/``JSON`` the JSON they carry; maps arrive as repeated
  ``{1: key, 2: value}`` entries.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Union

import orjson

from pyocm.kube import jsonlimits
from pyocm.kube.protobuf.wire import FIXED64, LENGTH, VARINT, WireError, fields, signed

Obj = dict[str, Any]
Kind = Union[str, "Message"]


@dataclass(frozen=True)
class F:
    name: str
    kind: Kind
    repeated: bool = False
    #: A Go pointer: present on the wire means set, even to a zero value.
    ptr: bool = False
    #: For maps: the kind of the values (keys are strings).
    map_of: Kind | None = None
    #: Turns a decoded message into its JSON form when that is not an object (the
    #: "X or Y" unions of JSONSchemaProps: a schema or a bool, a schema or a list).
    post: Callable[[Obj], Any] | None = None


@dataclass
class Message:
    name: str
    fields: dict[int, F] = field(default_factory=dict)

    def define(self, **numbered: F) -> Message:
        """Fill the table (``_1=F(...)``); a message may refer to itself or to messages
        defined later, so tables are filled after all are named."""
        for key, entry in numbered.items():
            self.fields[int(key.lstrip("_"))] = entry
        return self


def decode(message: Message, data: bytes, *, depth: int = 1) -> Obj:
    """The JSON object for ``data``, an encoded ``message`` nested ``depth`` deep.

    Messages that contain themselves (JSONSchemaProps) could nest as deep as the
    body is long; past :data:`~pyocm.kube.jsonlimits.MAX_DEPTH` the body is refused."""
    if depth > jsonlimits.MAX_DEPTH:
        raise WireError(f"exceeded max depth of {jsonlimits.MAX_DEPTH}")
    out: Obj = {}
    for item in fields(data):
        entry = message.fields.get(item.number)
        if entry is None:
            continue  # a newer field than this table knows: ignored, as protobuf does
        if entry.map_of is not None:
            key, value = _map_entry(entry, item.value, depth=depth)
            out.setdefault(entry.name, {})[key] = value
            continue
        value = _value(
            entry.kind,
            item.wire_type,
            item.value,
            where=f"{message.name}.{entry.name}",
            depth=depth,
        )
        if entry.post is not None and isinstance(value, dict):
            value = entry.post(value)
        if entry.repeated:
            if value is not _ABSENT:
                out.setdefault(entry.name, []).append(value)
        else:
            out[entry.name] = (entry, value)
    result: Obj = {}
    for name, value in out.items():
        if isinstance(value, tuple):
            entry, single = value
            if single is _ABSENT or (not entry.ptr and _is_zero(single)):
                continue
            result[name] = single
        elif value:
            result[name] = value
    return result


_ABSENT = object()


def _is_zero(value: Any) -> bool:
    return value in ("", 0, False, None) or value == {} or value == []


def _map_entry(entry: F, payload: int | bytes, *, depth: int) -> tuple[str, Any]:
    if not isinstance(payload, bytes):
        raise WireError(f"map field {entry.name} is not length-delimited")
    key, value = "", None
    assert entry.map_of is not None
    for item in fields(payload):
        if item.number == 1:
            key = _string(item.value, entry.name)
        elif item.number == 2:
            value = _value(
                entry.map_of, item.wire_type, item.value, where=f"{entry.name}[{key}]", depth=depth
            )
    if value is None or value is _ABSENT:
        value = _zero(entry.map_of)
    if entry.post is not None and isinstance(value, dict):
        value = entry.post(value)
    return key, value


def _zero(kind: Kind) -> Any:
    return (
        {"string": "", "bytes": "", "bool": False, "int": 0}.get(kind, {})
        if isinstance(kind, str)
        else {}
    )


def _string(payload: int | bytes, where: str) -> str:
    if not isinstance(payload, bytes):
        raise WireError(f"{where}: a string was expected")
    try:
        return payload.decode()
    except UnicodeDecodeError:
        raise WireError(f"{where}: the string is not valid UTF-8") from None


def _value(kind: Kind, wire_type: int, payload: int | bytes, *, where: str, depth: int) -> Any:
    if isinstance(kind, Message):
        if wire_type != LENGTH or not isinstance(payload, bytes):
            raise WireError(f"{where}: a message was expected")
        return decode(kind, payload, depth=depth + 1)
    converter = _SCALARS.get(kind)
    if converter is None:
        raise ValueError(f"{where}: unknown field kind {kind!r}")  # a table mistake
    expected = {"int": VARINT, "bool": VARINT, "double": FIXED64}.get(kind, LENGTH)
    if wire_type != expected:
        raise WireError(f"{where}: wire type {wire_type} does not fit a {kind} field")
    value = converter(payload, where)
    if kind == "json" and value is not _ABSENT:
        try:  # embedded JSON counts towards the same depth as the messages around it
            jsonlimits.check_depth(value, limit=jsonlimits.MAX_DEPTH - depth)
        except jsonlimits.TooDeep:
            raise WireError(f"exceeded max depth of {jsonlimits.MAX_DEPTH}") from None
    return value


def _time(payload: int | bytes, where: str, *, micro: bool) -> Any:
    if not isinstance(payload, bytes):
        raise WireError(f"{where}: a time was expected")
    seconds = nanos = 0
    for item in fields(payload):
        if item.number == 1 and isinstance(item.value, int):
            seconds = signed(item.value)
        elif item.number == 2 and isinstance(item.value, int):
            nanos = signed(item.value)
    if seconds == 0 and nanos == 0:
        return _ABSENT
    try:
        moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(
            seconds=seconds, microseconds=nanos // 1000
        )
    except (OverflowError, ValueError):
        raise WireError(f"{where}: the time is out of range") from None
    if micro:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _inner_string(payload: int | bytes, where: str) -> Any:
    """``Quantity``: a message whose field 1 is the string."""
    if not isinstance(payload, bytes):
        raise WireError(f"{where}: a message was expected")
    text = ""
    for item in fields(payload):
        if item.number == 1:
            text = _string(item.value, where)
    return text


def _int_or_string(payload: int | bytes, where: str) -> Any:
    if not isinstance(payload, bytes):
        raise WireError(f"{where}: a message was expected")
    kind, number, text = 0, 0, ""
    for item in fields(payload):
        if item.number == 1 and isinstance(item.value, int):
            kind = item.value
        elif item.number == 2 and isinstance(item.value, int):
            number = signed(item.value)
        elif item.number == 3:
            text = _string(item.value, where)
    return text if kind == 1 else number


def _raw_json(payload: int | bytes, where: str) -> Any:
    """``RawExtension``/``FieldsV1``/``JSON``: field 1 holds JSON bytes."""
    if not isinstance(payload, bytes):
        raise WireError(f"{where}: a message was expected")
    raw = b""
    for item in fields(payload):
        if item.number == 1 and isinstance(item.value, bytes):
            raw = item.value
    if not raw:
        return _ABSENT
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise WireError(f"{where}: the embedded JSON is not valid") from None


def _bytes(payload: int | bytes, where: str) -> Any:
    if not isinstance(payload, bytes):
        raise WireError(f"{where}: bytes were expected")
    return base64.b64encode(payload).decode()


def _string_list(payload: int | bytes, where: str) -> Any:
    """``ExtraValue`` (and ``JSONSchemaPropsOrStringArray``'s list): field 1 repeated."""
    if not isinstance(payload, bytes):
        raise WireError(f"{where}: a message was expected")
    return [_string(item.value, where) for item in fields(payload) if item.number == 1]


def _double(payload: int | bytes, where: str) -> Any:
    assert isinstance(payload, int)
    return struct.unpack("<d", payload.to_bytes(8, "little"))[0]


def _int(payload: int | bytes, where: str) -> Any:
    assert isinstance(payload, int)
    return signed(payload)


_SCALARS: Mapping[str, Callable[[int | bytes, str], Any]] = {
    "string": _string,
    "bytes": _bytes,
    "int": _int,
    "bool": lambda payload, _: bool(payload),
    "time": lambda payload, where: _time(payload, where, micro=False),
    "microtime": lambda payload, where: _time(payload, where, micro=True),
    "quantity": _inner_string,
    "intorstring": _int_or_string,
    "json": _raw_json,
    "stringlist": _string_list,
    "double": _double,
}
