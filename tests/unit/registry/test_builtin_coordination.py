"""Lease strategy: MicroTime normalisation and spec validation."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.registry.builtin import coordination
from pyocm.apiserver.registry.strategy import Context
from pyocm.kube.status import ApiError, ErrorType

CTX = Context(user=UserInfo(name="agent"), namespace="cluster1")


def lease(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "managed-cluster-lease", "namespace": "cluster1"}, "spec": spec}


def test_micro_times_are_normalised_to_utc() -> None:
    obj = lease(
        renewTime="2026-01-02T05:04:05.123456+02:00", acquireTime="2026-01-02T03:04:05.000001Z"
    )
    coordination.LeaseStrategy().prepare_for_create(obj, CTX)
    assert obj["spec"] == {
        "renewTime": "2026-01-02T03:04:05.123456Z",
        "acquireTime": "2026-01-02T03:04:05.000001Z",
    }


def test_micro_time_without_six_digits_is_refused() -> None:
    with pytest.raises(ApiError) as caught:
        coordination.LeaseStrategy().prepare_for_update(
            lease(renewTime="2026-01-02T03:04:05Z"), lease(), CTX
        )
    assert caught.value.code == 400
    assert caught.value.message.startswith(
        'Lease in version "v1" cannot be handled as a Lease: parsing time'
    )


@pytest.mark.parametrize(
    ("spec", "messages"),
    [
        pytest.param(
            {"holderIdentity": "a", "leaseDurationSeconds": 60, "leaseTransitions": 0},
            [],
            id="valid",
        ),
        pytest.param(
            {"leaseDurationSeconds": 0},
            ["spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"],
            id="zero-duration",
        ),
        pytest.param(
            {"leaseTransitions": -1},
            ["spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0"],
            id="negative-transitions",
        ),
    ],
)
def test_spec_validation(spec: dict[str, Any], messages: list[str]) -> None:
    strategy = coordination.LeaseStrategy()
    assert [e.message() for e in strategy.validate_create(lease(**spec), CTX)] == messages
    errs = strategy.validate_update(lease(**spec), lease(), CTX)
    assert [e.message() for e in errs] == messages
    assert all(e.type is ErrorType.INVALID for e in errs)


def test_gated_fields_are_dropped_and_put_may_create() -> None:
    strategy = coordination.LeaseStrategy()
    obj = lease(holderIdentity="a", strategy="OldestEmulationVersion", preferredHolder="b")
    strategy.prepare_for_create(obj, CTX)
    assert obj["spec"] == {"holderIdentity": "a"}
    assert strategy.allow_create_on_update is True
    assert strategy.tracks_generation is False
