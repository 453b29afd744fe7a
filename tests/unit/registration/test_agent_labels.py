"""The labels an agent publishes: flag parsing and the update it makes."""

from __future__ import annotations

import pytest

from pyocm.registration.agent.labels import parse_label, relabelled
from pyocm.registration.agent.namespaces import hub_label

REGION = "info.open-cluster-management.io/region"


def test_parse_sets_and_removes() -> None:
    assert parse_label(f"{REGION}=apac") == (REGION, "apac")
    assert parse_label(f"{REGION}=") == (REGION, "")
    assert parse_label(f"{REGION}-") == (REGION, None)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("region=apac", "agents publish only labels under info.open-cluster-management.io/"),
        (f"{REGION}", "expected KEY=VALUE, or KEY- to remove the label"),
        (f"{REGION}=not valid", "a valid label must be"),
        ("info.open-cluster-management.io/=x", "name part must be non-empty"),
    ],
)
def test_parse_refuses_with_a_reason(text: str, words: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_label(text)
    assert words in str(caught.value)


def test_relabelled_changes_only_what_is_published() -> None:
    cluster = {"metadata": {"name": "c", "labels": {"env": "prod", REGION: "emea"}}}
    updated = relabelled(cluster, {REGION: "apac"})
    assert updated is not None
    assert updated["metadata"]["labels"] == {"env": "prod", REGION: "apac"}
    assert cluster["metadata"]["labels"][REGION] == "emea", "the cached object is not touched"
    assert relabelled(updated, {REGION: "apac"}) is None
    removed = relabelled(updated, {REGION: None})
    assert removed is not None and removed["metadata"]["labels"] == {"env": "prod"}
    assert relabelled(removed, {REGION: None}) is None


def test_hub_label_is_the_hash_of_the_hub_url() -> None:
    label = hub_label("https://hub.example.com:6443")
    prefix, name = label.split("/")
    assert prefix == "clusterset.open-cluster-management.io"
    assert len(name) == 63 and all(c in "0123456789abcdef" for c in name)
    assert hub_label("https://other.example.com:6443") != label
