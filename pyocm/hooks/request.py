"""What an admission rule sees and answers, with no server behind it.

The same rules run in two places: inside pyocm's API server (its admission chain) and in
``pyocm webhook`` beside a real kube-apiserver (an AdmissionReview). Each side builds a
:class:`Request`, gives the rules its two seams (an :class:`Authorizer`, which a
SubjectAccessReview answers, and a :class:`Lookup` for the few objects the rules read),
and renders a :class:`Denial` as its side must: the webhook as the review's ``status``,
the API server as kube-apiserver relays a webhook's denial (:meth:`Denial.relayed`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from pyocm.kube.status import ApiError

Obj = dict[str, Any]

#: Upstream's default ``--manifestLimit`` of the work webhook: 500 KiB.
DEFAULT_MANIFEST_LIMIT = 500 * 1024


class Operation(Enum):
    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    CONNECT = "CONNECT"


@dataclass(frozen=True)
class UserInfo:
    """The requester, as an AdmissionReview's ``userInfo`` carries it."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Request:
    """One admission request. ``obj`` is the object to be stored (None for DELETE),
    ``old`` the stored one (None for CREATE); rules never change either."""

    operation: Operation
    group: str
    version: str
    resource: str
    user: UserInfo
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    obj: Obj | None = None
    old: Obj | None = None
    dry_run: bool = False

    @property
    def path(self) -> str:
        """``resource`` or ``resource/subresource``, as webhook rules name them."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


class Authorizer(Protocol):
    """May ``user`` do this? What a SubjectAccessReview answers."""

    async def allowed(
        self,
        user: UserInfo,
        *,
        verb: str,
        group: str,
        resource: str,
        subresource: str = "",
        namespace: str = "",
        name: str = "",
    ) -> bool: ...


class Lookup(Protocol):
    """The objects the rules read; None when there is none of that name."""

    async def namespace(self, name: str) -> Obj | None: ...

    async def managed_cluster(self, name: str) -> Obj | None: ...


@dataclass(frozen=True)
class Seams:
    authorizer: Authorizer
    lookup: Lookup


@dataclass(frozen=True)
class Config:
    """The rules' options: upstream's hub gates and the work webhook's manifest limit."""

    default_cluster_set: bool = True
    nil_executor: bool = False
    replica_sets: bool = False
    manifest_limit: int = DEFAULT_MANIFEST_LIMIT

    @classmethod
    def of(cls, gates: Mapping[str, bool], *, manifest_limit: int) -> Config:
        """From ``--feature-gates`` (gates absent take upstream's defaults)."""
        return cls(
            default_cluster_set=gates.get("DefaultClusterSet", True),
            nil_executor=gates.get("NilExecutorValidating", False),
            replica_sets=gates.get("ManifestWorkReplicaSet", False),
            manifest_limit=manifest_limit,
        )


class Denial(Exception):
    """A webhook's refusal: the Status it answers (``error``) and the webhook's name."""

    def __init__(self, webhook: str, error: ApiError) -> None:
        super().__init__(error.message)
        self.webhook = webhook
        self.error = error

    def status(self) -> Obj:
        """The AdmissionResponse's ``status``, as controller-runtime writes an API error's
        ``metav1.Status`` (no kind or apiVersion; ``metadata`` is always there)."""
        body = self.error.status()
        del body["kind"], body["apiVersion"]
        return body

    def relayed(self) -> ApiError:
        """What a client of kube-apiserver reads (``webhook/errors.ToStatusErr``): the
        webhook's code (at least 400), reason and details; the message prefixed."""
        denied_by = f'admission webhook "{self.webhook}" denied the request'
        if self.error.message:
            message = f"{denied_by}: {self.error.message}"
        elif self.error.reason:
            message = f"{denied_by}: {self.error.reason}"
        else:
            message = f"{denied_by} without explanation"
        return ApiError(
            code=max(self.error.code, 400),
            reason=self.error.reason,
            message=message,
            details=self.error.details,
        )


def terminating(namespace: Obj) -> bool:
    """A namespace being deleted: phase ``Terminating`` (what upstream reads), which
    kube sets with the deletionTimestamp."""
    return bool(
        (namespace.get("status") or {}).get("phase") == "Terminating"
        or (namespace.get("metadata") or {}).get("deletionTimestamp")
    )
