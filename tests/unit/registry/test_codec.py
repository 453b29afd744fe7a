"""Stored bytes and the label prefilter that lets lists skip decoding."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pyocm.apiserver.registry import codec
from pyocm.apiserver.storage.interface import KeyValue
from pyocm.kube.selectors import parse_label_selector

KEYS = st.sampled_from(["app", "open-cluster-management.io/cluster-name", "tier", "x.io/y"])
VALUES = st.sampled_from(["a", "b", "sim-1", "sim-10", ""])
SELECTORS = st.sampled_from(
    [
        "app=a",
        "app==b",
        "app!=a",
        "app in (a,b)",
        "app notin (a)",
        "tier",
        "!tier",
        "open-cluster-management.io/cluster-name=sim-1",
        "x.io/y=,app",
        "app=a,tier in (b,sim-1)",
    ]
)


@given(
    labels=st.dictionaries(KEYS, VALUES, max_size=4),
    annotations=st.dictionaries(KEYS, VALUES, max_size=2),
    text=SELECTORS,
)
def test_the_prefilter_never_drops_a_match(
    labels: dict[str, str], annotations: dict[str, str], text: str
) -> None:
    selector = parse_label_selector(text)
    obj = {"metadata": {"name": "n", "labels": labels, "annotations": annotations}}
    value = codec.encode(obj)
    if selector.matches(labels):
        assert codec.may_match(value, codec.label_fragments(selector))


def test_the_prefilter_skips_objects_without_the_label() -> None:
    fragments = codec.label_fragments(
        parse_label_selector("open-cluster-management.io/cluster-name=sim-1")
    )
    mine = codec.encode(
        {"metadata": {"labels": {"open-cluster-management.io/cluster-name": "sim-1"}}}
    )
    other = codec.encode(
        {"metadata": {"labels": {"open-cluster-management.io/cluster-name": "sim-10"}}}
    )
    assert codec.may_match(mine, fragments)
    assert not codec.may_match(other, fragments)
    # Requirements met by an absent label need nothing in the bytes.
    assert codec.label_fragments(parse_label_selector("!tier,app notin (a)")) == ()


def test_decode_fills_the_resource_version_from_the_revision() -> None:
    value = codec.encode({"metadata": {"name": "n", "resourceVersion": "3"}})
    assert b"resourceVersion" not in value
    assert codec.decode(KeyValue("k", value, 7, 9))["metadata"]["resourceVersion"] == "9"


def test_stored_values_own_only_their_length() -> None:
    import tracemalloc

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        values = [codec.encode({"metadata": {"name": f"lease-{i}"}}) for i in range(1000)]
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(values) == 1000
    # About 100 bytes each with their object headers; orjson's own buffers are 4 KiB.
    assert held < 1000 * 512
