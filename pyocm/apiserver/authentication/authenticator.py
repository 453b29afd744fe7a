"""Who sent a request: client certificates, then bearer tokens, else anonymous.

Order as kube-apiserver: a verified TLS client certificate wins (CN is the user, every O a
group); otherwise a bearer token must be a valid bootstrap token or service-account
token, and a presented but invalid credential is 401, never anonymous. Every
authenticated user is in ``system:authenticated``.

Tokens are good for audiences: the API's own (kube-apiserver's ``--api-audiences``, which
defaults to the service-account issuer) unless a TokenReview asks about others. A
service-account token must name one of them; a bootstrap token is good for the API's
only. A token bound to a Secret, Pod or Node dies with that object, as kube's
``serviceaccount.validator`` decides.
"""

from __future__ import annotations

import base64
import functools
import hmac
import math
import re
import ssl
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from cryptography import x509
from cryptography.exceptions import InvalidSignature

from pyocm.apiserver.authentication import user as users
from pyocm.apiserver.registry import codec
from pyocm.apiserver.storage.interface import Backend
from pyocm.kube import status, timefmt
from pyocm.pki import jwt

_BOOTSTRAP_TOKEN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")
BOOTSTRAP_SECRET_TYPE = "bootstrap.kubernetes.io/token"
BOOTSTRAP_GROUP = "system:bootstrappers"


class Authenticator:
    def __init__(
        self,
        *,
        backend: Backend,
        sa_public_key: Any,
        issuer: str,
        api_audiences: Sequence[str] = (),
    ) -> None:
        self._backend = backend
        self._sa_public_key = sa_public_key
        self._issuer = issuer
        #: What a token must be good for to authenticate a request to this server;
        #: TokenRequests that name no audience get these.
        self.api_audiences: tuple[str, ...] = tuple(api_audiences) or (issuer,)

    async def authenticate(
        self, *, certificate: ClientCertificate | None, authorization: str | None
    ) -> users.UserInfo | None:
        """The user, or None for an anonymous request. Raises 401 for a bad credential."""
        out_of_date = False
        if certificate is not None:
            if certificate.valid_at(time.time()):
                if certificate.user is not None:
                    return certificate.user
            else:
                out_of_date = True
        if authorization:
            scheme, _, token = authorization.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise status.unauthorized()
            return await self.authenticate_token(token.strip())
        if out_of_date:
            # As kube's union of authenticators: a token may still authenticate the
            # request, but a certificate that failed is never taken for anonymous.
            raise status.unauthorized()
        return None

    async def authenticate_token(self, token: str) -> users.UserInfo:
        """The user of a bearer token presented to this server. Raises 401."""
        user, _ = await self.review_token(token, audiences=self.api_audiences)
        return user

    async def review_token(
        self, token: str, *, audiences: Sequence[str]
    ) -> tuple[users.UserInfo, tuple[str, ...]]:
        """The token's user and which of ``audiences`` it is good for (at least one,
        in the order given). Raises 401."""
        match = _BOOTSTRAP_TOKEN.match(token)
        if match:
            found = await self._bootstrap(match.group(1), match.group(2))
            # Bootstrap tokens carry no audience: they are good for the API's only.
            shared = _shared(audiences, self.api_audiences)
            if found is None or not shared:
                raise status.unauthorized()
            return found, shared
        if token.count(".") == 2:
            return await self._service_account(token, audiences)
        raise status.unauthorized()

    async def _bootstrap(self, token_id: str, secret: str) -> users.UserInfo | None:
        kv = await self._backend.get(
            f"/registry/core/secrets/kube-system/bootstrap-token-{token_id}"
        )
        if kv is None:
            return None
        obj = codec.decode(kv)
        if obj.get("type") != BOOTSTRAP_SECRET_TYPE or obj.get("metadata", {}).get(
            "deletionTimestamp"
        ):
            return None
        data = {k: _b64(v) for k, v in (obj.get("data") or {}).items()}
        if data.get("token-id") != token_id or data.get("usage-bootstrap-authentication") != "true":
            return None
        if not hmac.compare_digest(data.get("token-secret", "").encode(), secret.encode()):
            return None
        expiration = data.get("expiration")
        if expiration:
            try:
                if timefmt.parse_time(expiration) <= datetime.now(UTC):
                    return None
            except ValueError:
                return None
        extra = [g.strip() for g in data.get("auth-extra-groups", "").split(",") if g.strip()]
        if any(not g.startswith(BOOTSTRAP_GROUP + ":") for g in extra):
            return None
        groups = (BOOTSTRAP_GROUP, *extra, users.AUTHENTICATED)
        return users.UserInfo(name=f"system:bootstrap:{token_id}", groups=groups)

    async def _service_account(
        self, token: str, audiences: Sequence[str]
    ) -> tuple[users.UserInfo, tuple[str, ...]]:
        now = datetime.now(UTC)
        try:
            claims = jwt.verify_token(
                self._sa_public_key, token, issuer=self._issuer, now=now, audiences=audiences
            )
        except jwt.TokenError:
            raise status.unauthorized() from None
        namespace, name = claims.namespace, claims.service_account_name
        account = f"/registry/core/serviceaccounts/{namespace}/{name}"
        if not await self._current(account, uid=claims.service_account_uid, now=now):
            raise status.unauthorized()
        bound = claims.bound_object
        if bound is not None and not await self._current(
            _bound_key(bound, namespace), uid=bound.uid, now=now
        ):
            raise status.unauthorized()
        user = users.UserInfo(
            name=jwt.service_account_username(namespace, name),
            groups=(
                "system:serviceaccounts",
                f"system:serviceaccounts:{namespace}",
                users.AUTHENTICATED,
            ),
            uid=claims.service_account_uid,
        )
        return user, _shared(audiences, claims.audiences)

    async def _current(self, key: str, *, uid: str, now: datetime) -> bool:
        """Whether the object at ``key`` is still the one with ``uid``. As kube, an object
        whose deletion began more than the token leeway ago counts as gone, so deleting
        an object with finalizers ends its tokens without waiting for the finalizers."""
        kv = await self._backend.get(key)
        if kv is None:
            return False
        metadata = codec.decode(kv).get("metadata") or {}
        if metadata.get("uid") != uid:
            return False
        deleted = metadata.get("deletionTimestamp")
        if not deleted:
            return True
        try:
            return timefmt.parse_time(str(deleted)) >= now - jwt.LEEWAY
        except ValueError:
            return False


def _bound_key(bound: jwt.BoundObject, namespace: str) -> str:
    """Where the object a token is bound to is stored (Pods are never: the hub serves
    none, and such a token cannot be issued here)."""
    if bound.kind == "Node":
        return f"/registry/core/nodes/{bound.name}"
    return f"/registry/core/{bound.kind.lower()}s/{namespace}/{bound.name}"


def _shared(wanted: Sequence[str], offered: Sequence[str]) -> tuple[str, ...]:
    """The audiences in ``wanted`` that ``offered`` has, in ``wanted``'s order."""
    return tuple(audience for audience in wanted if audience in offered)


def _b64(value: Any) -> str:
    try:
        return base64.b64decode(str(value)).decode()
    except (ValueError, UnicodeDecodeError):
        return ""


@dataclass(frozen=True, slots=True)
class ClientCertificate:
    """What a connection's client certificate says, read once per connection.

    The TLS layer checks neither its validity window (``X509_V_FLAG_NO_CHECK_TIME``) nor,
    when ``tlsdefer``'s callback is installed, that its chain reaches a trusted CA, so
    that such a certificate gets a 401 rather than a reset handshake, as from
    kube-apiserver. Both are checked here: an untrusted certificate (``user`` None,
    empty window) never authenticates and is never taken for anonymous.
    """

    user: users.UserInfo | None  # None: the certificate names no user (no CN), or untrusted
    not_before: float
    not_after: float

    def valid_at(self, now: float) -> bool:
        return self.not_before <= now <= self.not_after


#: A presented certificate that must fail: a window nobody is inside, no user.
UNTRUSTED = ClientCertificate(user=None, not_before=math.inf, not_after=-math.inf)


def client_certificate(
    peercert: dict[str, Any] | None, der: bytes | None, *, issuer: x509.Certificate
) -> ClientCertificate | None:
    """The certificate ``SSLObject.getpeercert()`` gives (and ``der``, its binary form),
    or None without one. Unless ``issuer`` (the client CA) signed it directly, it is
    :data:`UNTRUSTED`: the handshake may have let an unknown CA's certificate through."""
    if not peercert and not der:
        return None
    if not peercert or not der or not _issued_by(der, issuer):
        return UNTRUSTED
    try:
        not_before = float(ssl.cert_time_to_seconds(peercert["notBefore"]))
        not_after = float(ssl.cert_time_to_seconds(peercert["notAfter"]))
    except (KeyError, ValueError):
        not_before, not_after = math.inf, -math.inf  # a window nobody is inside
    return ClientCertificate(
        user=_from_peercert(peercert), not_before=not_before, not_after=not_after
    )


@functools.lru_cache(maxsize=1024)
def _issued_by(der: bytes, issuer: x509.Certificate) -> bool:
    """Whether ``issuer`` signed the DER certificate (its name and signature); cached, as
    an agent reconnects with the same certificate and a signature check costs more than
    the lookup."""
    try:
        x509.load_der_x509_certificate(der).verify_directly_issued_by(issuer)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _from_peercert(cert: dict[str, Any]) -> users.UserInfo | None:
    """User and groups from ``SSLSocket.getpeercert()``'s subject."""
    common_name = ""
    groups: list[str] = []
    for rdn in cert.get("subject", ()):
        for attr, value in rdn:
            if attr == "commonName":
                common_name = value
            elif attr == "organizationName":
                groups.append(value)
    if not common_name:
        return None
    return users.UserInfo(name=common_name, groups=(*groups, users.AUTHENTICATED))
