"""Name syntax checks against apimachinery's exact messages."""

from __future__ import annotations

import pytest

from pyocm.kube import names

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
QUALIFIED_NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("cluster1", [], id="simple"),
        pytest.param("open-cluster-management.io", [], id="dotted"),
        pytest.param("a" * 253, [], id="max-length"),
        pytest.param("Cluster1", [SUBDOMAIN_MSG], id="uppercase"),
        pytest.param("-a", [SUBDOMAIN_MSG], id="leading-dash"),
        pytest.param("a..b", [SUBDOMAIN_MSG], id="empty-segment"),
        pytest.param("", [SUBDOMAIN_MSG], id="empty"),
        pytest.param("a" * 254, ["must be no more than 253 characters"], id="too-long"),
    ],
)
def test_dns1123_subdomain(value: str, expected: list[str]) -> None:
    assert names.is_dns1123_subdomain(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("default", [], id="simple"),
        pytest.param("a.b", ["must not contain dots"], id="dots"),
        pytest.param("a_b", [LABEL_MSG], id="underscore"),
        pytest.param("a" * 64, ["must be no more than 63 characters"], id="too-long"),
        pytest.param(
            "A" * 64, ["must be no more than 63 characters", LABEL_MSG], id="too-long-and-invalid"
        ),
    ],
)
def test_dns1123_label(value: str, expected: list[str]) -> None:
    assert names.is_dns1123_label(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("app", [], id="plain"),
        pytest.param("open-cluster-management.io/cluster-name", [], id="prefixed"),
        pytest.param("My_Name.1", [], id="mixed-case-underscore"),
        pytest.param("/name", ["prefix part must be non-empty"], id="empty-prefix"),
        pytest.param(
            "example.com/", ["name part must be non-empty", QUALIFIED_NAME_PART], id="empty-name"
        ),
        pytest.param("Example.com/a", ["prefix part " + SUBDOMAIN_MSG], id="bad-prefix"),
        pytest.param("-a", [QUALIFIED_NAME_PART], id="leading-dash"),
        pytest.param(
            "a" * 64,
            ["name part must be no more than 63 characters"],
            id="name-too-long",
        ),
        pytest.param(
            "a/b/c",
            [
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
                "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
                "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ],
            id="two-slashes",
        ),
    ],
)
def test_qualified_name(value: str, expected: list[str]) -> None:
    assert names.is_qualified_name(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("", [], id="empty-is-valid"),
        pytest.param("c1", [], id="simple"),
        pytest.param("v@", [LABEL_VALUE_MSG], id="bad-char"),
        pytest.param("a" * 64, ["must be no more than 63 characters"], id="too-long"),
    ],
)
def test_label_value(value: str, expected: list[str]) -> None:
    assert names.is_valid_label_value(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param("system:masters", [], id="colon-allowed"),
        pytest.param(".", ["may not be '.'"], id="dot"),
        pytest.param("..", ["may not be '..'"], id="dotdot"),
        pytest.param(
            "a/b%c", ["may not contain '/'", "may not contain '%'"], id="slash-and-percent"
        ),
    ],
)
def test_path_segment_name(value: str, expected: list[str]) -> None:
    assert names.is_path_segment_name(value) == expected


def test_generate_name_appends_five_characters_from_the_alphabet() -> None:
    name = names.generate_name("cluster1-")
    assert name.startswith("cluster1-")
    suffix = name[len("cluster1-") :]
    assert len(suffix) == 5
    assert set(suffix) <= set("bcdfghjklmnpqrstvwxz2456789")


def test_generate_name_truncates_long_prefix_to_fit_63_characters() -> None:
    name = names.generate_name("p" * 70)
    assert len(name) == 63
    assert name[:58] == "p" * 58


def test_generate_name_is_random() -> None:
    assert len({names.generate_name("x-") for _ in range(50)}) > 45
