"""The simulated status of workload kinds: kube's fields, types and reasons, messages
marked as simulated, and times that hold still when nothing changed."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from pyocm.kube import kinds
from pyocm.kube.workloadsim import (
    MARK,
    NOTE,
    SimulationError,
    qos_class,
    simulated_status,
    template_hash,
)

T0 = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)
T1 = T0 + timedelta(minutes=5)
T2 = T0 + timedelta(minutes=9)
STAMP0, STAMP1 = "2025-03-01T12:00:00Z", "2025-03-01T12:05:00Z"
TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "web"}},
    "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
}


def deployment(replicas: int | None = 1, *, generation: int = 1, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"template": copy.deepcopy(TEMPLATE), **spec}
    if replicas is not None:
        body["replicas"] = replicas
    return {
        "metadata": {"name": "web", "namespace": "default", "generation": generation},
        "spec": body,
    }


def settle(
    kind: kinds.Kind, obj: dict[str, Any], *, now: datetime = T0, nodes: int = 1
) -> dict[str, Any]:
    """``obj`` with its simulated status stored, as the controller leaves it."""
    status = simulated_status(kind, obj, nodes=nodes, now=now)
    assert status is not None
    return {**obj, "status": status}


def condition(status: dict[str, Any], type: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [c for c in status["conditions"] if c["type"] == type]
    assert len(found) == 1, status["conditions"]
    return found[0]


def test_a_deployment_is_available_and_progressed_with_kubes_reasons_marked_simulated() -> None:
    status = simulated_status(kinds.DEPLOYMENT, deployment(3, generation=4), nodes=1, now=T0)
    assert status is not None
    replica_set = f"web-{template_hash(TEMPLATE)}"
    assert {k: v for k, v in status.items() if k != "conditions"} == {
        "observedGeneration": 4,
        "replicas": 3,
        "updatedReplicas": 3,
        "readyReplicas": 3,
        "availableReplicas": 3,
    }
    assert status["conditions"] == [
        {
            "type": "Available",
            "status": "True",
            "reason": "MinimumReplicasAvailable",
            "message": "Deployment has minimum availability." + MARK,
            "lastUpdateTime": STAMP0,
            "lastTransitionTime": STAMP0,
        },
        {
            "type": "Progressing",
            "status": "True",
            "reason": "NewReplicaSetAvailable",
            "message": f'ReplicaSet "{replica_set}" has successfully progressed.' + MARK,
            "lastUpdateTime": STAMP0,
            "lastTransitionTime": STAMP0,
        },
    ]
    assert MARK == " (simulated by pyocm: this cluster has no kubelet)"


def test_replicas_default_to_one_and_zeros_are_left_out_as_kube_omits_them() -> None:
    one = simulated_status(kinds.DEPLOYMENT, deployment(None), nodes=1, now=T0)
    assert one is not None and one["replicas"] == one["availableReplicas"] == 1
    none = simulated_status(kinds.DEPLOYMENT, deployment(0), nodes=1, now=T0)
    assert none is not None
    assert set(none) == {"observedGeneration", "conditions"}
    assert condition(none, "Available")["status"] == "True"


def test_the_template_hash_has_kubes_form_and_follows_the_template() -> None:
    first = template_hash(TEMPLATE)
    assert first and set(first) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert template_hash(copy.deepcopy(TEMPLATE)) == first
    changed = copy.deepcopy(TEMPLATE)
    changed["spec"]["containers"][0]["image"] = "nginx:1.28"
    assert template_hash(changed) != first


def test_recomputing_an_unchanged_object_changes_nothing() -> None:
    cases = [
        (kinds.DEPLOYMENT, deployment(2)),
        (kinds.REPLICA_SET, deployment(2)),
        (kinds.STATEFUL_SET, deployment(2)),
        (kinds.DAEMON_SET, deployment(None)),
        (kinds.JOB, {"metadata": {"name": "pi", "generation": 1}, "spec": {"template": TEMPLATE}}),
        (kinds.POD, {"metadata": {"name": "p"}, "spec": TEMPLATE["spec"]}),
        (
            kinds.PERSISTENT_VOLUME_CLAIM,
            {
                "metadata": {"name": "c"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            },
        ),
    ]
    for kind, obj in cases:
        stored = settle(kind, obj, now=T0, nodes=2)
        again = simulated_status(kind, stored, nodes=2, now=T1)
        assert again == stored["status"], kind.kind


def test_a_scale_keeps_the_condition_times_and_a_new_template_names_the_new_replica_set() -> None:
    stored = settle(kinds.DEPLOYMENT, deployment(1))
    scaled = simulated_status(
        kinds.DEPLOYMENT,
        {**deployment(3, generation=2), "status": stored["status"]},
        nodes=1,
        now=T1,
    )
    assert scaled is not None
    assert scaled["readyReplicas"] == 3 and scaled["observedGeneration"] == 2
    assert scaled["conditions"] == stored["status"]["conditions"]

    moved = deployment(3, generation=3)
    moved["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    rolled = simulated_status(kinds.DEPLOYMENT, {**moved, "status": scaled}, nodes=1, now=T1)
    assert rolled is not None
    progressing = condition(rolled, "Progressing")
    assert f'"web-{template_hash(moved["spec"]["template"])}"' in progressing["message"]
    # Still True, so it did not transition; it was updated with the new message.
    assert (progressing["lastTransitionTime"], progressing["lastUpdateTime"]) == (STAMP0, STAMP1)
    assert condition(rolled, "Available") == condition(scaled, "Available")


def test_a_paused_deployment_says_so() -> None:
    stored = settle(kinds.DEPLOYMENT, deployment(2))
    paused = simulated_status(
        kinds.DEPLOYMENT,
        {**deployment(2, generation=2, paused=True), "status": stored["status"]},
        nodes=1,
        now=T1,
    )
    assert paused is not None
    progressing = condition(paused, "Progressing")
    assert (progressing["status"], progressing["reason"]) == ("Unknown", "DeploymentPaused")
    assert progressing["message"] == "Deployment is paused" + MARK
    assert progressing["lastTransitionTime"] == STAMP1


def test_replica_sets_stateful_sets_and_daemon_sets_report_kubes_fields() -> None:
    assert simulated_status(kinds.REPLICA_SET, deployment(2, generation=3), nodes=1, now=T0) == {
        "observedGeneration": 3,
        "replicas": 2,
        "fullyLabeledReplicas": 2,
        "readyReplicas": 2,
        "availableReplicas": 2,
    }
    assert simulated_status(kinds.REPLICA_SET, deployment(0), nodes=1, now=T0) == {
        "observedGeneration": 1,
        "replicas": 0,
    }
    revision = f"web-{template_hash(TEMPLATE)}"
    assert simulated_status(kinds.STATEFUL_SET, deployment(3), nodes=1, now=T0) == {
        "observedGeneration": 1,
        "replicas": 3,
        "readyReplicas": 3,
        "currentReplicas": 3,
        "updatedReplicas": 3,
        "availableReplicas": 3,
        "currentRevision": revision,
        "updateRevision": revision,
        "collisionCount": 0,
    }
    assert simulated_status(kinds.DAEMON_SET, deployment(None), nodes=3, now=T0) == {
        "observedGeneration": 1,
        "currentNumberScheduled": 3,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 3,
        "numberReady": 3,
        "updatedNumberScheduled": 3,
        "numberAvailable": 3,
    }


def job(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "pi", "namespace": "default", "generation": 1},
        "spec": {"template": TEMPLATE, **spec},
    }


def test_a_job_completes_as_kube_131_reports_it() -> None:
    status = simulated_status(kinds.JOB, job(completions=3, parallelism=2), nodes=1, now=T0)
    message = "Reached expected number of succeeded pods" + MARK
    assert status == {
        "conditions": [
            {
                "type": t,
                "status": "True",
                "reason": "CompletionsReached",
                "message": message,
                "lastProbeTime": STAMP0,
                "lastTransitionTime": STAMP0,
            }
            for t in ("SuccessCriteriaMet", "Complete")
        ],
        "startTime": STAMP0,
        "completionTime": STAMP0,
        "succeeded": 3,
        "ready": 0,
        "terminating": 0,
        "uncountedTerminatedPods": {},
    }


def test_job_completions_parallelism_and_indexes() -> None:
    def succeeded(**spec: Any) -> Any:
        status = simulated_status(kinds.JOB, job(**spec), nodes=1, now=T0)
        assert status is not None
        return status.get("succeeded"), status.get("completedIndexes"), "completionTime" in status

    assert succeeded() == (1, None, True)
    assert succeeded(parallelism=4) == (4, None, True)  # a work queue: every Pod succeeds
    assert succeeded(completions=0) == (None, None, True)
    assert succeeded(completions=1, completionMode="Indexed") == (1, "0", True)
    assert succeeded(completions=2, completionMode="Indexed") == (2, "0,1", True)
    assert succeeded(completions=5, completionMode="Indexed") == (5, "0-4", True)
    assert succeeded(completions=2, parallelism=0) == (None, None, False)  # no Pod may run


def test_a_suspended_job_waits_and_completes_once_resumed() -> None:
    suspended = settle(kinds.JOB, job(suspend=True))
    assert suspended["status"] == {
        "conditions": [
            {
                "type": "Suspended",
                "status": "True",
                "reason": "JobSuspended",
                "message": "Job suspended" + MARK,
                "lastProbeTime": STAMP0,
                "lastTransitionTime": STAMP0,
            }
        ],
        "ready": 0,
        "terminating": 0,
        "uncountedTerminatedPods": {},
    }
    resumed = simulated_status(
        kinds.JOB, {**job(suspend=False), "status": suspended["status"]}, nodes=1, now=T1
    )
    assert resumed is not None
    assert [(c["type"], c["status"], c["reason"]) for c in resumed["conditions"]] == [
        ("Suspended", "False", "JobResumed"),
        ("SuccessCriteriaMet", "True", "CompletionsReached"),
        ("Complete", "True", "CompletionsReached"),
    ]
    assert resumed["startTime"] == resumed["completionTime"] == STAMP1
    # Finished is finished: suspending it now changes nothing.
    again = simulated_status(kinds.JOB, {**job(suspend=True), "status": resumed}, nodes=1, now=T2)
    assert again == resumed


def pod(*containers: dict[str, Any], init: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": list(containers)}
    if init is not None:
        spec["initContainers"] = init
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": spec}


def test_a_pod_runs_ready_with_its_containers_sorted_by_name() -> None:
    status = simulated_status(
        kinds.POD,
        pod({"name": "b", "image": "nginx"}, {"name": "a", "image": "redis:7"}),
        nodes=1,
        now=T0,
    )
    assert status is not None
    assert status["phase"] == "Running"
    assert [(c["type"], c["status"]) for c in status["conditions"]] == [
        ("PodReadyToStartContainers", "True"),
        ("Initialized", "True"),
        ("Ready", "True"),
        ("ContainersReady", "True"),
        ("PodScheduled", "True"),
    ]
    assert all(
        c["message"] == NOTE and c["lastTransitionTime"] == STAMP0 for c in status["conditions"]
    )
    assert (status["hostIP"], status["podIP"], status["startTime"]) == (
        "127.0.0.1",
        "127.0.0.1",
        STAMP0,
    )
    assert status["hostIPs"] == status["podIPs"] == [{"ip": "127.0.0.1"}]
    assert status["qosClass"] == "BestEffort"
    assert status["containerStatuses"] == [
        {
            "name": name,
            "image": image,
            "imageID": "",
            "ready": True,
            "started": True,
            "restartCount": 0,
            "lastState": {},
            "state": {"running": {"startedAt": STAMP0}},
        }
        for name, image in (("a", "redis:7"), ("b", "nginx"))
    ]


def test_init_containers_have_completed_and_sidecars_run() -> None:
    status = simulated_status(
        kinds.POD,
        pod(
            {"name": "app", "image": "app"},
            init=[
                {"name": "setup", "image": "busybox"},
                {"name": "proxy", "image": "envoy", "restartPolicy": "Always"},
            ],
        ),
        nodes=1,
        now=T0,
    )
    assert status is not None
    setup, proxy = status["initContainerStatuses"]
    assert (setup["name"], setup["ready"], setup["started"]) == ("setup", True, False)
    assert setup["state"] == {
        "terminated": {
            "exitCode": 0,
            "reason": "Completed",
            "startedAt": STAMP0,
            "finishedAt": STAMP0,
        }
    }
    assert (proxy["name"], proxy["started"], proxy["state"]) == (
        "proxy",
        True,
        {"running": {"startedAt": STAMP0}},
    )


def test_a_new_image_restarts_its_container_and_leaves_the_others_alone() -> None:
    stored = settle(kinds.POD, pod({"name": "a", "image": "v1"}, {"name": "b", "image": "v1"}))
    changed = pod({"name": "a", "image": "v2"}, {"name": "b", "image": "v1"})
    status = simulated_status(kinds.POD, {**changed, "status": stored["status"]}, nodes=1, now=T1)
    assert status is not None
    a, b = status["containerStatuses"]
    assert (a["image"], a["restartCount"], a["state"]["running"]["startedAt"]) == ("v2", 1, STAMP1)
    assert b == stored["status"]["containerStatuses"][1]
    assert status["startTime"] == STAMP0 and status["conditions"] == stored["status"]["conditions"]


def resources(**amounts: dict[str, Any]) -> dict[str, Any]:
    return {"name": "c", "image": "i", "resources": amounts}


@pytest.mark.parametrize(
    ("containers", "init", "expected"),
    [
        pytest.param([resources()], [], "BestEffort", id="nothing"),
        pytest.param(
            [resources(requests={"ephemeral-storage": "1Gi"})],
            [],
            "BestEffort",
            id="only-other-resources",
        ),
        pytest.param([resources(requests={"cpu": "0"})], [], "BestEffort", id="zero-request"),
        pytest.param([resources(requests={"cpu": "100m"})], [], "Burstable", id="request"),
        pytest.param(
            [resources(limits={"cpu": "1", "memory": "1Gi"})],
            [],
            "Guaranteed",
            id="limits-default-requests",
        ),
        pytest.param(
            [
                resources(
                    limits={"cpu": 1, "memory": "1Gi"},
                    requests={"cpu": "1000m", "memory": "1024Mi"},
                )
            ],
            [],
            "Guaranteed",
            id="equal-in-other-units",
        ),
        pytest.param(
            [resources(limits={"cpu": "1", "memory": "1Gi"}, requests={"cpu": "500m"})],
            [],
            "Burstable",
            id="request-below-limit",
        ),
        pytest.param([resources(limits={"cpu": "1"})], [], "Burstable", id="cpu-limit-only"),
        pytest.param(
            [resources(limits={"cpu": "1", "memory": "1Gi"}), resources()],
            [],
            "Burstable",
            id="one-container-unlimited",
        ),
        pytest.param(
            [resources(limits={"cpu": "1", "memory": "1Gi"})],
            [resources()],
            "Burstable",
            id="init-container-unlimited",
        ),
        pytest.param(
            [resources(limits={"cpu": "1", "memory": "1Gi"})],
            [resources(limits={"cpu": "2", "memory": "1Gi"})],
            "Guaranteed",
            id="init-container-guaranteed",
        ),
    ],
)
def test_qos_class_as_kube_computes_it(
    containers: list[dict[str, Any]], init: list[dict[str, Any]], expected: str
) -> None:
    assert qos_class({"containers": containers, "initContainers": init}) == expected


def test_a_claim_is_bound_with_what_it_asked_for() -> None:
    claim = {
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1.5Gi"}}},
    }
    assert simulated_status(kinds.PERSISTENT_VOLUME_CLAIM, claim, nodes=1, now=T0) == {
        "phase": "Bound",
        "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "1536Mi"},  # printed as kube prints the quantity
    }


@pytest.mark.parametrize(
    "kind",
    [
        kinds.SERVICE,
        kinds.ENDPOINTS,
        kinds.CRON_JOB,
        kinds.POD_DISRUPTION_BUDGET,
        kinds.NETWORK_POLICY,
        kinds.INGRESS,
        kinds.CONFIGMAP,
    ],
    ids=lambda k: k.kind,
)
def test_kinds_without_an_honest_simulation_get_none(kind: kinds.Kind) -> None:
    service = {"metadata": {"name": "lb"}, "spec": {"type": "LoadBalancer"}}
    assert simulated_status(kind, service, nodes=1, now=T0) is None


@pytest.mark.parametrize(
    ("kind", "obj", "message"),
    [
        pytest.param(
            kinds.DEPLOYMENT, {"metadata": {}}, "a Deployment needs metadata.name", id="no-name"
        ),
        pytest.param(
            kinds.DEPLOYMENT,
            {"metadata": {"name": "d"}, "spec": []},
            "Deployment d: spec must be an object",
            id="spec-list",
        ),
        pytest.param(
            kinds.DEPLOYMENT,
            {"metadata": {"name": "d"}, "spec": {"replicas": "3"}},
            "Deployment d: spec.replicas must be a non-negative integer",
            id="replicas-text",
        ),
        pytest.param(
            kinds.STATEFUL_SET,
            {"metadata": {"name": "s"}, "spec": {"replicas": -1}},
            "StatefulSet s: spec.replicas must be a non-negative integer",
            id="negative",
        ),
        pytest.param(
            kinds.JOB,
            {"metadata": {"name": "j"}, "spec": {"completions": True}},
            "Job j: spec.completions must be a non-negative integer",
            id="bool",
        ),
        pytest.param(
            kinds.POD,
            {"metadata": {"name": "p"}, "spec": {"containers": []}},
            "Pod p: spec.containers must list at least one container",
            id="no-containers",
        ),
        pytest.param(
            kinds.POD,
            {"metadata": {"name": "p"}, "spec": {"containers": [{"image": "x"}]}},
            r"Pod p: spec.containers\[0\] needs a name",
            id="nameless",
        ),
        pytest.param(
            kinds.POD,
            {
                "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "lots"}}}]},
            },
            "cpu: quantities must match",
            id="bad-quantity",
        ),
        pytest.param(
            kinds.DEPLOYMENT,
            {"metadata": {"name": "d", "generation": "1"}},
            "Deployment d: metadata.generation must be an integer",
            id="generation",
        ),
    ],
)
def test_bad_objects_get_clear_errors(kind: kinds.Kind, obj: dict[str, Any], message: str) -> None:
    with pytest.raises(SimulationError, match=message):
        simulated_status(kind, obj, nodes=1, now=T0)


def test_a_negative_node_count_is_refused() -> None:
    with pytest.raises(ValueError, match="no negative node count"):
        simulated_status(kinds.DAEMON_SET, deployment(None), nodes=-1, now=T0)


def test_an_unreadable_previous_status_only_loses_its_times() -> None:
    obj = {**deployment(1), "status": {"conditions": "garbage"}}
    assert simulated_status(kinds.DEPLOYMENT, obj, nodes=1, now=T0) == simulated_status(
        kinds.DEPLOYMENT, deployment(1), nodes=1, now=T0
    )
    obj = {**deployment(1), "status": "garbage"}
    assert simulated_status(kinds.DEPLOYMENT, obj, nodes=1, now=T0) == simulated_status(
        kinds.DEPLOYMENT, deployment(1), nodes=1, now=T0
    )
