"""``POST serviceaccounts/<name>/token``: issue a signed, expiring service-account token."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from aiohttp import web

from pyocm.apiserver.endpoints import body, responses
from pyocm.apiserver.state import ServerState
from pyocm.kube import status, timefmt
from pyocm.pki import jwt

if TYPE_CHECKING:
    from pyocm.apiserver.endpoints.resources import Target

MIN_EXPIRATION = 600
DEFAULT_EXPIRATION = 3600
#: kube-apiserver caps tokens at --service-account-max-token-expiration; 48 h here.
MAX_EXPIRATION = 48 * 3600


async def serve(request: web.Request, state: ServerState, target: Target) -> web.Response:
    req = await body.read_object(
        request, target.info, kind="TokenRequest", group_version="authentication.k8s.io/v1"
    )
    sa = await state.store.get(target.info, namespace=target.namespace, name=target.name)
    spec = req.get("spec") or {}
    seconds = int(spec.get("expirationSeconds") or DEFAULT_EXPIRATION)
    if seconds < MIN_EXPIRATION:
        raise status.invalid_object(
            kind="TokenRequest",
            group="authentication.k8s.io",
            name=target.name,
            errors=[
                status.invalid(
                    "spec.expirationSeconds",
                    seconds,
                    "may not specify a duration less than 10 minutes",
                )
            ],
        )
    seconds = min(seconds, MAX_EXPIRATION)
    audiences = [str(a) for a in spec.get("audiences") or []] or [state.issuer]
    now = datetime.now(UTC)
    token = jwt.issue_token(
        state.sa_private_key,
        issuer=state.issuer,
        namespace=target.namespace,
        name=target.name,
        uid=str(sa["metadata"]["uid"]),
        audiences=audiences,
        expiration_seconds=seconds,
        now=now,
    )
    spec = {**spec, "audiences": audiences, "expirationSeconds": seconds}
    req["spec"] = spec
    req["metadata"] = {
        "name": target.name,
        "namespace": target.namespace,
        "creationTimestamp": timefmt.format_time(now),
    }
    req["status"] = {
        "token": token,
        "expirationTimestamp": timefmt.format_time(now + timedelta(seconds=seconds)),
    }
    return responses.json_response(req, code=201)
