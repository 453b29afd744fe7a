"""What a served kind is, in one value: its names, scope, subresources, columns and schema.

A :class:`ResourceDescriptor` describes one kind at one version. The CRD renderer
(:mod:`pyocm.api.crds`) merges the descriptors that share a group and plural into one
CustomResourceDefinition; controllers use the same descriptors to address the kind
through a client, so there is exactly one place where a kind's identity is written down.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyocm.api import schema as s


@dataclass(frozen=True, kw_only=True)
class PrinterColumn:
    """One ``additionalPrinterColumns`` entry, shown by ``kubectl get``."""

    name: str
    type: str
    json_path: str
    description: str = ""
    format: str = ""
    priority: int = 0

    def to_crd(self) -> dict[str, Any]:
        column: dict[str, Any] = {"name": self.name, "type": self.type, "jsonPath": self.json_path}
        if self.description:
            column["description"] = self.description
        if self.format:
            column["format"] = self.format
        if self.priority:
            column["priority"] = self.priority
        return column


def age_column() -> PrinterColumn:
    """The conventional ``Age`` column from ``metadata.creationTimestamp``."""
    return PrinterColumn(name="Age", type="date", json_path=".metadata.creationTimestamp")


def condition_column(
    name: str, condition: str, *, field_name: str = "status", description: str = ""
) -> PrinterColumn:
    """A column showing one field (``status`` or ``reason``) of the condition of type ``condition``."""
    path = f'.status.conditions[?(@.type=="{condition}")].{field_name}'
    return PrinterColumn(name=name, type="string", json_path=path, description=description)


@dataclass(frozen=True, kw_only=True)
class ResourceDescriptor:
    """One kind at one version, as a CRD version and as a client sees it.

    ``served``/``storage`` are the CRD version flags; exactly one version of a resource is
    the storage version. Equality and hashing use the identity fields only, never the schema.
    """

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    schema: Mapping[str, Any] = field(compare=False, hash=False, repr=False)
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    status_subresource: bool = False
    printer_columns: tuple[PrinterColumn, ...] = ()
    served: bool = True
    storage: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def crd_name(self) -> str:
        """The name of the CustomResourceDefinition serving this kind: ``<plural>.<group>``."""
        return f"{self.plural}.{self.group}"

    @property
    def scope(self) -> str:
        return "Namespaced" if self.namespaced else "Cluster"

    def openapi_schema(self) -> s.Schema:
        """A private copy of the ``openAPIV3Schema``, safe for the caller to change."""
        return copy.deepcopy(dict(self.schema))
