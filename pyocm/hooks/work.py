"""OCM's work admission rules (upstream's ``pkg/work/webhook``).

Rules, as upstream's ``ManifestWorkWebhook`` applies them on CREATE and UPDATE of
``manifestworks`` (never on ``manifestworks/status``, never on DELETE):

1. the work has at least one manifest;
2. the manifests together are at most the manifest limit (``--manifestLimit`` of
   upstream's webhook, 500 KiB by default), each counted as its protobuf
   ``RawExtension`` (the manifest's JSON plus its tag and length bytes);
3. each manifest has a kind, a name, no generateName, and no two manifests name the same
   apiVersion, kind, namespace and name;
4. when ``spec.executor`` is set on create, or changed on update, the requesting user may
   ``execute-as`` the executor: a SubjectAccessReview for verb ``execute-as`` on
   ``manifestworks.work.open-cluster-management.io`` in the work's namespace, named
   ``system:serviceaccount:<namespace>:<name>``. With the hub gate
   ``NilExecutorValidating`` (off by default, as upstream) a work without an executor is
   checked as if its executor were the work agent's own service account,
   ``system:serviceaccount::klusterlet-work-sa``.

The CRD's schema already requires each manifest's apiVersion and kind (it marks them
embedded resources), so the schema answers those first, as kube-apiserver does before
calling the webhook. Upstream's webhook has no rule on ``deleteOption``.

ManifestWorkReplicaSets: with the hub gate ``ManifestWorkReplicaSet`` (off by default,
as upstream's), rules 2 and 3 apply to ``spec.manifestWorkTemplate.workload.manifests``
on create and update, as upstream's ``ManifestWorkReplicaSetWebhook`` does. Upstream's
operator registers no ValidatingWebhookConfiguration for that webhook, so its users
never meet it; pyocm enforces it with the gate because a template those rules refuse
can only yield ManifestWorks that rules 1-3 refuse. Its name,
``manifestworkreplicasetvalidators.admission.work.open-cluster-management.io``, is formed
as upstream's other names are.

Every denial here is a 400 BadRequest, as upstream's webhook answers
``apierrors.NewBadRequest``.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import orjson

from pyocm.hooks.request import Config, Denial, Obj, Request, Seams
from pyocm.kube import status

GROUP = "work.open-cluster-management.io"
WORK_WEBHOOK = "manifestworkvalidators.admission.work.open-cluster-management.io"
REPLICASET_WEBHOOK = "manifestworkreplicasetvalidators.admission.work.open-cluster-management.io"
EXECUTE_AS = "execute-as"
#: The work agent's own service account, what a nil executor stands for.
DEFAULT_EXECUTOR = ("", "klusterlet-work-sa")


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


# --- the rules -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Executor:
    namespace: str
    name: str

    @property
    def user(self) -> str:
        return f"system:serviceaccount:{self.namespace}:{self.name}"


def denied(webhook: str, message: str) -> Denial:
    return Denial(webhook, status.bad_request(message))


async def validate_manifest_work(request: Request, config: Config, seams: Seams) -> None:
    """Upstream's ``ManifestWorkWebhook``: manifests, their size, and the executor."""
    assert request.obj is not None
    manifests = _manifests(request.obj, "spec", "workload")
    if not manifests:
        raise denied(WORK_WEBHOOK, "manifests should not be empty")
    problem = manifests_problem(manifests, limit=config.manifest_limit)
    if problem:
        raise denied(WORK_WEBHOOK, problem)
    executor = _spec(request.obj).get("executor")
    if request.old is not None and _pruned(executor) == _pruned(_spec(request.old).get("executor")):
        return  # upstream checks only a new or changed executor
    if executor is None:
        if not config.nil_executor:
            return
        subject = _Executor(*DEFAULT_EXECUTOR)
    else:
        account = _mapping(_mapping(executor).get("subject")).get("serviceAccount")
        if not isinstance(account, dict):
            # Upstream refuses a ServiceAccount subject without its account (and would
            # fail on any other subject lacking it): one answer for both.
            raise denied(WORK_WEBHOOK, "executor service account can not be nil")
        subject = _Executor(_string(account.get("namespace")), _string(account.get("name")))
    if not await seams.authorizer.allowed(
        request.user,
        verb=EXECUTE_AS,
        group=GROUP,
        resource="manifestworks",
        namespace=request.namespace,
        name=subject.user,
    ):
        raise denied(
            WORK_WEBHOOK,
            f"user {request.user.name} cannot manipulate the Manifestwork with executor "
            f"{subject.namespace}/{subject.name} in namespace {request.namespace}",
        )


async def validate_replica_set(request: Request, config: Config, seams: Seams) -> None:
    """Upstream's ``ManifestWorkReplicaSetWebhook``: the template's manifests."""
    assert request.obj is not None
    manifests = _manifests(request.obj, "spec", "manifestWorkTemplate", "workload")
    problem = manifests_problem(manifests, limit=config.manifest_limit)
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
