"""The two webhook admission plugins, last in the chain as in kube-apiserver:
``MutatingAdmissionWebhook`` after the in-process mutating plugins, and
``ValidatingAdmissionWebhook`` after validation (``admission/plugin/webhook/mutating``
and ``.../validating`` ``dispatcher.go``).

Mutating webhooks are called one after another; each JSONPatch is applied to the object
in the version the webhook matched, which must still decode as its kind. A webhook with
reinvocationPolicy IfNeeded is called once more when a webhook after it changed the
object (kube's reinvocation context: only webhooks called in the first round, and in
order). pyocm's store runs no mutating step for a DELETE, so mutating webhooks that
match a DELETE are called at the start of its validating step, before the validating
webhooks, with the object being deleted as ``oldObject`` (kube's delete admission).
Validating webhooks are called in parallel; the first error in their order is answered.

No webhook is called for the webhook configuration kinds themselves (kube's
``IsExemptAdmissionConfigurationResource``). While no configuration exists, ``handles``
is one tuple check: the hub's writes pay nothing more.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import logging
from typing import TYPE_CHECKING, Any

import orjson

from pyocm.apiserver.admission.chain import BasePlugin, Operation, Plugin, Request
from pyocm.apiserver.admission.webhooks import review
from pyocm.apiserver.admission.webhooks.client import WebhookClient
from pyocm.apiserver.admission.webhooks.config import Webhook, WebhookSource
from pyocm.apiserver.admission.webhooks.matching import Attributes, Invocation, Matcher
from pyocm.apiserver.registry.builtin import knownfields
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.kube import patches

if TYPE_CHECKING:
    from pyocm.apiserver.state import ServerState

Obj = dict[str, Any]
log = logging.getLogger(__name__)
_EXEMPT = frozenset(
    {
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    }
)


async def webhook_plugins(state: ServerState) -> list[Plugin]:
    """Both plugins, sharing one cache of configurations and one HTTP client."""
    source = WebhookSource()
    await source.start(state.store)
    dispatcher = Dispatcher(state, source)
    return [MutatingWebhooks(dispatcher), ValidatingWebhooks(dispatcher)]


def is_exempt(request: Request) -> bool:
    info = request.resource
    return info.group == "admissionregistration.k8s.io" and info.kind in _EXEMPT


def convert(obj: Obj | None, source: ResourceInfo, target: ResourceInfo) -> Obj | None:
    """``obj`` (served as ``source``) as ``target`` serves it; equivalent resources
    share their storage, so the stored shape is the way between them."""
    if obj is None or source is target:
        return obj
    copied: Obj = orjson.loads(orjson.dumps(obj))
    out = target.strategy.from_storage(source.strategy.to_storage(copied))
    out["apiVersion"] = target.group_version
    out["kind"] = target.kind
    return out


class Dispatcher:
    def __init__(self, state: ServerState, source: WebhookSource) -> None:
        self.source = source
        self.matcher = Matcher(catalog=state.catalog, store=state.store)
        self.client = WebhookClient(store=state.store, catalog=state.catalog)
        self._closer: asyncio.Task[None] | None = None
        self._stopping = state.stopping

    def _ensure_closer(self) -> None:
        """Close the HTTP client's connections when the server stops."""
        if self._closer is None:
            self._closer = asyncio.ensure_future(self._close_on_stop())

    async def _close_on_stop(self) -> None:
        await self._stopping.wait()
        await self.client.close()

    # --- mutating -------------------------------------------------------------

    async def mutate(self, request: Request) -> None:
        """Both rounds of kube's mutating dispatch."""
        attrs = Attributes.of(request)
        invoked: set[str] = set()  # IfNeeded webhooks called since the last change
        reinvoke: set[str] | None = None
        for round_ in (1, 2):
            for hook in self.source.mutating:
                if round_ == 2 and hook.uid not in (reinvoke or ()):
                    continue
                invocation = await self.matcher.invocation(hook, attrs)
                if invocation is None:
                    continue
                if await self._call_mutating(invocation, request, attrs):
                    reinvoke = (reinvoke or set()) | invoked
                    invoked = set()
                if hook.reinvoke_if_needed:
                    invoked.add(hook.uid)
            if reinvoke is None:
                return

    async def _call_mutating(
        self, invocation: Invocation, request: Request, attrs: Attributes
    ) -> bool:
        hook = invocation.webhook
        obj = convert(request.obj, attrs.info, invocation.info)
        response = await self._call(invocation, request, attrs, obj=obj, mutating=True)
        if response is None or not response.patch:
            return False
        if response.patch_type != "JSONPatch":
            err = review.CallError(hook.name, f'unsupported patch type "{response.patch_type}"')
            self._failed(hook, err)
            return False
        try:
            operations = _decode_patch(hook, response.patch)
        except review.CallError as err:
            self._failed(hook, err)
            return False
        if not operations:
            return False
        if obj is None or request.obj is None:
            raise review.internal_error(
                f'admission webhook "{hook.name}" attempted to modify the object, '
                "which is not supported for this operation"
            )
        patched = _apply(operations, obj, invocation.info)
        if patched == obj:
            return False
        back = convert(patched, invocation.info, attrs.info)
        assert back is not None
        request.obj.clear()
        request.obj.update(back)
        request.mark_rewritten()
        return True

    # --- validating -----------------------------------------------------------

    async def validate(self, request: Request) -> None:
        attrs = Attributes.of(request)
        invocations = []
        for hook in self.source.validating:
            invocation = await self.matcher.invocation(hook, attrs)
            if invocation is not None:
                invocations.append(invocation)
        if not invocations:
            return
        results = await asyncio.gather(
            *(self._validate_one(i, request, attrs) for i in invocations),
            return_exceptions=True,
        )
        for result in results:  # the first error in the webhooks' order is answered
            if isinstance(result, BaseException):
                raise result

    async def _validate_one(
        self, invocation: Invocation, request: Request, attrs: Attributes
    ) -> None:
        obj = convert(request.obj, attrs.info, invocation.info)
        await self._call(invocation, request, attrs, obj=obj, mutating=False)

    # --- one call -------------------------------------------------------------

    async def _call(
        self,
        invocation: Invocation,
        request: Request,
        attrs: Attributes,
        *,
        obj: Obj | None,
        mutating: bool,
    ) -> review.Response | None:
        """Call one webhook; its answer when it allowed the request, None when a
        failure was ignored (failurePolicy Ignore). Raises the client's error."""
        hook = invocation.webhook
        ctx = request.ctx
        if ctx.dry_run and hook.side_effects not in ("None", "NoneOnDryRun"):
            raise review.dry_run_unsupported(hook)
        old = convert(request.old, attrs.info, invocation.info)
        sent = review.build(invocation, attrs, ctx, obj=obj, old=old)
        self._ensure_closer()
        try:
            answer = await self.client.call(hook, sent.body)
            response = review.parse_response(hook, sent, answer, mutating=mutating)
        except review.CallError as err:
            self._failed(hook, err)
            return None
        ctx.admission_warnings.extend(response.warnings)
        if not response.allowed:
            error = review.denied(hook, response.result)
            if response.warnings:
                error.headers["Warning"] = ", ".join(_warning(w) for w in response.warnings)
            raise error
        return response

    def _failed(self, hook: Webhook, err: review.CallError) -> None:
        if hook.ignores_failures:
            log.warning("Failed calling webhook, failing open %s: %s", hook.name, err)
            return
        log.warning("Failed calling webhook, failing closed %s: %s", hook.name, err)
        raise review.internal_error(err)


def _warning(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


def _decode_patch(hook: Webhook, patch: str) -> list[Any]:
    """The JSONPatch operations; a patch kube could not decode is a failed call
    (``ErrCallingWebhook``), which the failure policy decides. Bad base64 fails kube
    when it decodes the answer (the patch is a ``[]byte``), the rest in
    ``jsonpatch.DecodePatch``; a JSON null is an empty patch there."""
    try:
        raw = base64.b64decode(patch, validate=True)
    except binascii.Error:
        reason = f"illegal base64 data at input byte {_bad_base64_at(patch)}"
        raise review.CallError(hook.name, f"failed to call webhook: {reason}") from None
    try:
        operations = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        raise _undecodable(hook, str(err)) from None
    if operations is None:
        return []
    if not isinstance(operations, list):
        kind = _GO_JSON_TYPES.get(type(operations), "object")
        raise _undecodable(
            hook, f"json: cannot unmarshal {kind} into Go value of type jsonpatch.Patch"
        )
    return operations


_GO_JSON_TYPES = {str: "string", int: "number", float: "number", bool: "bool", dict: "object"}
_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _bad_base64_at(text: str) -> int:
    """Where Go's decoder gives up: the first byte outside the alphabet (padding
    aside), else the start of the last, incomplete group."""
    for index, char in enumerate(text.rstrip("=")):
        if char not in _BASE64:
            return index
    return len(text) - len(text) % 4


def _undecodable(hook: Webhook, reason: str) -> review.CallError:
    return review.CallError(hook.name, f"received undecodable patch in webhook response: {reason}")


def _apply(operations: list[Any], obj: Obj, info: ResourceInfo) -> Obj:
    """The patched object, decoded again as its kind: a patch that breaks the object
    is kube's 500 (built-in kinds lose fields they lack, as Go decoding drops them)."""
    try:
        patched = patches.json_patch(obj, operations)
    except patches.PatchError as err:
        raise review.internal_error(err) from None
    if not isinstance(patched, dict):
        raise review.internal_error("json: cannot unmarshal the patched document into an object")
    if info.strategy.decodes_into_struct:
        found = knownfields.decode_error(info.group, info.version, info.kind, patched)
    else:
        found = knownfields.metadata_decode_error(patched)
    if found is not None:
        raise review.internal_error(found.go_message())
    if info.strategy.decodes_into_struct:
        knownfields.drop_unknown(info.group, info.version, info.kind, patched)
    patched["apiVersion"] = info.group_version
    patched["kind"] = info.kind
    return patched


class MutatingWebhooks(BasePlugin):
    name = "MutatingAdmissionWebhook"

    def __init__(self, dispatcher: Dispatcher) -> None:
        self._dispatcher = dispatcher
        self._source = dispatcher.source

    def handles(self, request: Request) -> bool:
        return bool(self._source.mutating) and not is_exempt(request)

    async def mutate(self, request: Request) -> None:
        if request.operation is not Operation.DELETE:
            await self._dispatcher.mutate(request)

    async def validate(self, request: Request) -> None:
        if request.operation is Operation.DELETE:  # the store has no mutating step then
            await self._dispatcher.mutate(request)


class ValidatingWebhooks(BasePlugin):
    name = "ValidatingAdmissionWebhook"

    def __init__(self, dispatcher: Dispatcher) -> None:
        self._dispatcher = dispatcher
        self._source = dispatcher.source

    def handles(self, request: Request) -> bool:
        return bool(self._source.validating) and not is_exempt(request)

    async def validate(self, request: Request) -> None:
        await self._dispatcher.validate(request)
