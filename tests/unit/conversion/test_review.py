"""A ConversionReview answered with the same converters the hub serves with."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.hooks.conversion.review import review

Obj = dict[str, Any]
ALPHA = "addon.open-cluster-management.io/v1alpha1"
BETA = "addon.open-cluster-management.io/v1beta1"


def request(desired: str, *objects: Obj, api_version: str = "apiextensions.k8s.io/v1") -> Obj:
    return {
        "apiVersion": api_version,
        "kind": "ConversionReview",
        "request": {"uid": "u-1", "desiredAPIVersion": desired, "objects": list(objects)},
    }


def test_review_converts_every_object_in_order() -> None:
    objects = [
        {
            "apiVersion": ALPHA,
            "kind": "ClusterManagementAddOn",
            "metadata": {"name": f"a{i}"},
            "spec": {"supportedConfigs": [{"group": "g", "resource": "r"}]},
        }
        for i in range(2)
    ]
    answer = review(request(BETA, *objects, api_version="apiextensions.k8s.io/v1beta1"))
    assert answer["apiVersion"] == "apiextensions.k8s.io/v1beta1"
    assert answer["kind"] == "ConversionReview"
    response = answer["response"]
    assert response["uid"] == "u-1"
    assert response["result"] == {"status": "Success"}
    assert [o["metadata"]["name"] for o in response["convertedObjects"]] == ["a0", "a1"]
    assert all(o["apiVersion"] == BETA for o in response["convertedObjects"])
    assert response["convertedObjects"][0]["spec"] == {
        "defaultConfigs": [{"group": "g", "resource": "r", "name": "__reserved_no_default__"}]
    }


def test_review_failure_carries_the_message_and_no_objects() -> None:
    obj = {"apiVersion": ALPHA, "kind": "ManagedClusterAddOn", "metadata": {"name": "m"}}
    response = review(request("addon.open-cluster-management.io/v2", obj))["response"]
    assert response["uid"] == "u-1"
    assert response["result"]["status"] == "Failure"
    assert "unknown version 'v2'" in response["result"]["message"]
    assert "convertedObjects" not in response


def test_review_refuses_another_group() -> None:
    obj = {"apiVersion": ALPHA, "kind": "ManagedClusterAddOn", "metadata": {"name": "m"}}
    response = review(request("example.com/v1beta1", obj))["response"]
    assert response["result"]["status"] == "Failure"


@pytest.mark.parametrize(
    "document",
    [
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"},
        {"apiVersion": "v1", "kind": "ConversionReview", "request": {}},
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "Other", "request": {}},
    ],
)
def test_not_a_review_request(document: Obj) -> None:
    with pytest.raises(ValueError):
        review(document)
