"""Workload and service kinds: the defaults and initial status a new object gets, as
kube-apiserver 1.30 shows them back (``kubectl get -o yaml`` of a fresh object)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.registry.builtin import workloads
from pyocm.apiserver.registry.resources import ResourceInfo
from pyocm.apiserver.registry.strategy import Context

CTX = Context(user=UserInfo(name="admin"), namespace="default")
TABLE = {r.kind: r for r in workloads.workload_resources()}
CONTAINER_DEFAULTS = {
    "resources": {},
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
}
POD_SPEC_DEFAULTS = {
    "dnsPolicy": "ClusterFirst",
    "restartPolicy": "Always",
    "schedulerName": "default-scheduler",
    "securityContext": {},
    "terminationGracePeriodSeconds": 30,
}

Obj = dict[str, Any]


def created(kind: str, body: Obj, *, name: str = "x") -> Obj:
    """``body`` as the store prepares it for create (uid set first, as the store does)."""
    obj = copy.deepcopy(body)
    obj["metadata"] = {
        "name": name,
        "namespace": "default",
        "uid": "u-1",
        **body.get("metadata", {}),
    }
    info: ResourceInfo = TABLE[kind]
    info.strategy.prepare_for_create(obj, CTX)
    return obj


def template(**spec: Any) -> Obj:
    return {
        "metadata": {"labels": {"app": "a"}},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}], **spec},
    }


def test_deployment_gets_kubes_defaults_and_an_empty_status() -> None:
    obj = created(
        "Deployment", {"spec": {"selector": {"matchLabels": {"app": "a"}}, "template": template()}}
    )
    spec = obj["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert (spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (10, 600)
    pod = spec["template"]["spec"]
    assert {k: pod[k] for k in POD_SPEC_DEFAULTS} == POD_SPEC_DEFAULTS
    assert pod["containers"] == [
        {
            "name": "c",
            "image": "nginx:1.25",
            "imagePullPolicy": "IfNotPresent",
            **CONTAINER_DEFAULTS,
        }
    ]
    assert obj["status"] == {}


def test_recreate_deployments_get_no_rolling_update() -> None:
    body = {"spec": {"strategy": {"type": "Recreate"}, "template": template()}}
    assert created("Deployment", body)["spec"]["strategy"] == {"type": "Recreate"}


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("registry:5000/team/nginx", "Always"),
        ("registry:5000/team/nginx:1.2", "IfNotPresent"),
        ("nginx@sha256:" + "a" * 64, "IfNotPresent"),
        ("nginx:1.2@sha256:" + "a" * 64, "IfNotPresent"),
    ],
)
def test_image_pull_policy_follows_the_tag(image: str, policy: str) -> None:
    obj = created("Pod", {"spec": {"containers": [{"name": "c", "image": image}]}})
    assert obj["spec"]["containers"][0]["imagePullPolicy"] == policy


def test_given_values_are_kept() -> None:
    body = {
        "spec": {
            "replicas": 0,
            "revisionHistoryLimit": 0,
            "template": template(restartPolicy="Never", terminationGracePeriodSeconds=0),
        }
    }
    spec = created("Deployment", body)["spec"]
    assert (spec["replicas"], spec["revisionHistoryLimit"]) == (0, 0)
    assert spec["template"]["spec"]["restartPolicy"] == "Never"
    assert spec["template"]["spec"]["terminationGracePeriodSeconds"] == 0


def test_ports_probes_volumes_and_env_are_defaulted() -> None:
    container = {
        "name": "c",
        "image": "nginx",
        "ports": [{"containerPort": 80}],
        "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "livenessProbe": {"httpGet": {"port": 80}},
    }
    volumes = [{"name": "scratch"}, {"name": "conf", "configMap": {"name": "cm"}}]
    pod = created("Pod", {"spec": {"containers": [container], "volumes": volumes}})["spec"]
    got = pod["containers"][0]
    assert got["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert got["env"][0]["valueFrom"]["fieldRef"] == {
        "fieldPath": "metadata.name",
        "apiVersion": "v1",
    }
    assert got["livenessProbe"] == {
        "httpGet": {"port": 80, "path": "/", "scheme": "HTTP"},
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    assert pod["volumes"] == [
        {"name": "scratch", "emptyDir": {}},
        {"name": "conf", "configMap": {"name": "cm", "defaultMode": 420}},
    ]


def test_pods_get_admission_defaults_and_a_pending_status() -> None:
    pod = created("Pod", {"spec": {"containers": [{"name": "c", "image": "nginx"}]}})
    spec = pod["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("default", "default")
    assert (spec["priority"], spec["preemptionPolicy"]) == (0, "PreemptLowerPriority")
    assert spec["enableServiceLinks"] is True
    assert [t["key"] for t in spec["tolerations"]] == [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ]
    assert all(t["tolerationSeconds"] == 300 for t in spec["tolerations"])
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


@pytest.mark.parametrize(
    ("resources", "qos"),
    [
        ({"limits": {"cpu": "1", "memory": "1Gi"}}, "Guaranteed"),
        (
            {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
            "Guaranteed",
        ),
        ({"requests": {"cpu": "500m"}, "limits": {"cpu": "1", "memory": "1Gi"}}, "Burstable"),
        ({"requests": {"cpu": "100m"}}, "Burstable"),
        ({"limits": {"cpu": "1"}}, "Burstable"),
    ],
)
def test_qos_class(resources: Obj, qos: str) -> None:
    container = {"name": "c", "image": "nginx", "resources": resources}
    pod = created("Pod", {"spec": {"containers": [container]}})
    assert pod["status"]["qosClass"] == qos


def test_requests_default_to_limits_on_pods_only() -> None:
    limits = {"limits": {"cpu": "1"}}
    pod = created(
        "Pod", {"spec": {"containers": [{"name": "c", "image": "i", "resources": limits}]}}
    )
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1"}
    deployment = created(
        "Deployment",
        {
            "spec": {
                "template": template(containers=[{"name": "c", "image": "i", "resources": limits}])
            }
        },
    )
    assert "requests" not in deployment["spec"]["template"]["spec"]["containers"][0]["resources"]


def test_job_gets_defaults_and_a_generated_selector() -> None:
    body = {
        "spec": {
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}
            }
        }
    }
    job = created("Job", body, name="pi")
    spec = job["spec"]
    assert (spec["backoffLimit"], spec["completions"], spec["parallelism"]) == (6, 1, 1)
    assert (spec["completionMode"], spec["suspend"]) == ("NonIndexed", False)
    assert spec["podReplacementPolicy"] == "TerminatingOrFailed"
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}}
    assert spec["template"]["metadata"]["labels"] == {
        "job-name": "pi",
        "batch.kubernetes.io/job-name": "pi",
        "controller-uid": "u-1",
        "batch.kubernetes.io/controller-uid": "u-1",
    }
    # The template had no labels, so the Job's own stay unset (kube shares the map only
    # when the template brought one).
    assert "labels" not in job["metadata"]


def test_job_without_labels_takes_its_templates_with_the_generated_ones() -> None:
    body = {
        "spec": {"template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": []}}}
    }
    job = created("Job", body, name="pi")
    assert job["metadata"]["labels"] == job["spec"]["template"]["metadata"]["labels"]
    assert job["metadata"]["labels"]["app"] == "a"
    assert job["metadata"]["labels"]["batch.kubernetes.io/job-name"] == "pi"


def test_parallel_jobs_keep_completions_unset() -> None:
    job = created("Job", {"spec": {"parallelism": 3, "template": template()}})
    assert "completions" not in job["spec"] and job["spec"]["parallelism"] == 3


def test_manual_selector_is_not_generated() -> None:
    selector = {"matchLabels": {"app": "a"}}
    job = created(
        "Job", {"spec": {"manualSelector": True, "selector": selector, "template": template()}}
    )
    assert job["spec"]["selector"] == selector
    assert job["spec"]["template"]["metadata"]["labels"] == {"app": "a"}


def test_stateful_set_and_daemon_set_defaults_and_status() -> None:
    sts = created(
        "StatefulSet",
        {
            "spec": {
                "template": template(),
                "volumeClaimTemplates": [{"metadata": {"name": "d"}, "spec": {}}],
            }
        },
    )
    spec = sts["spec"]
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {
        "whenDeleted": "Retain",
        "whenScaled": "Retain",
    }
    assert (spec["replicas"], spec["revisionHistoryLimit"]) == (1, 10)
    assert spec["volumeClaimTemplates"][0] == {
        "metadata": {"name": "d"},
        "spec": {"volumeMode": "Filesystem"},
        "status": {"phase": "Pending"},
    }
    assert sts["status"] == {"replicas": 0, "availableReplicas": 0}
    ds = created("DaemonSet", {"spec": {"template": template()}})
    assert ds["spec"]["updateStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    }
    assert ds["status"] == {
        "currentNumberScheduled": 0,
        "numberMisscheduled": 0,
        "desiredNumberScheduled": 0,
        "numberReady": 0,
    }


def test_cron_job_defaults() -> None:
    cj = created(
        "CronJob",
        {"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template()}}}},
    )
    spec = cj["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"]) == ("Allow", False)
    assert (spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (3, 1)
    assert spec["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirst"
    assert "backoffLimit" not in spec["jobTemplate"]["spec"]


def test_service_defaults() -> None:
    svc = created(
        "Service",
        {
            "spec": {
                "selector": {"app": "a"},
                "ports": [{"port": 80}, {"port": 443, "targetPort": "https"}],
            }
        },
    )
    spec = svc["spec"]
    assert (spec["type"], spec["sessionAffinity"], spec["internalTrafficPolicy"]) == (
        "ClusterIP",
        "None",
        "Cluster",
    )
    assert spec["ports"] == [
        {"port": 80, "protocol": "TCP", "targetPort": 80},
        {"port": 443, "targetPort": "https", "protocol": "TCP"},
    ]
    assert "externalTrafficPolicy" not in spec
    assert svc["status"] == {"loadBalancer": {}}
    lb = created(
        "Service",
        {"spec": {"type": "LoadBalancer", "ports": [{"port": 80}], "sessionAffinity": "ClientIP"}},
    )["spec"]
    assert (lb["externalTrafficPolicy"], lb["allocateLoadBalancerNodePorts"]) == ("Cluster", True)
    assert lb["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}


def test_network_policy_types_follow_its_rules() -> None:
    ingress_only = created(
        "NetworkPolicy", {"spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}]}}
    )
    assert ingress_only["spec"]["policyTypes"] == ["Ingress"]
    assert ingress_only["spec"]["ingress"][0]["ports"] == [{"port": 80, "protocol": "TCP"}]
    both = created("NetworkPolicy", {"spec": {"podSelector": {}, "egress": [{}]}})
    assert both["spec"]["policyTypes"] == ["Ingress", "Egress"]


def test_claims_endpoints_budgets_and_ingresses() -> None:
    claim = created("PersistentVolumeClaim", {"spec": {"accessModes": ["ReadWriteOnce"]}})
    assert claim["spec"]["volumeMode"] == "Filesystem" and claim["status"] == {"phase": "Pending"}
    ep = created("Endpoints", {"subsets": [{"ports": [{"port": 80}]}]})
    assert ep["subsets"][0]["ports"] == [{"port": 80, "protocol": "TCP"}]
    assert "status" not in ep
    pdb = created("PodDisruptionBudget", {"spec": {"minAvailable": 1}})
    assert pdb["status"] == {
        "disruptionsAllowed": 0,
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "expectedPods": 0,
    }
    assert created("Ingress", {"spec": {}})["status"] == {"loadBalancer": {}}


def test_defaults_apply_on_update_and_status_counters_stay() -> None:
    info = TABLE["ReplicaSet"]
    old = created("ReplicaSet", {"spec": {"template": template()}})
    new = copy.deepcopy(old)
    del new["spec"]["replicas"]
    status_ctx = Context(user=CTX.user, namespace="default", subresource="status")
    info.strategy.prepare_for_update(new, old, CTX)
    assert new["spec"]["replicas"] == 1
    written = copy.deepcopy(old)
    written["status"] = {"readyReplicas": 1}
    info.strategy.prepare_for_update(written, old, status_ctx)
    assert written["status"] == {"readyReplicas": 1, "replicas": 0}


def test_a_templates_service_account_is_written_under_both_names() -> None:
    """kube converts pod specs through its internal version: the deprecated
    ``serviceAccount`` mirrors ``serviceAccountName`` (and fills it when only it is set)."""

    def workload(kind: str, **spec: Any) -> Obj:
        selector = {"matchLabels": {"app": "a"}}
        return created(kind, {"spec": {"selector": selector, "template": template(**spec)}})

    named = workload("Deployment", serviceAccountName="agent-sa")
    spec = named["spec"]["template"]["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("agent-sa", "agent-sa")
    old = workload("DaemonSet", serviceAccount="old-sa")
    spec = old["spec"]["template"]["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("old-sa", "old-sa")
    none = workload("Deployment")
    assert "serviceAccount" not in none["spec"]["template"]["spec"]
