"""ManifestWork admission, built into the hub as upstream runs its work webhook
(``pkg/work/webhook``) beside kube-apiserver.

Rules, as upstream's ``ManifestWorkWebhook`` applies them on CREATE and UPDATE of
``manifestworks`` (never on ``manifestworks/status``, never on DELETE):

1. the work has at least one manifest;
2. the manifests together are at most the manifest limit (``--manifestLimit`` of
   upstream's webhook, 500 KiB by default), each counted as its protobuf
   ``RawExtension`` (the manifest's JSON plus its tag and length bytes);
3. each manifest has a kind, a name, no generateName, and no two manifests name the same
   apiVersion, kind, namespace and name;
4. when ``spec.executor`` is set on create, or changed on update, the requesting user may
   ``execute-as`` the executor: a SubjectAccessReview, here a question to the hub's own
   RBAC authorizer, for verb ``execute-as`` on ``manifestworks.work.open-cluster-management.io``
   in the work's namespace, named ``system:serviceaccount:<namespace>:<name>``. With the
   hub gate ``NilExecutorValidating`` (off by default, as upstream) a work without an
   executor is checked as if its executor were the work agent's own service account,
   ``system:serviceaccount::klusterlet-work-sa``.

The CRD's schema already requires each manifest's apiVersion and kind (it marks them
embedded resources), so the schema answers those first, as kube-apiserver does before
calling the webhook. Upstream's webhook has no rule on ``deleteOption``.

ManifestWorkReplicaSets: with the hub gate ``ManifestWorkReplicaSet`` (off by default,
as upstream's), rules 2 and 3 apply to ``spec.manifestWorkTemplate.workload.manifests``
on create and update, as upstream's ``ManifestWorkReplicaSetWebhook`` does. Upstream's
operator registers no ValidatingWebhookConfiguration for that webhook, so its users
never meet it; pyocm enforces it with the gate because a template those rules refuse
can only yield ManifestWorks that rules 1-3 refuse.

What a client reads: kube-apiserver turns a webhook's denial into a Status with the
webhook's code and reason (400 BadRequest for every rule here, as upstream's webhook
answers ``apierrors.NewBadRequest``) and the message
``admission webhook "<webhook name>" denied the request: <message>``. pyocm answers the
same, with upstream's webhook names, so tools matching upstream's text keep working.
The ManifestWorkReplicaSet rules, which upstream never routes, use the name
``manifestworkreplicasetvalidators.admission.work.open-cluster-management.io``, formed
as upstream's other names are.

Creating works needs RBAC upstream leaves to the hub admin: no default role grants a
user ``create`` on ``manifestworks`` (Kubernetes' ``admin`` and ``edit`` aggregate no
OCM kinds). A Role in the cluster namespace with ``create``/``update``/``patch``/
``delete`` on ``manifestworks`` (and ``execute-as`` with resourceNames
``system:serviceaccount:<ns>:<name>`` for works with an executor) is what a user needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import orjson

from pyocm.apiserver.admission.chain import BasePlugin, Operation, Plugin, Request
from pyocm.apiserver.authorization import authorizer
from pyocm.apiserver.authorization.attributes import Attributes
from pyocm.kube import status

if TYPE_CHECKING:
    from pyocm.apiserver.state import ServerState

Obj = dict[str, Any]
GROUP = "work.open-cluster-management.io"
WORK_WEBHOOK = "manifestworkvalidators.admission.work.open-cluster-management.io"
REPLICASET_WEBHOOK = "manifestworkreplicasetvalidators.admission.work.open-cluster-management.io"
#: Upstream's default ``--manifestLimit``: 500 KiB.
DEFAULT_MANIFEST_LIMIT = 500 * 1024
EXECUTE_AS = "execute-as"
#: The work agent's own service account, what a nil executor stands for.
DEFAULT_EXECUTOR = ("", "klusterlet-work-sa")
NIL_EXECUTOR_GATE = "NilExecutorValidating"
REPLICASET_GATE = "ManifestWorkReplicaSet"


def work_plugins(state: ServerState) -> list[Plugin]:
    """The work webhook's rules, with the server's manifest limit and hub gates."""
    gates = state.config.feature_gates
    limit = state.config.manifest_limit
    plugins: list[Plugin] = [
        ManifestWorkValidating(state, limit=limit, nil_executor=gates.get(NIL_EXECUTOR_GATE, False))
    ]
    if gates.get(REPLICASET_GATE, False):
        plugins.append(ManifestWorkReplicaSetValidating(limit=limit))
    return plugins


def denied(webhook: str, message: str) -> status.ApiError:
    """A 400 as kube-apiserver relays a webhook's ``apierrors.NewBadRequest(message)``."""
    return status.bad_request(f'admission webhook "{webhook}" denied the request: {message}')


# --- the manifests -------------------------------------------------------------------


def manifests_problem(manifests: list[Any], *, limit: int) -> str | None:
    """The first objection of upstream's ``ValidateManifests``, in its order, or None.

    The total size comes first; then, manifest by manifest, its own checks and whether
    an earlier manifest named the same object.
    """
    if not manifests:
        return "Workload manifests should not be empty"
    total = sum(manifest_size(m) for m in manifests)
    if total > limit:
        return f"the size of manifests is {total} bytes which exceeds the {limit} limit"
    seen: set[tuple[str, str, str, str]] = set()
    for manifest in manifests:
        problem = manifest_problem(manifest)
        if problem:
            return problem
        identity = _identity(manifest)
        if identity in seen:
            version, kind, namespace, name = identity
            return (
                f"duplicate manifest for resource {namespace}/{name} "
                f"with resource type {version}.{kind}"
            )
        seen.add(identity)
    return None


def manifest_problem(manifest: Any) -> str | None:
    """What upstream's decode into ``unstructured.Unstructured`` and its name checks refuse."""
    if not isinstance(manifest, dict):
        return f"json: cannot unmarshal {_go_type(manifest)} into Go value of type map[string]interface {{}}"
    if not _string(manifest.get("kind")):
        return f"Object 'Kind' is missing in '{go_json(manifest)}'"
    meta = _mapping(manifest.get("metadata"))
    if not _string(meta.get("name")):
        return "name must be set in manifest"
    if _string(meta.get("generateName")):
        return "generateName must not be set in manifest"
    return None


def manifest_size(manifest: Any) -> int:
    """``Manifest.Size()``: the protobuf size of a RawExtension holding the manifest's JSON.

    The JSON is what the webhook receives for the manifest: Go's ``encoding/json`` of the
    stored object (keys sorted, no spaces, ``<``, ``>`` and ``&`` escaped).
    """
    length = len(go_json(manifest).encode())
    return 1 + length + _varint_size(length)


def _varint_size(value: int) -> int:
    size = 1
    while value >= 0x80:
        value >>= 7
        size += 1
    return size


def _identity(manifest: Obj) -> tuple[str, str, str, str]:
    meta = _mapping(manifest.get("metadata"))
    return (
        _string(manifest.get("apiVersion")),
        _string(manifest.get("kind")),
        _string(meta.get("namespace")),
        _string(meta.get("name")),
    )


def _mapping(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _string(value: Any) -> str:
    """Unstructured's ``NestedString``: the value if a string, else empty."""
    return value if isinstance(value, str) else ""


def _go_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "null"


# --- Go's encoding/json, as far as sizes and messages need it ------------------------

_HTML_ESCAPES = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def go_json(value: Any) -> str:
    """``value`` as Go's ``json.Marshal`` writes a decoded object: keys sorted, compact,
    HTML characters escaped, floats in Go's shortest form (``1`` for 1.0, ``1e-7``)."""
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda item: str(item[0]))
        return "{" + ",".join(f"{go_json(str(k))}:{go_json(v)}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, str):
        return orjson.dumps(value).decode().translate(_HTML_ESCAPES)
    return orjson.dumps(value).decode()  # bool, int, None


def _go_float(value: float) -> str:
    """``strconv.FormatFloat`` with ``'f'``, or ``'e'`` outside [1e-6, 1e21), shortest digits."""
    size = abs(value)
    if size != 0 and (size < 1e-6 or size >= 1e21):
        # Python's repr has Go's mantissa and two-digit exponent; json then drops the
        # leading zero of a one-digit negative exponent (e-07 → e-7).
        text = repr(value)
        return text[:-2] + text[-1] if text[-4:-1] == "e-0" else text
    return format(Decimal(repr(value)).normalize(), "f")


# --- the plugins ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Executor:
    namespace: str
    name: str

    @property
    def user(self) -> str:
        return f"system:serviceaccount:{self.namespace}:{self.name}"


class ManifestWorkValidating(BasePlugin):
    """Upstream's ``ManifestWorkWebhook``: manifests, their size, and the executor."""

    name = "ManifestWorkValidating"

    def __init__(self, state: ServerState, *, limit: int, nil_executor: bool) -> None:
        self._state = state
        self._limit = limit
        self._nil_executor = nil_executor

    def handles(self, request: Request) -> bool:
        return (
            request.resource.group == GROUP
            and request.resource.plural == "manifestworks"
            and request.operation in (Operation.CREATE, Operation.UPDATE)
            and not request.subresource
        )

    async def validate(self, request: Request) -> None:
        assert request.obj is not None
        manifests = _manifests(request.obj, "spec", "workload")
        if not manifests:
            raise denied(WORK_WEBHOOK, "manifests should not be empty")
        problem = manifests_problem(manifests, limit=self._limit)
        if problem:
            raise denied(WORK_WEBHOOK, problem)
        executor = _spec(request.obj).get("executor")
        if request.old is not None and _pruned(executor) == _pruned(
            _spec(request.old).get("executor")
        ):
            return  # upstream checks only a new or changed executor
        self._may_execute_as(request, executor)

    def _may_execute_as(self, request: Request, executor: Any) -> None:
        if executor is None:
            if not self._nil_executor:
                return
            subject = _Executor(*DEFAULT_EXECUTOR)
        else:
            account = _mapping(_mapping(executor).get("subject")).get("serviceAccount")
            if not isinstance(account, dict):
                # Upstream refuses a ServiceAccount subject without its account (and
                # would fail on any other subject lacking it): one answer for both.
                raise denied(WORK_WEBHOOK, "executor service account can not be nil")
            subject = _Executor(_string(account.get("namespace")), _string(account.get("name")))
        attrs = Attributes(
            user=request.ctx.user,
            verb=EXECUTE_AS,
            api_group=GROUP,
            resource="manifestworks",
            namespace=request.namespace,
            name=subject.user,
        )
        if not authorizer.authorize(self._state.rbac, attrs).allowed:
            raise denied(
                WORK_WEBHOOK,
                f"user {request.ctx.user.name} cannot manipulate the Manifestwork with executor "
                f"{subject.namespace}/{subject.name} in namespace {request.namespace}",
            )


class ManifestWorkReplicaSetValidating(BasePlugin):
    """Upstream's ``ManifestWorkReplicaSetWebhook``: the template's manifests."""

    name = "ManifestWorkReplicaSetValidating"

    def __init__(self, *, limit: int) -> None:
        self._limit = limit

    def handles(self, request: Request) -> bool:
        return (
            request.resource.group == GROUP
            and request.resource.plural == "manifestworkreplicasets"
            and request.operation in (Operation.CREATE, Operation.UPDATE)
            and not request.subresource
        )

    async def validate(self, request: Request) -> None:
        assert request.obj is not None
        manifests = _manifests(request.obj, "spec", "manifestWorkTemplate", "workload")
        problem = manifests_problem(manifests, limit=self._limit)
        if problem:
            raise denied(REPLICASET_WEBHOOK, problem)


def _spec(obj: Obj) -> Obj:
    return _mapping(obj.get("spec"))


def _manifests(obj: Obj, *path: str) -> list[Any]:
    node: Any = obj
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    found = node.get("manifests") if isinstance(node, dict) else None
    return found if isinstance(found, list) else []


def _pruned(value: Any) -> Any:
    """``value`` without null fields: Go's typed structs read absent and null alike."""
    if isinstance(value, dict):
        return {k: _pruned(v) for k, v in value.items() if v is not None}
    return value
