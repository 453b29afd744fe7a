"""Render the CustomResourceDefinitions of every pyocm kind.

``python -m pyocm.api.crds`` prints all CRDs as one multi-document YAML stream;
``python -m pyocm.api.crds --out DIR`` writes one ``<crd-name>.yaml`` file per CRD instead.
The hub installs the objects returned by :func:`render_all` when it starts.

Every version of a resource becomes one entry of ``spec.versions``. There is no
``conversion`` stanza (the ``None`` strategy), although ClusterManagementAddOn and
ManagedClusterAddOn differ between v1alpha1 and v1beta1: pyocm's API server converts them
itself (``pyocm.hooks.conversion``, upstream's webhook conversion), by group and kind,
whatever the stanza says, as kube-apiserver converts its built-in types. Upstream's
``Webhook`` stanza would name a service (``cluster-manager-addon-webhook``) and CA bundle
that a pyocm hub does not have; kubectl and client-go never read the stanza. These CRDs
installed on a real kube-apiserver therefore need upstream's conversion webhook (or one
serving ``pyocm.hooks.conversion.review``) added to them for v1beta1 readers to see
converted objects.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped,unused-ignore]

from pyocm.api import catalog, descriptor

CRD_API_VERSION = "apiextensions.k8s.io/v1"

_SHARED_FIELDS = ("group", "kind", "plural", "singular", "namespaced", "short_names", "categories")


def _version(resource: descriptor.ResourceDescriptor) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": resource.version,
        "served": resource.served,
        "storage": resource.storage,
        "schema": {"openAPIV3Schema": resource.openapi_schema()},
    }
    if resource.status_subresource:
        entry["subresources"] = {"status": {}}
    if resource.printer_columns:
        entry["additionalPrinterColumns"] = [c.to_crd() for c in resource.printer_columns]
    return entry


def _names(resource: descriptor.ResourceDescriptor) -> dict[str, Any]:
    names: dict[str, Any] = {
        "kind": resource.kind,
        "listKind": resource.list_kind,
        "plural": resource.plural,
        "singular": resource.singular,
    }
    if resource.short_names:
        names["shortNames"] = list(resource.short_names)
    if resource.categories:
        names["categories"] = list(resource.categories)
    return names


def _check_versions(versions: Sequence[descriptor.ResourceDescriptor]) -> None:
    """One CRD needs identical names and scope across versions and one storage version."""
    if not versions:
        raise ValueError("a CRD needs at least one version")
    first = versions[0]
    for other in versions[1:]:
        for name in _SHARED_FIELDS:
            if getattr(other, name) != getattr(first, name):
                raise ValueError(f"{first.crd_name}: versions disagree on {name}")
    storage = [v.version for v in versions if v.storage]
    if len(storage) != 1:
        raise ValueError(f"{first.crd_name}: need exactly one storage version, got {storage}")


def render(versions: Sequence[descriptor.ResourceDescriptor]) -> dict[str, Any]:
    """The CRD object serving ``versions`` (all of one group and plural), in list order."""
    _check_versions(versions)
    first = versions[0]
    return {
        "apiVersion": CRD_API_VERSION,
        "kind": "CustomResourceDefinition",
        "metadata": {"name": first.crd_name},
        "spec": {
            "group": first.group,
            "names": _names(first),
            "preserveUnknownFields": False,
            "scope": first.scope,
            "versions": [_version(v) for v in versions],
        },
    }


def render_all(
    resources: Iterable[descriptor.ResourceDescriptor] = catalog.DESCRIPTORS,
) -> list[dict[str, Any]]:
    """One CRD per resource, in the order the resources first appear."""
    grouped: dict[str, list[descriptor.ResourceDescriptor]] = {}
    for resource in resources:
        grouped.setdefault(resource.crd_name, []).append(resource)
    return [render(versions) for versions in grouped.values()]


def to_yaml(crd: dict[str, Any]) -> str:
    """Block-style YAML with sorted keys, as controller-gen writes CRDs.

    The JSON round trip unshares repeated sub-objects, which PyYAML would otherwise write
    as anchors and aliases that some tools and most readers do not expect.
    """
    plain = json.loads(json.dumps(crd))
    return str(yaml.safe_dump(plain, sort_keys=True, default_flow_style=False, width=1000))


def write(directory: Path) -> list[Path]:
    """Write ``<crd-name>.yaml`` for every CRD into ``directory`` (created if missing)."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for crd in render_all():
        path = directory / f"{crd['metadata']['name']}.yaml"
        path.write_text(to_yaml(crd), encoding="utf-8")
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pyocm.api.crds", description="Render the OCM CustomResourceDefinitions."
    )
    parser.add_argument("--out", type=Path, help="write one YAML file per CRD into this directory")
    args = parser.parse_args(argv)
    if args.out is not None:
        for path in write(args.out):
            print(path)
        return 0
    sys.stdout.write("---\n".join(to_yaml(crd) for crd in render_all()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
