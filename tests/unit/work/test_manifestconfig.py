"""Which manifestConfigs entry configures a manifest, and the order manifests are applied in."""

from __future__ import annotations

from pyocm.api.models.work_v1 import ManifestWorkSpecManifestConfig
from pyocm.work.agent.manifestconfig import (
    UNLISTED_RANK,
    apply_order,
    find_manifest_config,
    wildcard_match,
)

DEPLOYMENTS = {"group": "apps", "resource": "deployments"}


def config(name: str, namespace: str, **rest: object) -> ManifestWorkSpecManifestConfig:
    return {"resourceIdentifier": {**DEPLOYMENTS, "name": name, "namespace": namespace}, **rest}  # type: ignore[typeddict-item]


def find(
    configs: list[ManifestWorkSpecManifestConfig], name: str = "web", namespace: str = "apps"
) -> ManifestWorkSpecManifestConfig | None:
    return find_manifest_config(
        group="apps", resource="deployments", namespace=namespace, name=name, configs=configs
    )


def test_wildcards_match_any_run_of_characters_and_nothing_else() -> None:
    assert wildcard_match("web", "*")
    assert wildcard_match("web-1", "web-*")
    assert wildcard_match("a.b", "a.b")
    assert not wildcard_match("axb", "a.b")  # a dot is a dot, not any character
    assert wildcard_match("team-a-web", "*-a-*")
    assert not wildcard_match("web", "web-*")
    assert not wildcard_match("", "x*")
    assert wildcard_match("", "*")


def test_no_matching_entry_or_an_empty_one_is_no_configuration() -> None:
    assert find([config("other", "apps", updateStrategy={"type": "CreateOnly"})]) is None
    assert find([config("web", "apps")]) is None
    # group and resource must be equal: no wildcard there
    wrong_group: ManifestWorkSpecManifestConfig = {
        "resourceIdentifier": {
            "group": "*",
            "resource": "deployments",
            "name": "*",
            "namespace": "*",
        },
        "updateStrategy": {"type": "CreateOnly"},
    }
    assert find([wrong_group]) is None


def test_first_match_of_each_part_wins_and_the_scrape_type_is_the_last_matchs() -> None:
    rules = [{"type": "WellKnownStatus"}]
    found = find(
        [
            config(
                "web*", "*", updateStrategy={"type": "ServerSideApply"}, feedbackScrapeType="Watch"
            ),
            config("*", "apps", updateStrategy={"type": "CreateOnly"}, feedbackRules=rules),
            config("nothing-*", "apps", feedbackRules=[{"type": "JSONPaths"}]),
        ]
    )
    assert found == {
        "resourceIdentifier": {**DEPLOYMENTS, "name": "web", "namespace": "apps"},
        "updateStrategy": {"type": "ServerSideApply"},
        "feedbackRules": rules,
    }


def test_cluster_scoped_resources_match_an_empty_namespace() -> None:
    entry = config("web", "", updateStrategy={"type": "ReadOnly"})
    assert find([entry], namespace="") is not None
    assert find([entry], namespace="apps") is None


def test_crds_and_namespaces_go_first_and_unknown_kinds_keep_their_order() -> None:
    manifests = [
        {"kind": "Widget"},  # an instance of the CRD below
        {"kind": "Deployment"},
        {"kind": "ConfigMap"},
        {"kind": "Gadget"},
        {"kind": "CustomResourceDefinition"},
        {"kind": "Namespace"},
        "not an object",
        {"kind": "ClusterRole"},
    ]
    assert apply_order(manifests) == [4, 5, 7, 2, 1, 0, 3, 6]
    assert UNLISTED_RANK == 1000
