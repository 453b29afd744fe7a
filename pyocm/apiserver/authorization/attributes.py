"""What a request asks to do, as the authorizer sees it (``authorizer.Attributes``).

Besides holding the request, this module renders it the way kube-apiserver does in 403
answers, so a denied client reads the same text it would read from a real cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.kube import status

_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
}


def go_quote(text: str) -> str:
    """``text`` quoted as Go's ``%q`` (``strconv.Quote``) quotes it.

    Kubernetes builds its RBAC messages with ``%q``; user names come from certificates and
    tokens and may hold any character, so the escaping must match, not just the quotes.
    """
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    out: list[str] = []
    for ch in text:
        code = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def go_quote_list(items: tuple[str, ...] | list[str]) -> str:
    """A string slice printed with ``%q``: ``["a" "b"]``."""
    return "[" + " ".join(go_quote(item) for item in items) + "]"


@dataclass(frozen=True, slots=True)
class Attributes:
    """One request to authorize.

    Resource requests fill ``api_group`` .. ``name``; non-resource requests (``/healthz``,
    ``/apis``) fill ``path`` and use the lower-cased HTTP method as ``verb``. For list and
    watch the request-info layer puts the name pinned by ``fieldSelector=metadata.name=X``
    into ``name``, which is what lets rules with ``resourceNames`` grant them.
    """

    user: UserInfo
    verb: str
    resource_request: bool = True
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""

    @classmethod
    def for_path(cls, *, user: UserInfo, verb: str, path: str) -> Attributes:
        return cls(user=user, verb=verb, resource_request=False, path=path)

    @property
    def combined_resource(self) -> str:
        """``resource/subresource``, the form rules name subresources in."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource

    def describe(self) -> str:
        """The sentence kube-apiserver puts in a 403: ``User "bob" cannot get resource ...``."""
        user = go_quote(self.user.name)
        if not self.resource_request:
            return f"User {user} cannot {self.verb} path {go_quote(self.path)}"
        head = (
            f"User {user} cannot {self.verb} resource {go_quote(self.combined_resource)}"
            f" in API group {go_quote(self.api_group)}"
        )
        if self.namespace:
            return f"{head} in the namespace {go_quote(self.namespace)}"
        return f"{head} at the cluster scope"

    def forbidden(self, reason: str = "") -> status.ApiError:
        """The 403 Status for this request, ``reason`` being the authorizer's (may be empty).

        Mirrors ``responsewriters.Forbidden`` + ``apierrors.NewForbidden``: the qualified
        resource (never the subresource) and the name lead the message, the authorizer's
        reason follows the description after ``": "``.
        """
        detail = f"{self.describe()}: {reason}" if reason else self.describe()
        if not self.resource_request:
            return status.forbidden_error(message=f"forbidden: {detail}")
        qualified = status.qualified(self.resource, self.api_group)
        subject = f"{qualified} {go_quote(self.name)}" if self.name else qualified
        return status.forbidden_error(
            message=f"{subject} is forbidden: {detail}",
            resource=self.resource,
            group=self.api_group,
            name=self.name,
        )
