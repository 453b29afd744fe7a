"""Write options as Kubernetes spells them on the query string."""

from __future__ import annotations

import pytest

from pyocm.runtime.options import PATCH_CONTENT_TYPES, check_patch, write_query


def test_a_write_without_options_sends_no_query() -> None:
    assert write_query() is None


def test_each_option_has_its_kubernetes_spelling() -> None:
    assert write_query(
        field_manager="work-agent", dry_run=True, field_validation="Strict", force=True
    ) == {
        "fieldManager": "work-agent",
        "dryRun": "All",
        "fieldValidation": "Strict",
        "force": "true",
    }


def test_apply_is_the_apply_patch_media_type() -> None:
    assert PATCH_CONTENT_TYPES["apply"] == "application/apply-patch+yaml"


def test_apply_needs_a_manager_and_force_needs_apply() -> None:
    check_patch("apply", field_manager="m", force=True)
    check_patch("merge", field_manager=None, force=False)
    with pytest.raises(ValueError, match="field_manager"):
        check_patch("apply", field_manager=None, force=False)
    with pytest.raises(ValueError, match="force"):
        check_patch("strategic", field_manager="m", force=True)
