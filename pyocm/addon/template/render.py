"""A template's manifests for one cluster, as upstream's ``CRDTemplateAgentAddon``
renders them (``templateagent/template_agent.go``).

Each manifest is written as the JSON upstream reads from the API server (keys sorted,
Go's escapes), every ``{{NAME}}`` in it is replaced by the value's text, then the result
is decoded and decorated. The replacement is valyala/fasttemplate's: plain text, no
trimming (``{{ NAME }}`` looks up `` NAME ``), no JSON escaping (a value with a quote
breaks the manifest, which fails to decode), and a name without a value renders as
nothing. Private values (``__NODE_PLACEMENT``...) are never rendered.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from pyocm.addon.hub.spechash import go_json
from pyocm.addon.template import decorate, gojson, typed
from pyocm.addon.template.values import RenderError, Values, get_values
from pyocm.api.models.addon_v1alpha1 import AddOnTemplateSpec
from pyocm.api.models.addon_v1beta1 import AddOnDeploymentConfigSpec
from pyocm.api.models.cluster_v1 import ManagedCluster

__all__ = ["RenderError", "render_manifests", "substitute"]

START, END = "{{", "}}"


def render_manifests(
    *,
    addon_name: str,
    template_spec: Mapping[str, Any],
    cluster: Mapping[str, Any],
    deployment_config: Mapping[str, Any] | None,
) -> list[dict[str, Any]]:
    """The ManifestWork manifests of ``template_spec`` (an AddOnTemplate's ``.spec``) for
    ``cluster`` (its ManagedCluster) under ``deployment_config`` (the AddOnDeploymentConfig
    ``.spec`` in effect, ``None`` when the add-on has none): the rendered and decorated
    manifests in the template's order, then the proxy CA ConfigMap when the config has a
    CA bundle. Raises :class:`RenderError` with upstream's message."""
    spec = cast(AddOnTemplateSpec, template_spec)
    values = get_values(
        template_spec=spec,
        cluster=cast(ManagedCluster, cluster),
        deployment_config=cast(AddOnDeploymentConfigSpec | None, deployment_config),
    )
    manifests = (spec.get("agentSpec") or {}).get("workload", {}).get("manifests") or []
    objects = [_render_one(addon_name, spec, values, manifest) for manifest in manifests]
    for extra in decorate.proxy_objects(addon_name=addon_name, private=values.private):
        decorate.set_namespace(extra, values.private)
        objects.append(extra)
    return [typed.sort_keys(obj) for obj in objects]


def _render_one(
    addon_name: str, spec: AddOnTemplateSpec, values: Values, manifest: Any
) -> dict[str, Any]:
    text = substitute(go_json(manifest), values.public)
    obj = _decode(text)
    resource = typed.workload_resource(obj)
    if resource is not None:
        pod = obj.setdefault("spec", {}).get("template")
        if not isinstance(pod, dict):
            pod = obj["spec"]["template"] = {}
        name = (obj.get("metadata") or {}).get("name", "")
        decorate.decorate_pod(
            addon_name=addon_name, spec=spec, values=values, resource=resource, name=name, pod=pod
        )
        typed.normalize(obj, resource)
    decorate.set_namespace(obj, values.private)
    return obj


def _decode(text: str) -> dict[str, Any]:
    """``unstructured.UnmarshalJSON``: a JSON object with a ``kind``."""
    try:
        obj = gojson.loads(text)
    except gojson.GoJSONError as exc:
        raise RenderError(str(exc)) from None
    if obj is not None and not isinstance(obj, dict):
        raise RenderError(
            f"json: cannot unmarshal {gojson.type_name(obj)} into Go value of type map[string]interface {{}}"
        )
    if not obj or not isinstance(obj.get("kind"), str) or not obj["kind"]:
        raise RenderError(f"Object 'Kind' is missing in '{text}'")
    return obj


def substitute(template: str, values: Mapping[str, str]) -> str:
    """fasttemplate's ``ExecuteString`` with ``{{``/``}}``: each tag is the text up to the
    first ``}}`` after a ``{{``. A ``{{`` with no ``}}`` after it is a panic in upstream
    (``fasttemplate.New``); here it is an error with fasttemplate's words."""
    if START not in template:
        return template
    out: list[str] = []
    rest = template
    while (start := rest.find(START)) >= 0:
        out.append(rest[:start])
        rest = rest[start + len(START) :]
        end = rest.find(END)
        if end < 0:
            raise RenderError(
                f"Cannot find end tag={_go_quote(END)} in the template={_go_quote(template)}"
                f" starting from {_go_quote(rest)}"
            )
        out.append(values.get(rest[:end], ""))
        rest = rest[end + len(END) :]
    out.append(rest)
    return "".join(out)


def _go_quote(text: str) -> str:
    """Go's ``%q`` for ordinary text (printable characters kept, quotes and backslashes
    escaped)."""
    return json.dumps(text, ensure_ascii=False)
