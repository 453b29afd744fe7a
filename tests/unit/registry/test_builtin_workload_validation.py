"""Workload and service kinds: what a wrong manifest is told, in kube-apiserver's words
(field path, error type, value and detail), on create and on update."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pyocm.apiserver.authentication.user import UserInfo
from pyocm.apiserver.registry.builtin import cronschedule, workloads
from pyocm.apiserver.registry.strategy import Context

CTX = Context(user=UserInfo(name="admin"), namespace="default")
TABLE = {r.kind: r for r in workloads.workload_resources()}
Obj = dict[str, Any]
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def prepared(kind: str, body: Obj, *, name: str = "x") -> Obj:
    obj = copy.deepcopy(body)
    obj["metadata"] = {
        "name": name,
        "namespace": "default",
        "uid": "u-1",
        **body.get("metadata", {}),
    }
    TABLE[kind].strategy.prepare_for_create(obj, CTX)
    return obj


def create_errors(kind: str, body: Obj, *, name: str = "x") -> list[str]:
    obj = prepared(kind, body, name=name)
    return [e.message() for e in TABLE[kind].strategy.validate_create(obj, CTX)]


def update_errors(kind: str, old: Obj, change: Any) -> list[str]:
    new = copy.deepcopy(old)
    change(new)
    strategy = TABLE[kind].strategy
    strategy.prepare_for_update(new, old, CTX)
    return [e.message() for e in strategy.validate_update(new, old, CTX)]


def pod_template(labels: Obj | None = None, **spec: Any) -> Obj:
    containers = spec.pop("containers", [{"name": "c", "image": "nginx"}])
    metadata = {"labels": labels} if labels is not None else {}
    return {"metadata": metadata, "spec": {"containers": containers, **spec}}


def deployment(**spec: Any) -> Obj:
    return {
        "spec": {
            "selector": {"matchLabels": {"app": "a"}},
            "template": pod_template({"app": "a"}),
            **spec,
        }
    }


def test_a_valid_deployment_passes() -> None:
    assert create_errors("Deployment", deployment()) == []


def test_deployment_without_selector_is_told_twice_as_kube_does() -> None:
    body = {"spec": {"template": pod_template({"app": "a"})}}
    assert create_errors("Deployment", body) == [
        "spec.selector: Required value",
        'spec.template.metadata.labels: Invalid value: {"app":"a"}: `selector` does not match template `labels`',
    ]


def test_selector_must_match_the_template() -> None:
    assert create_errors("Deployment", deployment(selector={"matchLabels": {"app": "b"}})) == [
        'spec.template.metadata.labels: Invalid value: {"app":"a"}: `selector` does not match template `labels`'
    ]
    assert create_errors("Deployment", deployment(selector={})) == [
        "spec.selector: Invalid value: {}: empty selector is invalid for deployment"
    ]


def test_containers_are_required_and_checked() -> None:
    assert create_errors(
        "Deployment", deployment(template=pod_template({"app": "a"}, containers=[]))
    ) == ["spec.template.spec.containers: Required value"]
    containers = [
        {"name": "Web", "image": "nginx"},
        {"name": "db"},
        {
            "name": "db",
            "image": "postgres",
            "ports": [{"containerPort": 0}, {"containerPort": 70000, "name": "HTTP"}],
        },
    ]
    errors = create_errors(
        "Deployment", deployment(template=pod_template({"app": "a"}, containers=containers))
    )
    assert errors == [
        f'spec.template.spec.containers[0].name: Invalid value: "Web": {LABEL_MSG}',
        "spec.template.spec.containers[1].image: Required value",
        "spec.template.spec.containers[2].ports[0].containerPort: Required value",
        'spec.template.spec.containers[2].ports[1].name: Invalid value: "HTTP": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
        'spec.template.spec.containers[2].ports[1].name: Invalid value: "HTTP": must contain at least one letter (a-z)',
        "spec.template.spec.containers[2].ports[1].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
        'spec.template.spec.containers[2].name: Duplicate value: "db"',
    ]


def test_mounts_need_volumes_and_policies_must_be_known() -> None:
    container = {
        "name": "c",
        "image": "i",
        "imagePullPolicy": "Sometimes",
        "volumeMounts": [{"name": "data", "mountPath": "/d"}],
    }
    template = pod_template({"app": "a"}, containers=[container], dnsPolicy="Nope")
    assert create_errors("Deployment", deployment(template=template)) == [
        'spec.template.spec.containers[0].volumeMounts[0].name: Not found: "data"',
        'spec.template.spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
        'spec.template.spec.dnsPolicy: Unsupported value: "Nope": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"',
    ]


def test_workload_pods_must_restart_always_and_strategies_make_sense() -> None:
    template = pod_template({"app": "a"}, restartPolicy="Never")
    strategy = {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "0%"}}
    assert create_errors("Deployment", deployment(template=template, strategy=strategy)) == [
        'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
        "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0",
    ]
    assert create_errors("Deployment", deployment(replicas=-1)) == [
        "spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    ]


def test_apps_selectors_are_immutable() -> None:
    old = prepared("Deployment", deployment())

    def change(new: Obj) -> None:
        new["spec"]["selector"] = {"matchLabels": {"app": "a", "tier": "web"}}
        new["spec"]["template"]["metadata"]["labels"]["tier"] = "web"

    assert update_errors("Deployment", old, change) == [
        'spec.selector: Invalid value: {"matchLabels":{"app":"a","tier":"web"}}: field is immutable'
    ]

    def scale(new: Obj) -> None:
        new["spec"]["replicas"] = 5

    assert update_errors("Deployment", old, scale) == []


def test_replica_set_and_daemon_set() -> None:
    assert create_errors("ReplicaSet", {"spec": {"template": pod_template({"app": "a"})}})[0] == (
        "spec.selector: Required value"
    )
    # A DaemonSet without a selector is only told its template does not match.
    assert create_errors("DaemonSet", {"spec": {"template": pod_template({"app": "a"})}}) == [
        'spec.template.metadata.labels: Invalid value: {"app":"a"}: `selector` does not match template `labels`'
    ]
    body = deployment(
        updateStrategy={
            "type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 1},
        }
    )
    assert create_errors("DaemonSet", body) == [
        "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero"
    ]


def test_stateful_sets() -> None:
    body = deployment(serviceName="db", podManagementPolicy="Whenever")
    assert create_errors("StatefulSet", body) == [
        "spec.podManagementPolicy: Invalid value: \"Whenever\": must be 'OrderedReady' or 'Parallel'"
    ]
    assert (
        create_errors("StatefulSet", deployment(), name="db.1") == []
    )  # names are checked by the store
    old = prepared("StatefulSet", deployment(serviceName="db"))

    def rename_service(new: Obj) -> None:
        new["spec"]["serviceName"] = "other"

    assert update_errors("StatefulSet", old, rename_service) == [
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', "
        "'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    ]
    assert TABLE["StatefulSet"].strategy.name_validator("db.1") == ["must not contain dots"]


def job(**spec: Any) -> Obj:
    return {"spec": {"template": pod_template(None, restartPolicy="Never"), **spec}}


def test_jobs_must_not_restart_always() -> None:
    body = {"spec": {"template": pod_template(None)}}
    assert create_errors("Job", body, name="pi") == [
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"'
    ]
    assert create_errors("Job", job(), name="pi") == []


def test_job_selectors_are_generated_unless_manual() -> None:
    assert create_errors("Job", job(selector={"matchLabels": {"app": "a"}}), name="pi") == [
        'spec.selector: Invalid value: {"matchLabels":{"app":"a","batch.kubernetes.io/controller-uid":"u-1"}}: `selector` not auto-generated',
        'spec.template.metadata.labels: Invalid value: {"job-name":"pi","batch.kubernetes.io/job-name":"pi","controller-uid":"u-1","batch.kubernetes.io/controller-uid":"u-1"}: `selector` does not match template `labels`',
    ]
    assert create_errors("Job", job(manualSelector=True), name="pi") == [
        "spec.selector: Required value",
        "spec.template.metadata.labels: Invalid value: null: `selector` does not match template `labels`",
    ]


def test_job_templates_and_completions_are_immutable() -> None:
    old = prepared("Job", job(), name="pi")

    def new_image(new: Obj) -> None:
        new["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox"

    errors = update_errors("Job", old, new_image)
    assert len(errors) == 1 and errors[0].startswith("spec.template: Invalid value: {")
    assert errors[0].endswith(": field is immutable")

    def suspend(new: Obj) -> None:
        new["spec"]["suspend"] = True

    assert update_errors("Job", old, suspend) == []


def test_cron_jobs() -> None:
    body = {"spec": {"schedule": "every minute", "jobTemplate": {"spec": job()["spec"]}}}
    assert create_errors("CronJob", body) == [
        'spec.schedule: Invalid value: "every minute": expected exactly 5 fields, found 2: [every minute]'
    ]
    body = {
        "spec": {
            "schedule": "0 0 * * *",
            "timeZone": "Mars/Olympus",
            "jobTemplate": {"spec": job()["spec"]},
        }
    }
    assert create_errors("CronJob", body, name="n" * 53) == [
        'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus',
        f'metadata.name: Invalid value: "{"n" * 53}": must be no more than 52 characters',
    ]


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ("*/5 * * * *", ""),
        ("0 9 * jan-mar mon-fri", ""),
        ("@hourly", ""),
        ("@every 1h30m", ""),
        ("@sometimes", "unrecognized descriptor: @sometimes"),
        ("61 * * * *", "end of range (61) above maximum (59): 61"),
        ("0 0 0 * *", "beginning of range (0) below minimum (1): 0"),
        ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax'),
        ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
        ("*/0 * * * *", "step of range should be a positive number: */0"),
    ],
)
def test_cron_schedules(schedule: str, message: str) -> None:
    if not message:
        cronschedule.check(schedule)
        return
    with pytest.raises(cronschedule.ScheduleError) as caught:
        cronschedule.check(schedule)
    assert str(caught.value) == message


def test_services() -> None:
    two_ports = {"spec": {"ports": [{"port": 80}, {"port": 0, "name": "b"}], "type": "Magic"}}
    assert create_errors("Service", two_ports) == [
        "spec.ports[0].name: Required value",
        "spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive",
        "spec.ports[1].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
        'spec.type: Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
    ]
    assert create_errors("Service", {"spec": {}}) == ["spec.ports: Required value"]
    assert create_errors("Service", {"spec": {"type": "ExternalName"}}) == [
        "spec.externalName: Required value"
    ]
    assert TABLE["Service"].strategy.name_validator("1web") == [
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
        "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
        "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    ]


def test_service_updates_keep_allocated_values_and_refuse_new_ips() -> None:
    old = prepared(
        "Service", {"spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 30080}]}}
    )
    old["spec"].update(
        clusterIP="10.96.1.1",
        clusterIPs=["10.96.1.1"],
        ipFamilies=["IPv4"],
        ipFamilyPolicy="SingleStack",
    )

    def replace(new: Obj) -> None:
        new["spec"] = {"type": "NodePort", "ports": [{"port": 80}]}

    new = copy.deepcopy(old)
    replace(new)
    TABLE["Service"].strategy.prepare_for_update(new, old, CTX)
    assert (
        new["spec"]["clusterIPs"] == ["10.96.1.1"] and new["spec"]["ports"][0]["nodePort"] == 30080
    )

    def move(new: Obj) -> None:
        new["spec"]["clusterIP"], new["spec"]["clusterIPs"] = "10.96.1.2", ["10.96.1.2"]

    assert update_errors("Service", old, move) == [
        'spec.clusterIPs[0]: Invalid value: ["10.96.1.2"]: may not change once set'
    ]


def test_pods_are_immutable_but_for_images() -> None:
    old = prepared("Pod", {"spec": {"containers": [{"name": "c", "image": "nginx"}]}})

    def image(new: Obj) -> None:
        new["spec"]["containers"][0]["image"] = "nginx:2"

    def port(new: Obj) -> None:
        new["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]

    def bind(new: Obj) -> None:
        new["spec"]["nodeName"] = "node-1"

    assert update_errors("Pod", old, image) == []
    assert update_errors("Pod", old, bind) == []
    assert update_errors("Pod", old, port) == [
        "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
        "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be "
        "set to 1 if it was previously negative)"
    ]


def test_claims_budgets_policies_and_ingresses() -> None:
    assert create_errors("PersistentVolumeClaim", {"spec": {}}) == [
        "spec.accessModes: Required value: at least 1 access mode is required",
        "spec.resources[storage]: Required value",
    ]
    assert create_errors(
        "PodDisruptionBudget", {"spec": {"minAvailable": "150%", "maxUnavailable": 1}}
    ) == [
        'spec: Invalid value: {"minAvailable":"150%","maxUnavailable":1}: minAvailable and maxUnavailable cannot be both set',
        'spec.minAvailable: Invalid value: "150%": must not be greater than 100%',
    ]
    assert create_errors(
        "NetworkPolicy", {"spec": {"podSelector": {}, "policyTypes": ["Sideways"]}}
    ) == [
        'spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"'
    ]
    rule = {
        "http": {
            "paths": [{"path": "/", "backend": {"service": {"name": "s", "port": {"number": 80}}}}]
        }
    }
    assert create_errors("Ingress", {"spec": {"rules": [rule]}}) == [
        "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"
    ]


def test_status_writes_are_not_validated_against_the_spec() -> None:
    old = prepared("Deployment", deployment())
    new = copy.deepcopy(old)
    new["status"] = {"replicas": 1}
    ctx = Context(user=CTX.user, namespace="default", subresource="status")
    TABLE["Deployment"].strategy.prepare_for_update(new, old, ctx)
    assert TABLE["Deployment"].strategy.validate_update(new, old, ctx) == []
