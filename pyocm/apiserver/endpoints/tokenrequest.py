"""``POST serviceaccounts/<name>/token``: issue a signed, expiring service-account token.

As kube-apiserver's ``TokenREST``: a request naming no audience gets the API's audiences,
and ``spec.boundObjectRef`` binds the token to a Secret or Node of record (its uid goes
into the token, and the authenticator refuses the token once that object is gone). The
hub serves no Pods, so no token can be bound to one.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from aiohttp import web

from pyocm.apiserver.endpoints import body, responses
from pyocm.apiserver.registry.builtin import knownfields
from pyocm.apiserver.state import ServerState
from pyocm.kube import names, status, timefmt
from pyocm.pki import jwt

if TYPE_CHECKING:
    from pyocm.apiserver.endpoints.resources import Target

MIN_EXPIRATION = 600
DEFAULT_EXPIRATION = 3600
#: kube-apiserver caps tokens at --service-account-max-token-expiration; 48 h here.
MAX_EXPIRATION = 48 * 3600
#: The kinds of the core group a token can be bound to here, and their resources.
_BINDABLE = {"Secret": "secrets", "Node": "nodes"}


async def serve(request: web.Request, state: ServerState, target: Target) -> web.Response:
    req = await body.read_object(
        request, target.info, kind="TokenRequest", group_version="authentication.k8s.io/v1"
    )
    _check_decodes(req)
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
    bound = await _bound_object(state, target, spec.get("boundObjectRef"))
    seconds = min(seconds, MAX_EXPIRATION)
    audiences = [str(a) for a in spec.get("audiences") or []] or list(
        state.authenticator.api_audiences
    )
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
        bound_object=bound,
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


def _check_decodes(req: dict[str, Any]) -> None:
    """A body that would not decode into kube's TokenRequest struct is a 400, worded as
    Go's decoder words it (and nothing below meets a value of the wrong type)."""
    found = knownfields.decode_error("authentication.k8s.io", "v1", "TokenRequest", req)
    if found is not None:
        raise status.bad_request(
            'TokenRequest in version "v1" cannot be handled as a TokenRequest: '
            + found.go_message()
        )


async def _bound_object(
    state: ServerState, target: Target, ref: dict[str, Any] | None
) -> jwt.BoundObject | None:
    """The object of record ``ref`` names, as the token's claim; None when unbound.

    Answers kube's errors: 400 for a kind that cannot be bound, 404 when the object does
    not exist, 409 when ``ref`` carries a uid and the object of record has another."""
    if not ref:
        return None
    kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
    group, version = _group_version(str(ref.get("apiVersion") or ""))
    resource = _BINDABLE.get(kind) if group == "" else None
    info = state.catalog.get("", "v1", resource) if resource else None
    if info is None:
        raise status.bad_request(
            f"cannot bind token to object of type {group}/{version}, Kind={kind}"
        )
    _check_name(name)
    namespace = target.namespace if info.namespaced else ""
    obj = await state.store.get(info, namespace=namespace, name=name)
    uid = str(obj["metadata"]["uid"])
    wanted = str(ref.get("uid") or "")
    if wanted and wanted != uid:
        raise status.conflict(
            resource=kind,
            group="",
            name=name,
            detail=(
                f"the UID in the bound object reference ({wanted}) does not match the UID "
                "in record. The object might have been deleted and then recreated"
            ),
        )
    return jwt.BoundObject(kind=kind, name=name, uid=uid)


def _group_version(api_version: str) -> tuple[str, str]:
    """``schema.FromAPIVersionAndKind``: an apiVersion that does not parse counts as
    empty, so its group is the core group."""
    if api_version.count("/") > 1:
        return "", ""
    group, _, version = api_version.rpartition("/")
    return group, version


def _check_name(name: str) -> None:
    """The registry's key function refuses what cannot be one path segment."""
    if not name:
        raise status.bad_request("Name parameter required.")
    problems = names.is_path_segment_name(name)
    if problems:
        quoted = json.dumps(name)  # Go's %q, for the names that get this far
        raise status.bad_request(f"Name parameter invalid: {quoted}: {';'.join(problems)}")
