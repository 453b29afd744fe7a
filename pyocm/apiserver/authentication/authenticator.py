"""Who sent a request: client certificates, then bearer tokens, else anonymous.

Order as kube-apiserver: a verified TLS client certificate wins (CN is the user, every O a
group); otherwise a bearer token must be a valid bootstrap token or service-account
token, and a presented but invalid credential is 401, never anonymous. Every
authenticated user is in ``system:authenticated``.
"""

from __future__ import annotations

import base64
import hmac
import re
from datetime import UTC, datetime
from typing import Any

from pyocm.apiserver.authentication import user as users
from pyocm.apiserver.registry import codec
from pyocm.apiserver.storage.interface import Backend
from pyocm.kube import status, timefmt
from pyocm.pki import jwt

_BOOTSTRAP_TOKEN = re.compile(r"^([a-z0-9]{6})\.([a-z0-9]{16})$")
BOOTSTRAP_SECRET_TYPE = "bootstrap.kubernetes.io/token"
BOOTSTRAP_GROUP = "system:bootstrappers"


class Authenticator:
    def __init__(self, *, backend: Backend, sa_public_key: Any, issuer: str) -> None:
        self._backend = backend
        self._sa_public_key = sa_public_key
        self._issuer = issuer

    async def authenticate(
        self, *, peercert: dict[str, Any] | None, authorization: str | None
    ) -> users.UserInfo | None:
        """The user, or None for an anonymous request. Raises 401 for a bad credential."""
        if peercert:
            identity = _from_peercert(peercert)
            if identity is not None:
                return identity
        if authorization:
            scheme, _, token = authorization.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise status.unauthorized()
            return await self.authenticate_token(token.strip())
        return None

    async def authenticate_token(self, token: str) -> users.UserInfo:
        match = _BOOTSTRAP_TOKEN.match(token)
        if match:
            found = await self._bootstrap(match.group(1), match.group(2))
            if found is not None:
                return found
            raise status.unauthorized()
        if token.count(".") == 2:
            return await self._service_account(token)
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

    async def _service_account(self, token: str) -> users.UserInfo:
        try:
            claims = jwt.verify_token(
                self._sa_public_key, token, issuer=self._issuer, now=datetime.now(UTC)
            )
        except jwt.TokenError:
            raise status.unauthorized() from None
        name = claims.service_account_name
        kv = await self._backend.get(f"/registry/core/serviceaccounts/{claims.namespace}/{name}")
        if (
            kv is None
            or codec.decode(kv).get("metadata", {}).get("uid") != claims.service_account_uid
        ):
            raise status.unauthorized()
        return users.UserInfo(
            name=jwt.service_account_username(claims.namespace, name),
            groups=(
                "system:serviceaccounts",
                f"system:serviceaccounts:{claims.namespace}",
                users.AUTHENTICATED,
            ),
            uid=claims.service_account_uid,
        )


def _b64(value: Any) -> str:
    try:
        return base64.b64decode(str(value)).decode()
    except (ValueError, UnicodeDecodeError):
        return ""


def _from_peercert(cert: dict[str, Any]) -> users.UserInfo | None:
    """User and groups from ``SSLSocket.getpeercert()``'s subject (the TLS layer has
    already verified the chain and the validity window against the client CA)."""
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
