"""Descriptions of served resources: what discovery shows and how the store keys them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pyocm.apiserver.registry.printing import Column
from pyocm.apiserver.registry.strategy import Strategy

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
CREATE_ONLY = ("create",)


@dataclass(frozen=True)
class SubresourceInfo:
    """A ``<resource>/<name>`` entry in discovery, e.g. ``certificatesigningrequests/approval``."""

    name: str
    verbs: tuple[str, ...] = ("get", "patch", "update")
    #: Kind of the request and response body when it differs from the parent's
    #: (``serviceaccounts/token`` takes and returns ``authentication.k8s.io/v1 TokenRequest``).
    kind: str = ""
    group: str = ""
    version: str = ""


@dataclass(frozen=True)
class ResourceInfo:
    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    strategy: Strategy
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[SubresourceInfo, ...] = ()
    #: Objects are stored under this group (lets two API groups share one store, as core
    #: and events.k8s.io Events do); empty means ``group``.
    storage_group: str = ""
    #: Served but not persisted (reviews): the store is not involved.
    virtual: bool = False
    #: What ``kubectl get`` shows (a server-side Table); empty: Name and Created At.
    columns: tuple[Column, ...] = field(default_factory=tuple)
    #: A custom resource version's ``openAPIV3Schema`` (what OpenAPI v3 publishes).
    openapi_schema: Mapping[str, object] | None = None

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    def key_prefix(self, namespace: str = "") -> str:
        """Storage prefix of every object of this resource, or of one namespace's."""
        base = f"/registry/{self.storage_group or self.group or 'core'}/{self.plural}/"
        if self.namespaced and namespace:
            return f"{base}{namespace}/"
        return base

    def key(self, *, namespace: str, name: str) -> str:
        if self.namespaced:
            return f"{self.key_prefix()}{namespace}/{name}"
        return f"{self.key_prefix()}{name}"

    def subresource(self, name: str) -> SubresourceInfo | None:
        for sub in self.subresources:
            if sub.name == name:
                return sub
        return None
