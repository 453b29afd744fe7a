"""What differs between kinds, and nothing else.

The generic store (:mod:`pyocm.apiserver.registry.store`) owns every rule that is the same
for all kinds: generateName, uid, timestamps, resourceVersion conflicts, finalizers and
graceful deletion, dry-run, and the status-subresource split. A :class:`Strategy` holds only
what a kind adds: defaulting, validation, which fields a subresource may change, and its
field selectors. Methods named ``prepare_*`` may mutate the object they are given;
``validate*`` must not.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.kube.status import FieldError

Obj = dict[str, Any]
FieldGetter = Callable[[Obj], str]

STATUS = "status"


def meta(obj: Obj) -> dict[str, Any]:
    m = obj.get("metadata")
    if not isinstance(m, dict):
        m = {}
        obj["metadata"] = m
    return m


def _name(obj: Obj) -> str:
    return str(meta(obj).get("name") or "")


def _namespace(obj: Obj) -> str:
    return str(meta(obj).get("namespace") or "")


BASE_FIELDS: Mapping[str, FieldGetter] = {"metadata.name": _name, "metadata.namespace": _namespace}


@dataclass(frozen=True)
class Context:
    """The request a strategy is called for.

    ``field_validation`` is the client's ``fieldValidation`` (Strict, Warn or Ignore);
    strategies that find unknown fields append ``unknown field "path"`` texts to
    ``warnings`` (the server turns them into an error or Warning headers).
    """

    user: UserInfo
    namespace: str = ""
    subresource: str = ""
    dry_run: bool = False
    field_validation: str = "Ignore"
    #: Who makes the change (``fieldManager``, else from the User-Agent), for managedFields.
    field_manager: str = ""
    #: A server-side apply: the object arrives with its managedFields already computed.
    applied: bool = False
    warnings: list[str] = field(default_factory=list)
    #: Warnings admission webhooks returned: always sent as ``Warning`` headers,
    #: whatever ``fieldValidation`` says (they are not unknown-field reports).
    admission_warnings: list[str] = field(default_factory=list)


class Strategy:
    """Default behaviour of a kind; built-in kinds and CRDs subclass or configure it.

    ``subresources`` lists the subresources the kind serves through the generic store
    (``status`` and any kind-specific ones such as ``approval`` or ``finalize``).
    """

    subresources: tuple[str, ...] = ()
    #: PUT without metadata.resourceVersion is allowed (most built-ins) or refused (CRs).
    allow_unconditional_update: bool = True
    #: metadata.generation is set to 1 on create and bumped on spec changes.
    tracks_generation: bool = True
    #: PUT of a missing object creates it (Kubernetes allows this for a few kinds).
    allow_create_on_update: bool = False
    #: Built-in kinds accept only the standard finalizers without a '/'; custom resources
    #: are held to the qualified-name rule only.
    builtin: bool = True
    #: Objects are decoded into a fixed struct, so fields it lacks are dropped (built-ins).
    decodes_into_struct: bool = True

    def __init__(self) -> None:
        self.fields: dict[str, FieldGetter] = {**BASE_FIELDS, **self.field_getters()}

    # --- hooks a kind overrides -------------------------------------------------

    def field_getters(self) -> Mapping[str, FieldGetter]:
        """Field selectors beyond metadata.name and metadata.namespace."""
        return {}

    def prepare_for_create(self, obj: Obj, ctx: Context) -> None:
        """Normalise a new object: drop the status when it has its own subresource."""
        if STATUS in self.subresources:
            obj.pop("status", None)

    def prepare_for_update(self, obj: Obj, old: Obj, ctx: Context) -> None:
        """Keep what this endpoint may not change. The default is the status split:
        the main resource keeps the stored status, ``/status`` keeps everything else."""
        if STATUS not in self.subresources:
            return
        if ctx.subresource == STATUS:
            keep_all_but(obj, old, "status")
        else:
            copy_field(obj, old, "status")

    def validate_create(self, obj: Obj, ctx: Context) -> list[FieldError]:
        return []

    def to_storage(self, obj: Obj) -> Obj:
        """The object in the shape it is stored in (identity unless versions of a kind
        share a store in different shapes). Must accept an already stored shape."""
        return obj

    def from_storage(self, obj: Obj) -> Obj:
        """The stored object in this resource's served shape; must accept a served one."""
        return obj

    def prepare_for_delete(self, obj: Obj) -> bool:
        """Called before a delete of ``obj``; may mutate it. True means the object must
        stay (as terminating) even without metadata finalizers, as a Namespace with
        ``spec.finalizers`` does."""
        return False

    def name_validator(self, name: str) -> list[str]:
        """Problems with ``name`` for this kind; DNS-1123 subdomain by default."""
        from pyocm.kube import names

        return names.is_dns1123_subdomain(name)

    def validate_update(self, obj: Obj, old: Obj, ctx: Context) -> list[FieldError]:
        return []

    def on_read(self, obj: Obj) -> None:
        """Adjust a stored object as it is served (CRDs apply schema defaults here, so
        objects stored before a default existed get it too)."""

    def after_admission(self, obj: Obj) -> None:
        """Called once mutating admission has run: kube decodes a mutated object again,
        so a custom resource's schema defaults apply to what admission added."""
        self.on_read(obj)

    def spec_of(self, obj: Obj) -> Any:
        """The part of the object whose change bumps ``metadata.generation``."""
        return {
            k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")
        }


def copy_field(obj: Obj, old: Obj, name: str) -> None:
    """Make ``obj[name]`` equal to ``old[name]`` (absent if absent)."""
    if name in old:
        obj[name] = copy.deepcopy(old[name])
    else:
        obj.pop(name, None)


def keep_all_but(obj: Obj, old: Obj, name: str) -> None:
    """Reset every top-level field but ``name`` (and managedFields) to the stored value,
    the way a ``/status`` write ignores spec and metadata changes."""
    new_value = obj.get(name, None)
    has_new = name in obj
    managed = meta(obj).get("managedFields")
    rv = meta(obj).get("resourceVersion")
    obj.clear()
    obj.update(copy.deepcopy({k: v for k, v in old.items() if k != name}))
    if has_new:
        obj[name] = new_value
    m = meta(obj)
    if rv is not None:
        m["resourceVersion"] = rv
    if managed is not None:
        m["managedFields"] = managed
