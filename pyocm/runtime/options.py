"""The options a write takes, as Kubernetes spells them on the query string.

``fieldManager`` names the writer in ``managedFields`` (create, update, patch; required
by server-side apply); ``force`` lets an apply take fields another manager owns (apply
only); ``dryRun=All`` runs the write through admission and validation and stores
nothing; ``fieldValidation`` decides what unknown or duplicate fields get (``Strict``:
an error, ``Warn``: a warning header, ``Ignore``: dropped silently).
"""

from __future__ import annotations

from typing import Literal

PatchType = Literal["merge", "json", "strategic", "apply"]
FieldValidation = Literal["Ignore", "Warn", "Strict"]

PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    # The apply body is YAML, and every JSON document is YAML: sent as JSON it needs no
    # second encoder.
    "apply": "application/apply-patch+yaml",
}


def write_query(
    *,
    field_manager: str | None = None,
    dry_run: bool = False,
    field_validation: FieldValidation | None = None,
    force: bool = False,
) -> dict[str, str] | None:
    """The query of a write, or None when it has no options (the common case)."""
    if field_manager is None and not dry_run and field_validation is None and not force:
        return None
    query: dict[str, str] = {}
    if field_manager is not None:
        query["fieldManager"] = field_manager
    if dry_run:
        query["dryRun"] = "All"
    if field_validation is not None:
        query["fieldValidation"] = field_validation
    if force:
        query["force"] = "true"
    return query


def check_patch(type: PatchType, *, field_manager: str | None, force: bool) -> None:
    """Refuse, before any request, what every API server refuses: an apply without a
    field manager, and ``force`` on anything but an apply."""
    if type == "apply" and not field_manager:
        raise ValueError("server-side apply needs a field_manager")
    if force and type != "apply":
        raise ValueError(f"force applies to server-side apply only, not a {type} patch")
