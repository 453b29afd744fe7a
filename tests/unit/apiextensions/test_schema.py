"""Schema compilation: Go regexp semantics, format stripping, extensions, name formats."""

from __future__ import annotations

import re
from typing import Any

import pytest

from pyocm.apiserver.apiextensions import schema
from pyocm.apiserver.apiextensions.schema import MISSING, CompiledSchema


def test_dollar_matches_only_at_the_very_end_like_go() -> None:
    compiled = schema.go_regexp("^[a-z]+$")
    assert compiled.search("abc") is not None
    # Python's plain "$" would accept the trailing newline; Go's does not.
    assert compiled.search("abc\n") is None


def test_dollar_inside_a_class_or_escaped_stays_literal() -> None:
    assert schema.go_regexp("^[$]x\\$$").search("$x$") is not None


def test_digit_class_is_ascii_only_like_go() -> None:
    assert schema.go_regexp("^\\d+$").search("١٢") is None


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        pytest.param("^(?=a)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`", id="lookahead"),
        pytest.param("(a)\\1", "error parsing regexp: invalid escape sequence: `\\1`", id="backreference"),
    ],
)
def test_patterns_go_rejects_are_rejected(pattern: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        schema.go_regexp(pattern)
    assert str(info.value) == message


def test_broken_pattern_is_reported_as_a_regexp_parse_error() -> None:
    with pytest.raises(ValueError, match=re.escape("error parsing regexp: missing ), unterminated subpattern")):
        schema.go_regexp("(abc")


def test_compiled_patterns_are_shared() -> None:
    assert schema.go_regexp("^shared-[0-9]$") is schema.go_regexp("^shared-[0-9]$")


@pytest.mark.parametrize(
    ("node", "kept"),
    [
        pytest.param({"type": "string", "format": "date-time"}, "date-time", id="string-date-time"),
        pytest.param({"type": "string", "format": "int32"}, "", id="string-int32-stripped"),
        pytest.param({"type": "string", "format": "made-up"}, "", id="unknown-stripped"),
        pytest.param({"type": "integer", "format": "int32"}, "int32", id="integer-int32"),
        pytest.param({"type": "integer", "format": "byte"}, "", id="integer-byte-stripped"),
        pytest.param({"type": "number", "format": "double"}, "double", id="number-double"),
        pytest.param({"type": "boolean", "format": "byte"}, "", id="boolean-stripped"),
        pytest.param({"format": "uri"}, "uri", id="untyped-uri"),
    ],
)
def test_unsupported_formats_are_stripped_like_kube_apiserver(node: dict[str, Any], kept: str) -> None:
    assert schema.compile_node(node).format == kept


def test_int_or_string_becomes_a_two_type_node() -> None:
    node = schema.compile_node({"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]})
    assert node.types == ("integer", "string")
    assert len(node.any_of) == 2
    assert node.composed


def test_root_metadata_keeps_only_name_and_generate_name() -> None:
    compiled = CompiledSchema.from_openapi({
        "type": "object",
        "properties": {"metadata": {"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 5},
            "labels": {"type": "object", "maxProperties": 1},
        }}},
    })
    meta = compiled.root.properties["metadata"]
    assert list(meta.properties) == ["name"]
    assert meta.properties["name"].max_length == 5


def test_defaults_and_walk_flags() -> None:
    node = schema.compile_node({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"n": {"type": "integer", "default": 0}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "raw": {"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True},
        },
    })
    assert node.properties["spec"].properties["n"].default == 0
    assert node.properties["spec"].default is MISSING
    assert node.walk_defaults and node.properties["spec"].walk_defaults
    assert not node.properties["tags"].walk_defaults
    assert node.walk_lists and node.properties["tags"].walk_lists and not node.properties["spec"].walk_lists
    assert node.walk_embedded and not node.properties["tags"].walk_embedded


def test_additional_properties_false_is_remembered() -> None:
    node = schema.compile_node({"type": "object", "additionalProperties": False})
    assert node.has_additional and not node.additional_allowed and node.additional is None


@pytest.mark.parametrize(
    ("fmt", "value", "ok"),
    [
        pytest.param("byte", "aGVsbG8=", True, id="byte"),
        pytest.param("byte", "!!!", False, id="byte-bad"),
        pytest.param("date", "2024-02-29", True, id="date-leap"),
        pytest.param("date", "2023-02-29", False, id="date-bad-day"),
        pytest.param("datetime", "2024-01-02T03:04:05Z", True, id="date-time"),
        pytest.param("datetime", "2024-01-02T03:04:05.123+02:00", True, id="date-time-offset"),
        pytest.param("datetime", "2024-01-02 03:04:05", False, id="date-time-space"),
        pytest.param("ipv4", "10.0.0.1", True, id="ipv4"),
        pytest.param("ipv4", "::1", False, id="ipv4-v6"),
        pytest.param("ipv6", "fe80::1", True, id="ipv6"),
        pytest.param("cidr", "10.0.0.0/8", True, id="cidr"),
        pytest.param("cidr", "10.0.0.0", False, id="cidr-no-mask"),
        pytest.param("uri", "https://example.com/x", True, id="uri"),
        pytest.param("uri", "example.com", False, id="uri-relative"),
        pytest.param("uuid", "6D2C5A9E-1F0B-4C55-9D0E-2F1F6F1E0A11", True, id="uuid-upper"),
        pytest.param("hostname", "my-host.example.com", True, id="hostname"),
        pytest.param("hostname", "-bad.example.com", False, id="hostname-bad"),
        pytest.param("duration", "1h30m", True, id="duration"),
        pytest.param("duration", "soon", False, id="duration-bad"),
        pytest.param("k8sshortname", "my-name", True, id="short-name"),
        pytest.param("k8sshortname", "My-Name", False, id="short-name-upper"),
    ],
)
def test_format_checks(fmt: str, value: str, ok: bool) -> None:
    assert schema.FORMAT_CHECKS[fmt](value) is ok


def test_dns_1035_label_message_is_apimachinery_s() -> None:
    assert schema.dns1035_label_errors("1abc") == [
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
        "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
        "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    ]


def test_dns_1123_subdomain_length_and_format() -> None:
    errors = schema.dns1123_subdomain_errors("A" * 254)
    assert errors[0] == "must be no more than 253 characters"
    assert errors[1].endswith("(e.g. 'example.com', regex used for validation is "
                              "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
    assert schema.dns1123_subdomain_errors("cluster.open-cluster-management.io") == []
