"""The workload and service kinds every pyocm API server serves, as kube-apiserver 1.30
lists them in discovery: core Pods, Services, Endpoints and PersistentVolumeClaims;
``apps/v1`` Deployments, ReplicaSets, StatefulSets, DaemonSets and ControllerRevisions;
``batch/v1`` Jobs and CronJobs; ``policy/v1`` PodDisruptionBudgets; and
``networking.k8s.io/v1`` NetworkPolicies and Ingresses; ``autoscaling/v2``
HorizontalPodAutoscalers (:mod:`autoscaling`).

The objects are stored and validated like kube's, but nothing runs them: no scheduler,
kubelet or workload controller exists here. Their status is whatever a client writes
through ``/status`` (a simulated workload controller does, in a local fleet). ``scale``
(``autoscaling/v1`` Scale) is served for Deployments, ReplicaSets and StatefulSets.
"""

from __future__ import annotations

from pyocm.apiserver.registry.builtin import (
    appsvalidation,
    autoscaling,
    batchvalidation,
    coreprinters,
    corevalidation,
    kindstrategies,
    policyvalidation,
    workloaddefaults,
    workloadprinters,
)
from pyocm.apiserver.registry.builtin.workloadstrategy import WorkloadStrategy, field
from pyocm.apiserver.registry.resources import ResourceInfo, SubresourceInfo
from pyocm.apiserver.registry.strategy import STATUS, Obj
from pyocm.kube import names
from pyocm.kube.status import FieldError

SCALE = "scale"
_STATUS = SubresourceInfo(STATUS)
_SCALE = SubresourceInfo(SCALE, kind="Scale", group="autoscaling", version="v1")
#: Services could not be deleted as a collection before Kubernetes 1.31.
_SERVICE_VERBS = ("create", "delete", "get", "list", "patch", "update", "watch")
_ALL = ("all",)


def _valid(obj: Obj) -> list[FieldError]:
    return []


def _apps() -> list[ResourceInfo]:
    selector_fixed = appsvalidation.selector_unchanged
    return [
        ResourceInfo(
            group="apps",
            version="v1",
            kind="Deployment",
            plural="deployments",
            singular="deployment",
            namespaced=True,
            strategy=WorkloadStrategy(
                default=workloaddefaults.deployment,
                validate=appsvalidation.deployment,
                validate_update=selector_fixed,
                initial_status={},
            ),
            columns=workloadprinters.DEPLOYMENT,
            short_names=("deploy",),
            categories=_ALL,
            subresources=(_SCALE, _STATUS),
        ),
        ResourceInfo(
            group="apps",
            version="v1",
            kind="ReplicaSet",
            plural="replicasets",
            singular="replicaset",
            namespaced=True,
            strategy=WorkloadStrategy(
                default=workloaddefaults.replica_set,
                validate=appsvalidation.replica_set,
                validate_update=selector_fixed,
                initial_status={"replicas": 0},
                fields={"status.replicas": field("status", "replicas")},
            ),
            columns=workloadprinters.REPLICA_SET,
            short_names=("rs",),
            categories=_ALL,
            subresources=(_SCALE, _STATUS),
        ),
        ResourceInfo(
            group="apps",
            version="v1",
            kind="StatefulSet",
            plural="statefulsets",
            singular="statefulset",
            namespaced=True,
            strategy=WorkloadStrategy(
                default=workloaddefaults.stateful_set,
                validate=appsvalidation.stateful_set,
                validate_update=appsvalidation.stateful_set_update,
                initial_status={"replicas": 0, "availableReplicas": 0},
                name_rule=names.is_dns1123_label,
            ),
            columns=workloadprinters.STATEFUL_SET,
            short_names=("sts",),
            categories=_ALL,
            subresources=(_SCALE, _STATUS),
        ),
        ResourceInfo(
            group="apps",
            version="v1",
            kind="DaemonSet",
            plural="daemonsets",
            singular="daemonset",
            namespaced=True,
            strategy=WorkloadStrategy(
                default=workloaddefaults.daemon_set,
                validate=appsvalidation.daemon_set,
                validate_update=selector_fixed,
                initial_status={
                    "currentNumberScheduled": 0,
                    "numberMisscheduled": 0,
                    "desiredNumberScheduled": 0,
                    "numberReady": 0,
                },
            ),
            columns=workloadprinters.DAEMON_SET,
            short_names=("ds",),
            categories=_ALL,
            subresources=(_STATUS,),
        ),
        ResourceInfo(
            group="apps",
            version="v1",
            kind="ControllerRevision",
            plural="controllerrevisions",
            singular="controllerrevision",
            namespaced=True,
            strategy=WorkloadStrategy(
                default=lambda obj: None,
                validate=appsvalidation.controller_revision,
                validate_update=appsvalidation.controller_revision_update,
                generation=False,
            ),
            columns=coreprinters.CONTROLLER_REVISION,
        ),
    ]


def _core() -> list[ResourceInfo]:
    return [
        ResourceInfo(
            group="",
            version="v1",
            kind="Pod",
            plural="pods",
            singular="pod",
            namespaced=True,
            strategy=kindstrategies.PodStrategy(),
            columns=coreprinters.POD,
            short_names=("po",),
            categories=_ALL,
            subresources=(_STATUS,),
        ),
        ResourceInfo(
            group="",
            version="v1",
            kind="Service",
            plural="services",
            singular="service",
            namespaced=True,
            strategy=kindstrategies.ServiceStrategy(),
            columns=coreprinters.SERVICE,
            short_names=("svc",),
            categories=_ALL,
            verbs=_SERVICE_VERBS,
            subresources=(_STATUS,),
        ),
        ResourceInfo(
            group="",
            version="v1",
            kind="Endpoints",
            plural="endpoints",
            singular="endpoints",
            namespaced=True,
            strategy=WorkloadStrategy(
                default=workloaddefaults.endpoints, validate=_valid, generation=False
            ),
            columns=coreprinters.ENDPOINTS,
            short_names=("ep",),
        ),
        ResourceInfo(
            group="",
            version="v1",
            kind="PersistentVolumeClaim",
            plural="persistentvolumeclaims",
            singular="persistentvolumeclaim",
            namespaced=True,
            strategy=WorkloadStrategy(
                default=workloaddefaults.persistent_volume_claim,
                validate=corevalidation.persistent_volume_claim,
                validate_update=corevalidation.persistent_volume_claim_update,
                initial_status={"phase": "Pending"},
                generation=False,
            ),
            columns=coreprinters.PERSISTENT_VOLUME_CLAIM,
            short_names=("pvc",),
            subresources=(_STATUS,),
        ),
    ]


def _batch_policy_networking() -> list[ResourceInfo]:
    return [
        ResourceInfo(
            group="batch",
            version="v1",
            kind="Job",
            plural="jobs",
            singular="job",
            namespaced=True,
            strategy=kindstrategies.JobStrategy(),
            columns=workloadprinters.JOB,
            categories=_ALL,
            subresources=(_STATUS,),
        ),
        ResourceInfo(
            group="batch",
            version="v1",
            kind="CronJob",
            plural="cronjobs",
            singular="cronjob",
            namespaced=True,
            strategy=WorkloadStrategy(
                default=workloaddefaults.cron_job,
                validate=batchvalidation.cron_job,
                validate_new=batchvalidation.cron_job_name,
                initial_status={},
            ),
            columns=workloadprinters.CRON_JOB,
            short_names=("cj",),
            categories=_ALL,
            subresources=(_STATUS,),
        ),
        ResourceInfo(
            group="policy",
            version="v1",
            kind="PodDisruptionBudget",
            plural="poddisruptionbudgets",
            singular="poddisruptionbudget",
            namespaced=True,
            strategy=WorkloadStrategy(
                default=lambda obj: None,
                validate=policyvalidation.pod_disruption_budget,
                initial_status={
                    "disruptionsAllowed": 0,
                    "currentHealthy": 0,
                    "desiredHealthy": 0,
                    "expectedPods": 0,
                },
            ),
            columns=coreprinters.POD_DISRUPTION_BUDGET,
            short_names=("pdb",),
            subresources=(_STATUS,),
        ),
        ResourceInfo(
            group="networking.k8s.io",
            version="v1",
            kind="NetworkPolicy",
            plural="networkpolicies",
            singular="networkpolicy",
            namespaced=True,
            strategy=WorkloadStrategy(
                default=workloaddefaults.network_policy, validate=policyvalidation.network_policy
            ),
            columns=coreprinters.NETWORK_POLICY,
            short_names=("netpol",),
        ),
        ResourceInfo(
            group="networking.k8s.io",
            version="v1",
            kind="Ingress",
            plural="ingresses",
            singular="ingress",
            namespaced=True,
            strategy=WorkloadStrategy(
                default=lambda obj: None,
                validate=policyvalidation.ingress,
                initial_status={"loadBalancer": {}},
            ),
            columns=coreprinters.INGRESS,
            short_names=("ing",),
            subresources=(_STATUS,),
        ),
    ]


def workload_resources() -> list[ResourceInfo]:
    """Every workload and service resource, with fresh strategy instances."""
    return _core() + _apps() + _batch_policy_networking() + autoscaling.resources()
