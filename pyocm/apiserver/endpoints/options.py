"""Query parameters shared by several verbs, parsed and validated once.

Unsupported values are refused by name rather than ignored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyocm.apiserver.endpoints.requestinfo import truthy
from pyocm.apiserver.registry import errors
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.state import ServerState
from pyocm.apiserver.storage import errors as storage_errors
from pyocm.kube import selectors, status


@dataclass(frozen=True)
class ListOptions:
    labels: selectors.LabelSelector | None
    fields: selectors.FieldSelector | None
    resource_version: str
    resource_version_match: str
    min_revision: int
    send_initial_events: bool
    allow_bookmarks: bool
    timeout_seconds: int | None


def list_options(
    query: Mapping[str, str], info: ResourceInfo, *, watch: bool = False, required_labels: str = ""
) -> ListOptions:
    """``required_labels`` is ANDed to the client's label selector (a scope the server
    imposes, such as one cluster agent's own CSRs)."""
    given = query.get("labelSelector", "")
    labels = _labels(",".join(part for part in (given, required_labels) if part))
    fields = _fields(query.get("fieldSelector", ""), info)
    rv = query.get("resourceVersion", "")
    match = query.get("resourceVersionMatch", "")
    send_initial = truthy(query["sendInitialEvents"]) if "sendInitialEvents" in query else False
    _check_rv_match(rv=rv, match=match, watch=watch, send_initial=send_initial)
    if send_initial and not truthy(query.get("allowWatchBookmarks", "false")):
        raise _invalid_list_options(
            "allowWatchBookmarks",
            "FieldValueForbidden",
            "allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true",
        )
    return ListOptions(
        labels=labels,
        fields=fields,
        resource_version=rv,
        resource_version_match=match,
        min_revision=_min_revision(rv) if not watch else 0,
        send_initial_events=send_initial,
        allow_bookmarks=truthy(query.get("allowWatchBookmarks", "false")),
        timeout_seconds=_timeout(query.get("timeoutSeconds")),
    )


def _labels(raw: str) -> selectors.LabelSelector | None:
    if not raw:
        return None
    try:
        return selectors.parse_label_selector(raw)
    except ValueError as err:
        raise status.bad_request(
            f"unable to parse requirement: {err}" if "unable to parse" not in str(err) else str(err)
        ) from None


def _fields(raw: str, info: ResourceInfo) -> selectors.FieldSelector | None:
    if not raw:
        return None
    try:
        parsed = selectors.parse_field_selector(raw)
    except ValueError as err:
        raise status.bad_request(str(err)) from None
    for field in parsed.fields():
        if field not in info.strategy.fields:
            raise status.bad_request(f"field label not supported: {field}")
    return parsed


def _check_rv_match(*, rv: str, match: str, watch: bool, send_initial: bool) -> None:
    if send_initial:
        if not watch:
            raise _invalid_list_options(
                "sendInitialEvents",
                "FieldValueForbidden",
                "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
            )
        if match != "NotOlderThan":
            raise _invalid_list_options(
                "resourceVersionMatch",
                "FieldValueForbidden",
                "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )
        return
    if match and match not in ("NotOlderThan", "Exact"):
        raise _invalid_list_options(
            "resourceVersionMatch",
            "FieldValueNotSupported",
            f'resourceVersionMatch: Unsupported value: "{match}": supported values: "Exact", "NotOlderThan", ""',
        )
    if match and not rv:
        raise _invalid_list_options(
            "resourceVersionMatch",
            "FieldValueForbidden",
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        )
    if watch and match:
        raise _invalid_list_options(
            "resourceVersionMatch",
            "FieldValueForbidden",
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        )


def _invalid_list_options(field: str, reason: str, message: str) -> status.ApiError:
    return status.ApiError(
        code=422,
        reason="Invalid",
        message=f'ListOptions.meta.k8s.io "" is invalid: {message}',
        details={
            "group": "meta.k8s.io",
            "kind": "ListOptions",
            "causes": [{"reason": reason, "message": message, "field": field}],
        },
    )


def _min_revision(rv: str) -> int:
    if rv in ("", "0"):
        return 0
    try:
        value = int(rv)
    except ValueError:
        raise status.bad_request(
            f'resourceVersion: Invalid value: "{rv}": must be a non-negative integer'
        ) from None
    if value < 0:
        raise status.bad_request(
            f'resourceVersion: Invalid value: "{rv}": must be a non-negative integer'
        )
    return value


def _timeout(raw: str | None) -> int | None:
    if raw is None or raw == "":
        return None
    try:
        value = int(raw)
    except ValueError:
        raise status.bad_request(
            f'timeoutSeconds: Invalid value: "{raw}": must be an integer'
        ) from None
    return value  # negative: the watch's deadline has already passed, as in kube


async def wait_for_revision(state: ServerState, info: ResourceInfo, revision: int) -> None:
    """A list "not older than" a revision the store has not reached yet waits a little,
    then answers 504 ResourceVersionTooLarge, as the watch cache does."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 3.0
    while state.store.backend.current_revision() < revision:
        if loop.time() > deadline:
            raise errors.translate(
                storage_errors.FutureRevision(
                    requested=revision, current=state.store.backend.current_revision()
                ),
                info,
                "",
            )
        await asyncio.sleep(0.05)


@dataclass(frozen=True)
class WriteOptions:
    dry_run: bool
    field_validation: str
    field_manager: str


def write_options(query: Mapping[str, str], body: Mapping[str, Any] | None = None) -> WriteOptions:
    dry_run_values = [v for k, v in query.items() if k == "dryRun"]
    if body is not None and isinstance(body.get("dryRun"), list):
        dry_run_values.extend(str(v) for v in body["dryRun"])
    for value in dry_run_values:
        if value != "All":
            raise status.bad_request(
                f'dryRun: Unsupported value: "{value}": supported values: "All"'
            )
    # kube-apiserver's default since 1.27: report unknown fields as warnings.
    validation = query.get("fieldValidation", "") or "Warn"
    if validation not in ("Ignore", "Warn", "Strict"):
        raise status.bad_request(
            f'fieldValidation: Unsupported value: "{validation}": supported values: "Ignore", "Strict", "Warn"'
        )
    manager = query.get("fieldManager", "")
    if len(manager) > 128:
        raise status.bad_request("fieldManager: Invalid value: must be no more than 128 characters")
    return WriteOptions(
        dry_run=bool(dry_run_values), field_validation=validation, field_manager=manager
    )


def manager_name(given: str, user_agent: str | None) -> str:
    """``fieldManager``, else the User-Agent's product (``kubectl/v1.33.0 (...)`` →
    ``kubectl``), as kube-apiserver names managers that do not say who they are."""
    if given:
        return given
    product = (user_agent or "").split("/", 1)[0].strip()
    return product[:128] or "unknown"
