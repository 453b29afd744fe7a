"""Field errors render as apimachinery renders them."""

from __future__ import annotations

from pyocm.kube import status


def test_values_are_echoed_except_where_apimachinery_omits_them() -> None:
    assert status.invalid("spec.x", "bad", "must be good").message() == 'spec.x: Invalid value: "bad": must be good'
    assert status.required("spec.y").message() == "spec.y: Required value"
    long = status.too_long("data", "s3cr3t" * 1000, 1024)
    assert long.message() == "data: Too long: may not be more than 1024 bytes"
    assert "s3cr3t" not in str(long.cause())


def test_status_omits_empty_details() -> None:
    assert "details" not in status.bad_request("nope").status()
    assert status.not_found(resource="widgets", group="example.com", name="w").status()["details"] == {
        "name": "w",
        "group": "example.com",
        "kind": "widgets",
    }
