"""``{{NAME}}`` substitution as upstream's fasttemplate does it on the manifest's raw JSON,
and the errors of a manifest that does not decode afterwards."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.addon.template import gojson
from pyocm.addon.template.render import RenderError, render_manifests, substitute


def _rendered(data: dict[str, Any], variables: dict[str, str], **adc: Any) -> dict[str, Any]:
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": data}
    config = {"customizedVariables": [{"name": k, "value": v} for k, v in variables.items()], **adc}
    spec = {"addonName": "a", "agentSpec": {"workload": {"manifests": [manifest]}}}
    objects = render_manifests(
        addon_name="a",
        template_spec=spec,
        cluster={"metadata": {"name": "c1"}},
        deployment_config=config,
    )
    result: dict[str, Any] = objects[0]["data"]
    return result


def test_names_are_not_trimmed_and_unknown_names_render_empty() -> None:
    data = _rendered(
        {"a": "{{ LEVEL }}", "b": "{{LEVEL}}", "c": "x{{MISSING}}y"},
        {"LEVEL": "4", " LEVEL ": "spaced"},
    )
    assert data == {"a": "spaced", "b": "4", "c": "xy"}


def test_private_values_never_render() -> None:
    data = _rendered(
        {"ns": "{{__INSTALL_NAMESPACE}}", "b": "{{INSTALL_NAMESPACE}}"},
        {},
        agentInstallNamespace="n1",
    )
    assert data == {"ns": "", "b": "n1"}


def test_builtin_cluster_name_and_no_hub_kubeconfig_without_registration() -> None:
    assert _rendered({"c": "{{CLUSTER_NAME}}", "h": "{{HUB_KUBECONFIG}}"}, {}) == {
        "c": "c1",
        "h": "",
    }


def test_values_are_not_escaped() -> None:
    r"""The value goes into the JSON text as is: ``\n`` in a value is a JSON escape."""
    assert _rendered({"v": "{{V}}"}, {"V": "a\\nb"}) == {"v": "a\nb"}


def test_a_quote_in_a_value_breaks_the_manifest() -> None:
    with pytest.raises(RenderError) as caught:
        _rendered({"v": "{{V}}"}, {"V": 'say "hi"'})
    assert str(caught.value) == "invalid character 'h' after object key:value pair"


def test_names_are_looked_up_in_the_escaped_json() -> None:
    """The raw manifest is Go's JSON: ``<`` is written ``\\u003c``, so ``{{a<b}}`` looks
    up ``a\\u003cb`` and a variable named ``a<b`` never renders."""
    assert _rendered({"v": "{{a<b}}"}, {"a<b": "x"}) == {"v": ""}
    assert _rendered({"v": "{{a<b}}"}, {"a\\u003cb": "x"}) == {"v": "x"}


def test_substitute_is_fasttemplate() -> None:
    assert substitute("{{{A}}}", {"{A": "1"}) == "1}"
    assert substitute("{{A{{B}}", {"A{{B": "2"}) == "2"
    assert substitute("no tags }}", {}) == "no tags }}"


def test_start_tag_without_end_tag() -> None:
    with pytest.raises(RenderError) as caught:
        substitute('{"a":"{{A"}', {})
    assert str(caught.value) == (
        'Cannot find end tag="}}" in the template="{\\"a\\":\\"{{A\\"}" starting from "A\\"}"'
    )


def test_a_manifest_without_kind() -> None:
    spec = {
        "addonName": "a",
        "agentSpec": {"workload": {"manifests": [{"apiVersion": "v1", "kind": "{{K}}"}]}},
    }
    with pytest.raises(RenderError) as caught:
        render_manifests(
            addon_name="a",
            template_spec=spec,
            cluster={"metadata": {"name": "c"}},
            deployment_config=None,
        )
    assert str(caught.value) == """Object 'Kind' is missing in '{"apiVersion":"v1","kind":""}'"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a":', "unexpected end of JSON input"),
        ('{"a" 1}', "invalid character '1' after object key"),
        ('{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
        ("[1 2]", "invalid character '2' after array element"),
        ('{"a":1,}', "invalid character '}' looking for beginning of object key string"),
        ("[1,]", "invalid character ']' looking for beginning of value"),
        ('{"a":x}', "invalid character 'x' looking for beginning of value"),
        ("{} {}", "invalid character '{' after top-level value"),
        ('"a\\q"', "invalid character 'q' in string escape code"),
        ('"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"),
        ('"a\nb"', "invalid character '\\n' in string literal"),
        ('"abc', "unexpected end of JSON input"),
        ("NaN", "invalid character 'N' looking for beginning of value"),
        ('{"it\'s":', "unexpected end of JSON input"),
        ("'", "invalid character '\\'' looking for beginning of value"),
    ],
)
def test_go_json_messages(text: str, message: str) -> None:
    with pytest.raises(gojson.GoJSONError) as caught:
        gojson.loads(text)
    assert str(caught.value) == message
