"""Looking kinds up by group, version and kind, as controllers will."""

from __future__ import annotations

import re

import pytest

from pyocm.api import addon_v1alpha1, addon_v1beta1, catalog, cluster_v1beta2, wellknown


def test_find_returns_the_descriptor_of_that_version() -> None:
    found = catalog.find(group=wellknown.ADDON_GROUP, version="v1beta1", kind="ManagedClusterAddOn")
    assert found is addon_v1beta1.MANAGED_CLUSTER_ADDON
    assert (found.plural, found.namespaced, found.short_names) == (
        "managedclusteraddons",
        True,
        ("mca", "mcas"),
    )


def test_find_unknown_kind_raises_key_error() -> None:
    with pytest.raises(
        KeyError, match=re.escape("cluster.open-cluster-management.io/v1, Kind=Nope")
    ):
        catalog.find(group=wellknown.CLUSTER_GROUP, version="v1", kind="Nope")


@pytest.mark.parametrize(
    ("plural", "versions", "storage"),
    [
        pytest.param(
            "clustermanagementaddons",
            ["v1alpha1", "v1beta1"],
            addon_v1alpha1.CLUSTER_MANAGEMENT_ADDON,
            id="cma",
        ),
        pytest.param(
            "addontemplates", ["v1alpha1"], addon_v1alpha1.ADDON_TEMPLATE, id="addon-template"
        ),
    ],
)
def test_versions_and_storage_version(plural: str, versions: list[str], storage: object) -> None:
    found = catalog.versions_of(group=wellknown.ADDON_GROUP, plural=plural)
    assert [d.version for d in found] == versions
    assert catalog.storage_version(group=wellknown.ADDON_GROUP, plural=plural) is storage


def test_versions_of_unknown_resource_raises_key_error() -> None:
    with pytest.raises(KeyError, match=re.escape("nothings.addon.open-cluster-management.io")):
        catalog.versions_of(group=wellknown.ADDON_GROUP, plural="nothings")


def test_descriptors_compare_by_identity_not_schema() -> None:
    found = catalog.find(group=wellknown.CLUSTER_GROUP, version="v1beta2", kind="ManagedClusterSet")
    assert found == cluster_v1beta2.MANAGED_CLUSTER_SET
    assert hash(found) == hash(cluster_v1beta2.MANAGED_CLUSTER_SET)
    assert found.list_kind == "ManagedClusterSetList"
