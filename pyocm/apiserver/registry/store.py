"""The generic REST store: the Kubernetes object semantics shared by every kind.

Per request it runs, in this order (as kube-apiserver's generic registry does):
strategy ``prepare_*`` → mutating admission → ObjectMeta and strategy validation →
validating admission → one compare-and-swap write. It owns generateName, uid,
timestamps, generation, resourceVersion preconditions, the status-subresource split
(through the strategy), finalizers and graceful deletion, and dry-run. Storage errors
are translated to API errors in :mod:`pyocm.apiserver.registry.errors` only.

The strategy's prepare step runs before admission (it also stands for kube's decoding
defaults, which webhooks see); kube's ``BeforeCreate``/``BeforeUpdate`` run after it.
So when an admission webhook changed the object, the server-owned fields, the
namespace check and the prepare step are applied once more after mutation; the hub's
own writes, which no webhook touches, skip that.
"""

from __future__ import annotations

import bisect
import builtins
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson

from pyocm.apiserver.admission.chain import Chain, Operation, Request
from pyocm.apiserver.registry import codec, errors
from pyocm.apiserver.registry.builtin import knownfields
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.strategy import Context, meta
from pyocm.apiserver.storage import errors as storage_errors
from pyocm.apiserver.storage.interface import Backend, KeyValue
from pyocm.kube import fieldsets, names, objectmeta, serversideapply, smp, status, timefmt
from pyocm.kube.selectors import FieldSelector, LabelSelector

Obj = dict[str, Any]
Mutator = Callable[[Obj], Awaitable[Obj] | Obj]

#: Set by the server on create, never taken from the client.
_SERVER_SET = (
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
)
_GENERATE_NAME_TRIES = 8
_UPDATE_TRIES = 16
_RV_ON_CREATE = "resourceVersion should not be set on objects to be created"


def _copy(obj: Obj) -> Obj:
    """A deep copy of a JSON object; an orjson round trip is several times faster than
    ``copy.deepcopy`` for the plain dicts and lists objects are made of."""
    copied: Obj = orjson.loads(orjson.dumps(obj))
    return copied


@dataclass(frozen=True)
class ListPage:
    revision: int
    items: list[Obj]
    #: When more items follow: the key (relative to the resource's prefix) of the last
    #: one returned, and how many stored objects come after it (before any selector).
    last_key: str = ""
    left: int = 0


@dataclass(frozen=True)
class DeleteOptions:
    uid: str = ""
    resource_version: str = ""
    propagation_policy: str = ""
    orphan_dependents: bool | None = None
    dry_run: bool = False


@dataclass(frozen=True)
class DeleteResult:
    obj: Obj
    deleted: bool


class Store:
    def __init__(self, *, backend: Backend, admission: Chain) -> None:
        self.backend = backend
        self.admission = admission

    # --- reads -------------------------------------------------------------------

    async def get(self, info: ResourceInfo, *, namespace: str, name: str) -> Obj:
        kv = await self.backend.get(info.key(namespace=namespace, name=name))
        if kv is None:
            raise status.not_found(resource=info.plural, group=info.group, name=name)
        return self.present(info, codec.decode(kv))

    async def get_kv(self, info: ResourceInfo, *, namespace: str, name: str) -> KeyValue | None:
        return await self.backend.get(info.key(namespace=namespace, name=name))

    async def list(
        self,
        info: ResourceInfo,
        *,
        namespace: str,
        labels: LabelSelector | None = None,
        fields: FieldSelector | None = None,
    ) -> tuple[int, list[Obj]]:
        """Every matching object, sorted by key, and the current revision."""
        page = await self.list_page(
            info,
            namespace=namespace,
            labels=labels,
            fields=fields,
            name=pinned_name(info, namespace, fields),
        )
        return page.revision, page.items

    async def list_page(
        self,
        info: ResourceInfo,
        *,
        namespace: str,
        labels: LabelSelector | None = None,
        fields: FieldSelector | None = None,
        revision: int = 0,
        after: str = "",
        limit: int = 0,
        name: str = "",
    ) -> ListPage:
        """Up to ``limit`` (0: all) matching objects whose key comes after ``after``
        (relative to the resource's storage prefix), as of ``revision`` (0: now).

        Only the objects returned are decoded past the selector, so paging through a
        large list costs each page its own items, not the whole list again."""
        # A selector pinning metadata.name reads one key, not the whole resource.
        exact = info.key(namespace=namespace, name=name) if name else ""
        prefix = exact or info.key_prefix(namespace)
        try:
            revision, kvs = await self.backend.list(prefix, revision=revision)
        except storage_errors.StorageError as err:
            raise errors.translate(err, info, "") from None
        if exact:
            kvs = [kv for kv in kvs if kv.key == exact]
        base = info.key_prefix()
        start = bisect.bisect_right(kvs, base + after, key=lambda kv: kv.key) if after else 0
        items: list[Obj] = []
        last = start - 1  # index of the last item returned
        fragments = codec.label_fragments(labels) if labels is not None else ()
        for index in range(start, len(kvs)):
            if fragments and not codec.may_match(kvs[index].value, fragments):
                continue
            obj = codec.decode(kvs[index])
            if not self.matches(info, obj, labels=labels, fields=fields):
                continue
            if limit and len(items) == limit:
                return ListPage(
                    revision, items, last_key=kvs[last].key[len(base) :], left=len(kvs) - last - 1
                )
            items.append(self.present(info, obj))
            last = index
        return ListPage(revision, items)

    def matches(
        self,
        info: ResourceInfo,
        obj: Obj,
        *,
        labels: LabelSelector | None,
        fields: FieldSelector | None,
    ) -> bool:
        if (
            labels is not None
            and not labels.empty
            and not labels.matches(meta(obj).get("labels") or {})
        ):
            return False
        if fields is not None and not fields.empty:
            # Field getters read the stored shape, so every served version of a kind
            # selects the same objects.
            stored = info.strategy.to_storage(obj)
            getters = info.strategy.fields
            return fields.matches(lambda f: getters[f](stored) if f in getters else None)
        return True

    @staticmethod
    def _drop_unknown(info: ResourceInfo, obj: Obj, ctx: Context) -> None:
        """Built-in kinds keep only their struct's fields, as decoding into Go would;
        what went is reported for ``fieldValidation`` (custom resources prune by schema)."""
        if info.strategy.decodes_into_struct:
            removed = knownfields.drop_unknown(info.group, info.version, info.kind, obj)
            ctx.warnings.extend(f'unknown field "{path}"' for path in removed)

    @staticmethod
    def _check_decodes(info: ResourceInfo, obj: Obj, ctx: Context, *, patched: bool) -> None:
        """Refuse a body that would not decode into the kind's Go struct (built-ins) or
        whose ObjectMeta would not (every kind), in kube's words: 400 on create and
        update, 422 ``patch`` Invalid once a patch has been applied, 400 for an apply."""
        if info.strategy.decodes_into_struct:
            found = knownfields.decode_error(info.group, info.version, info.kind, obj)
        else:
            found = knownfields.metadata_decode_error(obj)
        if found is None:
            return
        if ctx.applied:
            gvk = f"{info.group_version}, Kind={info.kind}"
            raise status.bad_request(
                f"failed to create typed patch object ({gvk}): {found.apply_message()}"
            )
        if patched:
            cause = status.invalid("patch", orjson.dumps(obj).decode(), found.go_message())
            raise status.invalid_object(kind="", group="", name="", errors=[cause])
        raise status.bad_request(
            f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
            + found.go_message()
        )

    @staticmethod
    def _stored(info: ResourceInfo, obj: Obj) -> bytes:
        return codec.encode(info.strategy.to_storage(obj))

    def present(self, info: ResourceInfo, obj: Obj) -> Obj:
        """The object as served at ``info``'s version: converted from the stored shape
        by the strategy (events.k8s.io Events are stored as core Events), then stamped
        with the served apiVersion (other versions of a CRD differ only there)."""
        obj = info.strategy.from_storage(obj)
        obj["apiVersion"] = info.group_version
        obj["kind"] = info.kind
        info.strategy.on_read(obj)
        return obj

    # --- create ------------------------------------------------------------------

    async def create(self, info: ResourceInfo, obj: Obj, ctx: Context) -> Obj:
        self._check_decodes(info, obj, ctx, patched=False)
        m = meta(obj)
        self._check_namespace(info, m, ctx.namespace)
        if m.get("resourceVersion"):
            raise status.bad_request(_RV_ON_CREATE)
        generate = not m.get("name") and bool(m.get("generateName"))
        for _ in range(_GENERATE_NAME_TRIES if generate else 1):
            candidate = _copy(obj)
            if generate:
                meta(candidate)["name"] = names.generate_name(str(m["generateName"]))
            try:
                return await self._create_once(info, candidate, ctx)
            except status.ApiError as err:
                if not (generate and err.reason == "AlreadyExists"):
                    raise
        raise status.ApiError(
            code=504,
            reason="AlreadyExists",
            message=f"{status.qualified(info.plural, info.group)} could not find a free name for generateName {m['generateName']!r}",
        )

    async def _create_once(self, info: ResourceInfo, obj: Obj, ctx: Context) -> Obj:
        m = meta(obj)
        for field in _SERVER_SET:
            m.pop(field, None)
        if not ctx.applied:  # an apply brings the managedFields it computed
            m.pop("managedFields", None)
        system = {"uid": str(uuid.uuid4()), "creationTimestamp": timefmt.now_rfc3339()}
        m.update(system)
        self._set_initial_generation(info, m)
        self._drop_unknown(info, obj, ctx)
        info.strategy.prepare_for_create(obj, ctx)
        name = str(m.get("name") or "")
        request = Request(Operation.CREATE, info, ctx, ctx.namespace, name, obj, None)
        with request.finishing():  # admission's reservations end with the write
            await self.admission.mutate(request)
            if request.rewritten:
                name = self._before_create(info, obj, ctx, system=system)
            info.strategy.after_admission(obj)
            self._validate(info, obj, ctx, errors_=self._create_errors(info, obj, ctx))
            await self.admission.validate(request)
            if ctx.dry_run:
                return self.present(info, obj)
            try:
                kv = await self.backend.create(
                    info.key(namespace=ctx.namespace, name=name), self._stored(info, obj)
                )
            except storage_errors.StorageError as err:
                raise errors.translate(err, info, name) from None
        return self.present(info, codec.decode_at(kv.value, kv.mod_revision))

    @staticmethod
    def _set_initial_generation(info: ResourceInfo, m: dict[str, Any]) -> None:
        if info.strategy.tracks_generation:
            m["generation"] = 1
        else:
            m.pop("generation", None)

    def _before_create(
        self, info: ResourceInfo, obj: Obj, ctx: Context, *, system: dict[str, str]
    ) -> str:
        """What kube-apiserver does once mutating admission has run on a create
        (``FillObjectMetaSystemFields``, ``rest.BeforeCreate``, the storage's
        resourceVersion check): a webhook cannot choose the uid or creationTimestamp,
        move the object to another namespace, set its status where the strategy drops
        it, or give it a resourceVersion. Its name is the object's, as kube takes the
        storage key from the object; the name that is returned."""
        m = meta(obj)
        m.update(system)
        m.pop("selfLink", None)
        rv = str(m.get("resourceVersion") or "")
        if rv and not ctx.dry_run:  # kube's dry run skips the storage, and its check
            if rv.isdigit() and int(rv) != 0:
                # etcd3's ErrResourceVersionSetOnCreate, a plain error: 500, no reason
                raise status.ApiError(code=500, reason="", message=_RV_ON_CREATE)
            m.pop("resourceVersion")  # what does not parse is cleared for storage
        self._check_namespace(info, m, ctx.namespace)
        self._set_initial_generation(info, m)
        info.strategy.prepare_for_create(obj, ctx)
        return str(m.get("name") or "")

    def _create_errors(
        self, info: ResourceInfo, obj: Obj, ctx: Context
    ) -> builtins.list[status.FieldError]:
        errs = objectmeta.validate_object_meta(
            meta(obj),
            namespaced=info.namespaced,
            name_validator=info.strategy.name_validator,
            builtin=info.strategy.builtin,
        )
        return errs + info.strategy.validate_create(obj, ctx)

    def _validate(
        self,
        info: ResourceInfo,
        obj: Obj,
        ctx: Context,
        *,
        errors_: builtins.list[status.FieldError],
    ) -> None:
        if ctx.field_validation == "Strict" and ctx.warnings:
            raise status.bad_request("strict decoding error: " + ", ".join(ctx.warnings))
        if errors_:
            name = str(meta(obj).get("name") or meta(obj).get("generateName") or "")
            raise status.invalid_object(kind=info.kind, group=info.group, name=name, errors=errors_)

    def _check_namespace(self, info: ResourceInfo, m: dict[str, Any], namespace: str) -> None:
        body_ns = m.get("namespace") or ""
        if not info.namespaced:
            m.pop("namespace", None)
            return
        if body_ns and body_ns != namespace:
            raise status.bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
            )
        m["namespace"] = namespace

    # --- update ------------------------------------------------------------------

    async def update(
        self, info: ResourceInfo, *, name: str, obj: Obj, ctx: Context
    ) -> tuple[Obj, bool]:
        """PUT semantics. Returns the stored object and whether it was created."""
        self._check_decodes(info, obj, ctx, patched=False)
        m = meta(obj)
        self._check_namespace(info, m, ctx.namespace)
        if m.get("name") and m["name"] != name:
            raise status.bad_request(
                f"the name of the object ({m['name']}) does not match the name on the URL ({name})"
            )
        m["name"] = name
        wanted_rv = str(m.get("resourceVersion") or "")
        for _ in range(_UPDATE_TRIES):
            kv = await self.get_kv(info, namespace=ctx.namespace, name=name)
            if kv is None:
                if info.strategy.allow_create_on_update and not ctx.subresource:
                    m.pop("resourceVersion", None)
                    try:
                        return await self._create_once(info, _copy(obj), ctx), True
                    except status.ApiError as err:
                        if err.reason == "AlreadyExists":
                            continue
                        raise
                raise status.not_found(resource=info.plural, group=info.group, name=name)
            if wanted_rv and wanted_rv != str(kv.mod_revision):
                raise status.conflict(resource=info.plural, group=info.group, name=name)
            if not wanted_rv and not info.strategy.allow_unconditional_update:
                raise status.invalid_object(
                    kind=info.kind,
                    group=info.group,
                    name=name,
                    errors=[
                        status.invalid(
                            "metadata.resourceVersion", 0, "must be specified for an update"
                        )
                    ],
                )
            try:
                return await self._update_once(info, kv, _copy(obj), ctx), False
            except storage_errors.Conflict:
                if wanted_rv:
                    raise status.conflict(
                        resource=info.plural, group=info.group, name=name
                    ) from None
        raise status.conflict(
            resource=info.plural, group=info.group, name=name, detail="too many concurrent writers"
        )

    async def guaranteed_update(
        self, info: ResourceInfo, *, name: str, ctx: Context, mutate: Mutator
    ) -> Obj:
        """Read, apply ``mutate`` to a copy, write; retried on concurrent modification.

        ``mutate`` (a patch) may set ``metadata.resourceVersion`` or ``metadata.uid``; a
        value that differs from the stored one is a real conflict (409), as the OCM
        patcher relies on."""
        for _ in range(_UPDATE_TRIES):
            kv = await self.get_kv(info, namespace=ctx.namespace, name=name)
            if kv is None:
                raise status.not_found(resource=info.plural, group=info.group, name=name)
            current = self.present(info, codec.decode(kv))
            result = mutate(_copy(current))
            new = await result if not isinstance(result, dict) else result
            self._check_decodes(info, new, ctx, patched=True)
            m = meta(new)
            pinned_rv = str(m.get("resourceVersion") or "")
            if pinned_rv and pinned_rv != str(kv.mod_revision):
                raise status.conflict(resource=info.plural, group=info.group, name=name)
            if m.get("uid") and m["uid"] != meta(current).get("uid"):
                raise status.conflict(
                    resource=info.plural,
                    group=info.group,
                    name=name,
                    detail=f"Precondition failed: UID in precondition: {m['uid']}, UID in object meta: {meta(current).get('uid')}",
                )
            if m.get("name", name) != name:
                raise status.bad_request(
                    f"the name of the object ({m.get('name')}) does not match the name on the URL ({name})"
                )
            try:
                return await self._update_once(info, kv, new, ctx)
            except storage_errors.Conflict:
                continue
        raise status.conflict(
            resource=info.plural, group=info.group, name=name, detail="too many concurrent writers"
        )

    async def _update_once(self, info: ResourceInfo, kv: KeyValue, obj: Obj, ctx: Context) -> Obj:
        old = self.present(info, codec.decode(kv))
        name = str(meta(old)["name"])
        self._carry_server_fields(obj, old, ctx)
        self._drop_unknown(info, obj, ctx)
        info.strategy.prepare_for_update(obj, old, ctx)
        self._bump_generation(info, obj, old)
        request = Request(Operation.UPDATE, info, ctx, ctx.namespace, name, obj, old)
        with request.finishing():  # admission's reservations end with the write
            await self.admission.mutate(request)
            if request.rewritten:
                self._before_update(info, obj, old, ctx)
            info.strategy.after_admission(obj)
            if not ctx.applied:
                self._track_fields(info, obj, old, ctx)
            errs = objectmeta.validate_object_meta_update(
                meta(obj), meta(old), builtin=info.strategy.builtin
            )
            errs += objectmeta.validate_object_meta(
                meta(obj),
                namespaced=info.namespaced,
                name_validator=info.strategy.name_validator,
                builtin=info.strategy.builtin,
            )
            errs += self._finalizer_errors(obj, old)
            self._validate(
                info, obj, ctx, errors_=errs + info.strategy.validate_update(obj, old, ctx)
            )
            await self.admission.validate(request)
            if codec.encode(obj) == codec.encode(old):
                return old
            if ctx.dry_run:
                return self.present(info, obj)
            key = info.key(namespace=ctx.namespace, name=name)
            m = meta(obj)
            try:
                if (
                    m.get("deletionTimestamp")
                    and not m.get("finalizers")
                    and not info.strategy.prepare_for_delete(_copy(obj))
                ):
                    deleted = await self.backend.delete(key, expected_revision=kv.mod_revision)
                    return self.present(
                        info, codec.decode_at(codec.encode(obj), deleted.mod_revision)
                    )
                new_kv = await self.backend.update(
                    key, self._stored(info, obj), expected_revision=kv.mod_revision
                )
            except storage_errors.Conflict:
                raise
            except storage_errors.StorageError as err:
                raise errors.translate(err, info, name) from None
        return self.present(info, codec.decode_at(new_kv.value, new_kv.mod_revision))

    def _carry_server_fields(self, obj: Obj, old: Obj, ctx: Context) -> None:
        """Fields clients cannot set through an update keep their stored values."""
        m, old_m = meta(obj), meta(old)
        for field in (
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ):
            if field in old_m:
                if field == "uid" and m.get("uid") and m["uid"] != old_m["uid"]:
                    raise status.conflict(
                        resource="",
                        group="",
                        name=str(old_m.get("name")),
                        detail=f"Precondition failed: UID in precondition: {m['uid']}, UID in object meta: {old_m['uid']}",
                    )
                m[field] = old_m[field]
            else:
                m.pop(field, None)
        m.pop("selfLink", None)
        if ctx.applied:
            return  # an apply brings the managedFields it computed
        m.pop("managedFields", None)
        if "managedFields" in old_m:
            m["managedFields"] = old_m["managedFields"]

    def _before_update(self, info: ResourceInfo, obj: Obj, old: Obj, ctx: Context) -> None:
        """``rest.BeforeUpdate`` once a webhook changed the object: the request's
        namespace, the stored generation (bumped again if the spec now differs), the
        strategy's split (the main resource keeps the stored status, ``/status`` the
        stored spec), and the stored uid (when emptied), creationTimestamp and
        deletion fields. Any other change to them is refused by validation."""
        m, old_m = meta(obj), meta(old)
        self._check_namespace(info, m, ctx.namespace)
        if "generation" in old_m:
            m["generation"] = old_m["generation"]
        else:
            m.pop("generation", None)
        info.strategy.prepare_for_update(obj, old, ctx)
        self._bump_generation(info, obj, old)
        if not m.get("uid") and "uid" in old_m:
            m["uid"] = old_m["uid"]
        for field in ("creationTimestamp", "deletionTimestamp"):
            if old_m.get(field):
                m[field] = old_m[field]
        if old_m.get("deletionGracePeriodSeconds") is not None and (
            m.get("deletionGracePeriodSeconds") is None
        ):
            m["deletionGracePeriodSeconds"] = old_m["deletionGracePeriodSeconds"]
        m.pop("selfLink", None)

    @staticmethod
    def _track_fields(info: ResourceInfo, obj: Obj, old: Obj, ctx: Context) -> None:
        """An ordinary write: the fields it changed move to its manager (only on
        objects someone has applied; see serversideapply.track_update)."""
        if not meta(old).get("managedFields"):
            return
        serversideapply.track_update(
            old,
            obj,
            manager=ctx.field_manager or "unknown",
            structure=structure_of(info),
            api_version=info.group_version,
            now=timefmt.now_rfc3339(),
            subresource=ctx.subresource,
        )

    def _bump_generation(self, info: ResourceInfo, obj: Obj, old: Obj) -> None:
        if not info.strategy.tracks_generation:
            return
        if info.strategy.spec_of(obj) != info.strategy.spec_of(old):
            meta(obj)["generation"] = int(meta(old).get("generation") or 0) + 1

    def _finalizer_errors(self, obj: Obj, old: Obj) -> builtins.list[status.FieldError]:
        if not meta(old).get("deletionTimestamp"):
            return []
        added = [
            f
            for f in meta(obj).get("finalizers") or []
            if f not in (meta(old).get("finalizers") or [])
        ]
        if not added:
            return []
        rendered = "[]string{" + ", ".join(f'"{f}"' for f in added) + "}"
        return [
            status.forbidden(
                "metadata.finalizers",
                f"no new finalizers can be added if the object is being deleted, found new finalizers {rendered}",
            )
        ]

    # --- delete ------------------------------------------------------------------

    async def delete(
        self, info: ResourceInfo, *, name: str, ctx: Context, options: DeleteOptions
    ) -> DeleteResult:
        for _ in range(_UPDATE_TRIES):
            kv = await self.get_kv(info, namespace=ctx.namespace, name=name)
            if kv is None:
                raise status.not_found(resource=info.plural, group=info.group, name=name)
            obj = self.present(info, codec.decode(kv))
            self._check_preconditions(info, obj, options)
            request = Request(Operation.DELETE, info, ctx, ctx.namespace, name, None, obj)
            await self.admission.validate(request)
            try:
                return await self._delete_once(info, kv, obj, ctx, options)
            except storage_errors.Conflict:
                continue
        raise status.conflict(
            resource=info.plural, group=info.group, name=name, detail="too many concurrent writers"
        )

    def _check_preconditions(self, info: ResourceInfo, obj: Obj, options: DeleteOptions) -> None:
        m = meta(obj)
        if options.uid and options.uid != m.get("uid"):
            raise status.conflict(
                resource=info.plural,
                group=info.group,
                name=str(m.get("name")),
                detail=f"Precondition failed: UID in precondition: {options.uid}, UID in object meta: {m.get('uid')}",
            )
        if options.resource_version and options.resource_version != m.get("resourceVersion"):
            raise status.conflict(
                resource=info.plural,
                group=info.group,
                name=str(m.get("name")),
                detail=f"Precondition failed: ResourceVersion in precondition: {options.resource_version}, "
                f"ResourceVersion in object meta: {m.get('resourceVersion')}",
            )

    async def _delete_once(
        self, info: ResourceInfo, kv: KeyValue, obj: Obj, ctx: Context, options: DeleteOptions
    ) -> DeleteResult:
        new = _copy(obj)
        m = meta(new)
        # The strategy goes first: it may add a finalizer of its own (a CRD's cleanup).
        keep = info.strategy.prepare_for_delete(new)
        finalizers = list(m.get("finalizers") or [])
        policy = options.propagation_policy or ("Orphan" if options.orphan_dependents else "")
        extra = {"Orphan": "orphan", "Foreground": "foregroundDeletion"}.get(policy)
        if extra and extra not in finalizers and not m.get("deletionTimestamp"):
            finalizers.append(extra)
        key = info.key(namespace=ctx.namespace, name=str(m["name"]))
        if not finalizers and not keep:
            if ctx.dry_run:
                return DeleteResult(obj, True)
            try:
                await self.backend.delete(key, expected_revision=kv.mod_revision)
            except storage_errors.Conflict:
                raise
            except storage_errors.StorageError as err:
                raise errors.translate(err, info, str(m["name"])) from None
            return DeleteResult(obj, True)
        if finalizers:
            m["finalizers"] = finalizers
        if not m.get("deletionTimestamp"):
            m["deletionTimestamp"] = timefmt.now_rfc3339()
            m["deletionGracePeriodSeconds"] = 0
            if m.get("generation"):
                m["generation"] = int(m["generation"]) + 1
        if codec.encode(new) == codec.encode(obj) or ctx.dry_run:
            return DeleteResult(new, False)
        try:
            new_kv = await self.backend.update(
                key, self._stored(info, new), expected_revision=kv.mod_revision
            )
        except storage_errors.Conflict:
            raise
        except storage_errors.StorageError as err:
            raise errors.translate(err, info, str(m["name"])) from None
        return DeleteResult(
            self.present(info, codec.decode_at(new_kv.value, new_kv.mod_revision)), False
        )


def structure_of(info: ResourceInfo) -> fieldsets.Structure:
    """How server-side apply sees a kind's lists and maps."""
    return fieldsets.structure_for(
        smp.schema_for(info.group_version, info.kind), info.openapi_schema
    )


def pinned_name(info: ResourceInfo, namespace: str, fields: FieldSelector | None) -> str:
    """The one object name a field selector allows, when that names a single key (a
    namespaced resource needs its namespace too); else ""."""
    if fields is None or (info.namespaced and not namespace):
        return ""
    return fields.pinned_value("metadata.name") or ""
