"""An add-on's Available condition from its deploy works, as addon-framework's health
check tells it, and the pre-delete hook's completion."""

from __future__ import annotations

from typing import Any

import pytest

from pyocm.addon.agent import (
    AgentAddonOptions,
    FieldResult,
    HealthProberType,
    ProbeField,
    Unhealthy,
    WorkHealthProber,
)
from pyocm.addon.deploy import health, hooks, probes
from pyocm.addon.deploy.health import Verdict

Obj = dict[str, Any]
PREFIX = "addon-hello-deploy"
APPLIED = {"type": "ManifestApplied", "status": "True", "reason": "r", "message": "m"}


def mca(*conditions: Obj) -> Any:
    return {
        "metadata": {"name": "hello", "namespace": "c1"},
        "status": {"conditions": list(conditions)},
    }


def cluster(available: str = "True") -> Any:
    condition = {"type": "ManagedClusterConditionAvailable", "status": available}
    return {"metadata": {"name": "c1"}, "status": {"conditions": [condition]}}


def integer(name: str, value: int) -> Obj:
    return {"name": name, "fieldValue": {"type": "Integer", "integer": value}}


def status_of(resource: str, name: str, *values: Obj, group: str = "apps") -> Obj:
    meta = {"group": group, "resource": resource, "name": name, "namespace": "agent", "ordinal": 0}
    return {"resourceMeta": meta, "conditions": [], "statusFeedback": {"values": list(values)}}


def work(
    *manifests: Obj, available: str | None = "True", name: str = "addon-hello-deploy-0"
) -> Any:
    conditions = (
        [] if available is None else [{"type": "Available", "status": available, "message": "why"}]
    )
    return {
        "metadata": {"name": name, "namespace": "c1"},
        "status": {"conditions": conditions, "resourceStatus": {"manifests": list(manifests)}},
    }


def deployment(name: str, replicas: int | None = None) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "agent"},
        "spec": {} if replicas is None else {"replicas": replicas},
    }


def daemonset(name: str) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "agent"},
    }


def verdict(
    options: AgentAddonOptions,
    works: list[Any],
    objects: list[Obj],
    *,
    addon: Any = None,
    on: Any = None,
) -> Verdict | None:
    return health.available(
        options,
        mca=addon if addon is not None else mca(APPLIED),
        cluster=on if on is not None else cluster(),
        works=works,
        deploy_prefix=PREFIX,
        fields=lambda: probes.probe_fields(options, objects),
    )


WORKLOAD = AgentAddonOptions(name="hello", health=HealthProberType.WORKLOAD_AVAILABILITY)
DEPLOYMENT = AgentAddonOptions(name="hello", health=HealthProberType.DEPLOYMENT_AVAILABILITY)
AVAILABLE = Verdict("True", "ProbeAvailable", "hello add-on is available.")


@pytest.mark.parametrize(
    ("prober", "mode"),
    [
        (HealthProberType.WORK, "Customized"),
        (HealthProberType.NONE, "Customized"),
        (HealthProberType.DEPLOYMENT_AVAILABILITY, "Customized"),
        (HealthProberType.WORKLOAD_AVAILABILITY, "Customized"),
        (HealthProberType.LEASE, "Lease"),
        (None, None),
    ],
)
def test_the_health_check_mode_follows_the_prober(
    prober: HealthProberType | None, mode: str | None
) -> None:
    assert health.mode_for(prober) == mode


def test_a_work_prober_without_probe_is_available_once_deployed() -> None:
    options = AgentAddonOptions(name="hello", health=HealthProberType.WORK)
    assert verdict(options, [], [], addon=mca()) == Verdict(
        "True", "WorkApplied", "Addon manifestWork is applied"
    )


@pytest.mark.parametrize("prober", [None, HealthProberType.NONE, HealthProberType.LEASE])
def test_other_probers_leave_available_alone(prober: HealthProberType | None) -> None:
    options = AgentAddonOptions(name="hello", health=prober)
    assert verdict(options, [], []) is None


def test_probing_waits_for_manifest_applied_and_a_known_cluster() -> None:
    assert verdict(WORKLOAD, [], [], addon=mca()) is None
    assert verdict(WORKLOAD, [], [], on=cluster("Unknown")) is None
    assert verdict(WORKLOAD, [], [], on=cluster("False")) == Verdict(
        "Unknown", "WorkNotFound", "Addon manifestWork is not found"
    )


def test_a_work_not_yet_available_is_not_applied() -> None:
    assert verdict(WORKLOAD, [work(available=None)], []) == Verdict(
        "Unknown", "WorkNotApplied", "Addon manifestWork is not applied yet"
    )
    assert verdict(WORKLOAD, [work(available="False")], []) == Verdict(
        "False", "WorkNotApplied", "why"
    )
    # Works of the add-on that are not deploy works are not looked at.
    assert verdict(WORKLOAD, [work(available=None, name="other")], []) == AVAILABLE


def test_probed_fields_without_feedback_are_no_result() -> None:
    works = [work(status_of("deployments", "d"))]
    assert verdict(WORKLOAD, works, [deployment("d")]) == Verdict(
        "Unknown", "NoProbeResult", "Probe results are not returned"
    )


@pytest.mark.parametrize(
    ("values", "result"),
    [
        ((integer("Replicas", 2), integer("ReadyReplicas", 1)), AVAILABLE),
        ((integer("Replicas", 0), integer("ReadyReplicas", 0)), AVAILABLE),
        (
            (integer("Replicas", 2), integer("ReadyReplicas", 0)),
            Verdict(
                "False",
                "ProbeUnavailable",
                "Probe addon unavailable with err desiredNumberReplicas is 2 but readyReplica "
                "is 0 for deployments agent/d",
            ),
        ),
        (
            (integer("Replicas", 2),),
            Verdict(
                "False",
                "ProbeUnavailable",
                "Probe addon unavailable with err readyReplica is not probed",
            ),
        ),
    ],
)
def test_a_deployment_is_available_with_one_ready_replica_or_none_wanted(
    values: tuple[Obj, ...], result: Verdict
) -> None:
    works = [work(status_of("deployments", "d", *values))]
    assert verdict(DEPLOYMENT, works, [deployment("d")]) == result


def test_a_daemonset_is_available_when_all_scheduled_are_ready() -> None:
    ready = status_of(
        "daemonsets", "ds", integer("DesiredNumberScheduled", 3), integer("NumberReady", 3)
    )
    short = status_of(
        "daemonsets", "ds", integer("DesiredNumberScheduled", 3), integer("NumberReady", 2)
    )
    assert verdict(WORKLOAD, [work(ready)], [daemonset("ds")]) == AVAILABLE
    assert verdict(WORKLOAD, [work(short)], [daemonset("ds")]) == Verdict(
        "False",
        "ProbeUnavailable",
        "Probe addon unavailable with err desiredNumberReplicas is 3 but readyReplica is 2 "
        "for daemonsets agent/ds",
    )
    # The Deployment prober does not look at DaemonSets.
    assert verdict(DEPLOYMENT, [work(short)], [daemonset("ds")]) == AVAILABLE


def test_results_over_several_works_are_judged_together() -> None:
    good = status_of("deployments", "a", integer("Replicas", 1), integer("ReadyReplicas", 1))
    bad = status_of("deployments", "b", integer("Replicas", 1), integer("ReadyReplicas", 0))
    works = [work(good), work(bad, name="addon-hello-deploy-1")]
    found = verdict(DEPLOYMENT, works, [deployment("a"), deployment("b")])
    assert found is not None and found.reason == "ProbeUnavailable"
    # Partial results are judged: a probe without feedback does not block the others.
    partial = [work(good), work(status_of("deployments", "b"), name="addon-hello-deploy-1")]
    assert verdict(DEPLOYMENT, partial, [deployment("a"), deployment("b")]) == AVAILABLE


def test_a_work_prober_matches_wildcards_and_uses_its_checker() -> None:
    seen: list[FieldResult] = []

    def checker(results: Any, _cluster: Any, _mca: Any) -> None:
        seen.extend(results)
        if len(results) < 2:
            raise Unhealthy("want two")

    field = ProbeField(
        {"group": "apps", "resource": "deployments", "name": "agent-*", "namespace": "*"}, []
    )
    options = AgentAddonOptions(
        name="hello", health=HealthProberType.WORK, work_prober=WorkHealthProber([field], checker)
    )
    one = status_of("deployments", "agent-a", integer("Replicas", 1))
    other = status_of("deployments", "b", integer("Replicas", 1))
    assert verdict(options, [work(one, other)], []) == Verdict(
        "False", "ProbeUnavailable", "Probe addon unavailable with err want two"
    )
    assert [r.resource["name"] for r in seen] == ["agent-a"]
    two = status_of("deployments", "agent-b", integer("Replicas", 1))
    assert verdict(options, [work(one, two)], []) == AVAILABLE


def test_unsupported_resources_are_unavailable_to_the_workload_checker() -> None:
    result = FieldResult({"group": "apps", "resource": "statefulsets", "name": "s"}, {"values": []})
    with pytest.raises(Unhealthy, match="unsupported resource type statefulsets"):
        health.workload_availability([result], cluster(), mca())


def hook_work(*manifests: Obj, available: str = "True") -> Any:
    configs = [
        {
            "resourceIdentifier": {
                "group": "batch",
                "resource": "jobs",
                "name": "j",
                "namespace": "agent",
            }
        },
        {
            "resourceIdentifier": {
                "group": "",
                "resource": "pods",
                "name": "p",
                "namespace": "agent",
            }
        },
    ]
    found = work(*manifests, available=available)
    found["spec"] = {"manifestConfigs": configs}
    return found


def string(name: str, value: str) -> Obj:
    return {"name": name, "fieldValue": {"type": "String", "string": value}}


def test_a_hook_work_completes_when_jobs_complete_and_pods_succeed() -> None:
    job_done = status_of("jobs", "j", string("JobComplete", "True"), group="batch")
    pod_done = status_of("pods", "p", string("PodPhase", "Succeeded"), group="")
    pod_running = status_of("pods", "p", string("PodPhase", "Running"), group="")
    assert hooks.completed(hook_work(job_done, pod_done))
    assert not hooks.completed(hook_work(job_done, pod_running))
    assert not hooks.completed(hook_work(job_done, pod_done, available="False"))
    # Upstream's search stops at the first manifest without feedback.
    assert not hooks.completed(hook_work(status_of("jobs", "x", group="batch"), job_done, pod_done))


def test_the_pre_delete_finalizer_replaces_deprecated_ones() -> None:
    addon: Any = {
        "metadata": {"finalizers": ["cluster.open-cluster-management.io/addon-pre-delete", "x"]}
    }
    assert hooks.add_finalizer(addon)
    assert addon["metadata"]["finalizers"] == [
        "x",
        "addon.open-cluster-management.io/addon-pre-delete",
    ]
    assert not hooks.add_finalizer(addon)
    assert hooks.remove_finalizer(addon)
    assert addon["metadata"]["finalizers"] == ["x"]
    assert not hooks.remove_finalizer(addon)
