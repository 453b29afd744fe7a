"""Acting as someone else: kube-apiserver's impersonation filter.

A caller sends ``Impersonate-User`` (with optional ``Impersonate-Group``, repeated,
``Impersonate-Uid`` and ``Impersonate-Extra-<key>``, repeated) to run a request as another
identity, typically to drop its own privileges (``kubectl --as``). Every thing asked for is
authorized for the caller with the verb ``impersonate``, as kube does:

* a user: ``users`` (core group), the name being the user;
* ``system:serviceaccount:<ns>:<name>``: ``serviceaccounts`` named ``<name>`` in ``<ns>``;
* a group: ``groups``; a uid: ``uids.authentication.k8s.io``;
* an extra value: ``userextras/<key>`` in ``authentication.k8s.io``, named by the value.

The first refusal answers 403 with kube's message. Groups, a uid or extras without a user
are a 400. The identity built then replaces the caller for authorization and everything
downstream; each impersonated request is logged with both names on
``pyocm.apiserver.audit``, the stand-in for kube's audit ``user``/``impersonatedUser``.

One difference: a caller without credentials reaches the health checks and ``/version``
before impersonation is considered (kube would answer 403 there); everywhere else an
anonymous caller is 401, or, on cluster-info, checked as ``system:anonymous``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from multidict import CIMultiDictProxy

from pyocm.apiserver.authentication import user as users
from pyocm.apiserver.authorization import authorizer
from pyocm.apiserver.authorization.attributes import Attributes, go_quote, go_quote_list
from pyocm.apiserver.authorization.index import RbacIndex
from pyocm.kube import names, status

audit = logging.getLogger("pyocm.apiserver.audit")

USER = "Impersonate-User"
GROUP = "Impersonate-Group"
UID = "Impersonate-Uid"
EXTRA_PREFIX = "impersonate-extra-"
AUTHENTICATION = "authentication.k8s.io"
_AUTHENTICATION_V1 = f"{AUTHENTICATION}/v1"
_SA_PREFIX = "system:serviceaccount:"
_MALFORMED_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")

RawHeaders = Sequence[tuple[bytes, bytes]]
_FIRST_BYTE = frozenset(b"iI")


def requested(raw_headers: RawHeaders) -> bool:
    """Whether any ``Impersonate-*`` header came: the only cost other requests pay.

    A scan of the raw names, rejecting most on their first byte, costs about 0.3 µs for
    the usual eight headers; a lookup of ``Impersonate-User`` alone (0.03 µs) would let
    groups or extras without a user pass silently instead of answering 400 as kube does.
    """
    for name, _ in raw_headers:
        # An int lookup first: slicing every name would cost five times as much.
        if name and name[0] in _FIRST_BYTE and name[:12].lower() == b"impersonate-":
            return True
    return False


@dataclass(frozen=True, slots=True)
class Target:
    """One thing to impersonate: kube's ``ObjectReference`` for it."""

    kind: str
    name: str
    namespace: str = ""
    api_version: str = ""
    field_path: str = ""  # the extra key, for kind UserExtra

    def go_value(self) -> str:
        """``%v`` of the ObjectReference: its seven fields, space separated, in braces."""
        fields = (self.kind, self.namespace, self.name, "", self.api_version, "", self.field_path)
        return "{" + " ".join(fields) + "}"

    def attributes(self, requestor: users.UserInfo) -> Attributes:
        """What the caller must be allowed: ``impersonate`` on this target."""
        resource, subresource = _RESOURCES[self.kind], ""
        if self.kind == "UserExtra":
            subresource = self.field_path
        group, _, version = self.api_version.rpartition("/")
        return Attributes(
            user=requestor,
            verb="impersonate",
            api_group=group,
            api_version=version,
            resource=resource,
            subresource=subresource,
            namespace=self.namespace,
            name=self.name,
        )


_RESOURCES = {
    "ServiceAccount": "serviceaccounts",
    "User": "users",
    "Group": "groups",
    "UserExtra": "userextras",
    "UID": "uids",
}


def impersonate(
    requestor: users.UserInfo,
    *,
    headers: CIMultiDictProxy[str],
    rbac: RbacIndex,
    request_line: str,
) -> users.UserInfo:
    """The identity the headers ask for, once ``requestor`` may be it; else 400 or 403.

    ``request_line`` (method and raw, still percent-encoded path) goes to the audit log;
    every name logged is quoted, so no header can forge a log line.
    """
    wanted = targets(headers)
    if not wanted:
        # Only unknown Impersonate-* headers, or an empty Impersonate-User (kube reads
        # it as absent): nothing to act as, so the caller is served as itself.
        return requestor
    for target in wanted:
        attrs = target.attributes(requestor)
        decision = authorizer.authorize(rbac, attrs)
        if not decision.allowed:
            audit.info(
                "%s: user %s was refused impersonating %s %s",
                request_line,
                go_quote(requestor.name),
                go_quote(attrs.combined_resource),
                go_quote(target.name),
            )
            raise attrs.forbidden(decision.reason)
    identity = _identity(wanted, groups_given=GROUP in headers)
    audit.info(
        "%s: user %s is impersonating user %s groups %s",
        request_line,
        go_quote(requestor.name),
        go_quote(identity.name),
        go_quote_list(identity.groups),
    )
    return identity


def targets(headers: CIMultiDictProxy[str]) -> list[Target]:
    """The things asked for, user first; 400 when anything comes without a user."""
    user = headers.get(USER, "")
    found = [_user_target(user)] if user else []
    found += [Target(kind="Group", name=group) for group in headers.getall(GROUP, ())]
    found += _extra_targets(headers)
    uid = headers.get(UID, "")
    if uid:
        found.append(Target(kind="UID", name=uid, api_version=_AUTHENTICATION_V1))
    if found and not user:
        listed = " ".join(target.go_value() for target in found)
        raise status.bad_request(f"requested [{listed}] without impersonating a user")
    return found


def _user_target(name: str) -> Target:
    """A service account's user name is checked as the service account (kube's
    ``serviceaccount.SplitUsername``); any other name as a user."""
    if name.startswith(_SA_PREFIX):
        parts = name[len(_SA_PREFIX) :].split(":")
        if (
            len(parts) == 2
            and not names.is_dns1123_label(parts[0])
            and not names.is_dns1123_subdomain(parts[1])
        ):
            return Target(kind="ServiceAccount", namespace=parts[0], name=parts[1])
    return Target(kind="User", name=name)


def _extra_targets(headers: CIMultiDictProxy[str]) -> Iterator[Target]:
    """One target per extra value; keys are lower-cased, then percent-decoded."""
    for header, value in headers.items():
        lowered = header.lower()
        if lowered.startswith(EXTRA_PREFIX):
            key = unescape_extra_key(lowered[len(EXTRA_PREFIX) :])
            yield Target(
                kind="UserExtra", name=value, api_version=_AUTHENTICATION_V1, field_path=key
            )


def unescape_extra_key(encoded: str) -> str:
    """Go's ``url.PathUnescape``, keeping the key as sent when it is malformed."""
    if _MALFORMED_ESCAPE.search(encoded):
        return encoded
    return unquote(encoded, errors="replace")


def _identity(wanted: list[Target], *, groups_given: bool) -> users.UserInfo:
    """The user the targets make, with kube's implied groups."""
    name, uid = "", ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for target in wanted:
        if target.kind == "ServiceAccount":
            name = f"{_SA_PREFIX}{target.namespace}:{target.name}"
            if not groups_given:  # a service account's groups are fixed: name them
                groups = ["system:serviceaccounts", f"system:serviceaccounts:{target.namespace}"]
        elif target.kind == "User":
            name = target.name
        elif target.kind == "Group":
            groups.append(target.name)
        elif target.kind == "UserExtra":
            extra.setdefault(target.field_path, []).append(target.name)
        else:
            uid = target.name
    groups += _implied_groups(name, groups)
    return users.UserInfo(
        name=name,
        groups=tuple(groups),
        uid=uid,
        extra={key: tuple(values) for key, values in extra.items()},
    )


def _implied_groups(name: str, groups: list[str]) -> list[str]:
    """``system:authenticated`` unless either all-users group is there already; the
    anonymous user gets ``system:unauthenticated`` instead."""
    if name == users.ANONYMOUS:
        return [] if users.UNAUTHENTICATED in groups else [users.UNAUTHENTICATED]
    if users.AUTHENTICATED in groups or users.UNAUTHENTICATED in groups:
        return []
    return [users.AUTHENTICATED]
