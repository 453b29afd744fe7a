"""Kubernetes' published OpenAPI definitions of the built-in kinds, as shipped.

The ``kubernetes-validate`` package carries kube's definitions per release as JSON Schema
(``type: [string, "null"]``, ``$ref`` into one ``_definitions.json``). The API server
turns them into structural schemas (``apiserver/registry/builtin/kubeschemas.py``); the
typed-model generator (``pyocm/api/typedgen``) writes TypedDicts from them. Only the
newest release the package ships is read, once, on first use.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Any

import orjson

_RELEASE = re.compile(r"^v(\d+)\.(\d+)\.(\d+)-local$")


@cache
def definitions() -> dict[str, dict[str, Any]]:
    """Every definition of the newest Kubernetes release the package ships, by name
    (``io.k8s.api.core.v1.ConfigMap``)."""
    root = resources.files("kubernetes_validate") / "kubernetes-json-schema"
    releases = [
        (tuple(int(n) for n in m.groups()), entry)
        for entry in root.iterdir()
        if (m := _RELEASE.match(entry.name))
    ]
    newest = max(releases, key=lambda pair: pair[0])[1]
    loaded: dict[str, dict[str, Any]] = orjson.loads((newest / "_definitions.json").read_bytes())[
        "$defs"
    ]
    return loaded
