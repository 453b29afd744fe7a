"""Approve the CSRs of registered agents renewing their client certificates.

A CSR is considered when its signer is ``kubernetes.io/kube-apiserver-client`` and it is
neither approved nor denied. It must pass upstream's ``validateCSR`` (cluster label,
signer, a parsable request, exactly the cluster's group besides the managed-clusters
group, CN ``system:open-cluster-management:<cluster>:<agent>``). Then:

* renewal: the requester is the certificate's CN (an agent renewing with its current
  certificate) and in the cluster's group (a pyocm addition: a certificate whose CN and
  group name different clusters renews neither), the cluster is accepted (a pyocm
  addition from mission seed 000: access is never renewed for a cluster the admin has
  not accepted), and a SubjectAccessReview grants ``renew`` on
  ``managedclusters/clientcertificates`` (the per-cluster role grants it only while
  accepted);
* auto-approval (gate ``ManagedClusterAutoApproval``): the requester is one of the
  configured users and a bootstrap identity (requesters.py: a cluster's own identity
  never joins as another cluster).

A CSR that a cluster agent made but that is no renewal of its own certificate is logged
as refused. A first join is approved by the admin (``pyocm accept``), never here.

These rules are :class:`ClusterAgentApprover`, first in the controller's chain of
approvers (approvers.py); CSRs it passes on go to the approvers added after it.
"""

from __future__ import annotations

import base64
import binascii
import copy
import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from pyocm.api import conditions, models, shapes, wellknown
from pyocm.api.models.certificates_v1 import CertificateSigningRequest
from pyocm.base.clock import Clock
from pyocm.kube import kinds, timefmt
from pyocm.pki.csr import CsrError, read_subject
from pyocm.registration.hub import rbac
from pyocm.registration.hub.approvers import APPROVE_REASON, DECLINE, CsrApprover, Verdict, approve
from pyocm.registration.hub.requesters import Requester, join_refusal, renewal_refusal
from pyocm.runtime.client import Api
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Informer

log = logging.getLogger(__name__)
CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
__all__ = ["APPROVE_REASON", "CLIENT_SIGNER", "ClusterAgentApprover", "CsrApprovalController"]
APPROVE_MESSAGE = "Auto approving Managed cluster agent certificate after SubjectAccessReview."


def checked_subject(csr: Mapping[str, Any]) -> tuple[str, str] | None:
    """(cluster, the request's CN) of a valid cluster-agent CSR, else None.

    The CSR is as cached or listed, not read through a schema: its fields may hold
    anything. The request is parsed, not verified: the API server verified its signature
    when the CSR was created (upstream's approver only parses it too)."""
    labels = shapes.mapping(shapes.mapping(csr.get("metadata")).get("labels"))
    cluster = labels.get(wellknown.CLUSTER_NAME_LABEL)
    spec = shapes.mapping(csr.get("spec"))
    if not cluster or spec.get("signerName") != CLIENT_SIGNER:
        return None
    try:
        name, organizations = read_subject(
            base64.b64decode(spec.get("request") or "", validate=True)
        )
    except (CsrError, binascii.Error, ValueError):
        return None
    groups = set(organizations) - {rbac.MANAGED_CLUSTERS_GROUP}
    if groups != {f"{rbac.SUBJECT_PREFIX}{cluster}"}:
        return None
    if not name.startswith(rbac.SUBJECT_PREFIX):
        return None
    parts = name.removeprefix(rbac.SUBJECT_PREFIX).split(":")
    if len(parts) != 2 or not all(parts) or parts[0] != cluster:
        return None
    return str(cluster), name


class ClusterAgentApprover:
    """Upstream's cluster-agent rules: renewals, and joins by auto-approved users."""

    def __init__(
        self, api: Api, clusters: Informer, *, auto_approved_users: Collection[str] = ()
    ) -> None:
        self.api = api
        self.clusters = clusters
        self.auto_approved_users = frozenset(auto_approved_users)

    async def review(self, csr: dict[str, Any]) -> Verdict | None:
        checked = checked_subject(csr)
        if checked is None:
            return None  # no cluster agent's CSR: another approver's, if any
        name = csr["metadata"]["name"]
        cluster, requested_for = checked
        requester = Requester.of(csr)
        if requester.username == requested_for or requester.cluster_agent:
            refusal = renewal_refusal(requester, cluster=cluster, common_name=requested_for)
            if refusal is not None:
                log.warning("not approving CSR %s: %s", name, refusal)
            elif await self._renewal_allowed(models.view(CertificateSigningRequest, csr), cluster):
                return approve("ManagedClusterCSRAutoApproved", APPROVE_MESSAGE)
            return DECLINE
        if requester.username in self.auto_approved_users:
            refusal = join_refusal(csr)
            if refusal is None:
                return approve("ManagedClusterAutoApproved", APPROVE_MESSAGE)
            log.warning("not approving CSR %s: %s", name, refusal)
        return DECLINE  # a join: the admin's to approve

    async def _renewal_allowed(self, csr: CertificateSigningRequest, cluster: str) -> bool:
        # The cluster as cached, not read through its schema.
        managed = self.clusters.store.get(cluster)
        if managed is None or not shapes.mapping(managed.get("spec")).get("hubAcceptsClient"):
            log.info(
                "not renewing %s: cluster %s is not accepted", csr["metadata"]["name"], cluster
            )
            return False
        spec = csr["spec"]
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": spec.get("username"),
                "uid": spec.get("uid"),
                "groups": spec.get("groups") or [],
                "extra": spec.get("extra") or {},
                "resourceAttributes": {
                    "group": wellknown.REGISTER_GROUP,
                    "resource": "managedclusters",
                    "subresource": "clientcertificates",
                    "verb": "renew",
                },
            },
        }
        answer = await self.api.create(kinds.SUBJECT_ACCESS_REVIEW, review)
        return bool(shapes.mapping(answer.get("status")).get("allowed"))


class CsrApprovalController:
    """Asks each approver in turn about every pending CSR the ``csrs`` informer holds;
    the first verdict stands. The cluster-agent approver always comes first."""

    def __init__(
        self,
        api: Api,
        csrs: Informer,
        clusters: Informer,
        *,
        clock: Clock,
        recorder: Recorder,
        auto_approved_users: Collection[str] = (),
        approvers: Sequence[CsrApprover] = (),
    ) -> None:
        self.api = api
        self.csrs = csrs
        self.clock = clock
        self.recorder = recorder
        first = ClusterAgentApprover(api, clusters, auto_approved_users=auto_approved_users)
        self.approvers: tuple[CsrApprover, ...] = (first, *approvers)

    async def reconcile(self, name: str) -> None:
        csr = self.csrs.store.get(name)
        if csr is None or _decided(csr):
            return
        for approver in self.approvers:
            verdict = await approver.review(csr)
            if verdict is not None:
                if verdict.approved:
                    await self._approve(csr, verdict)
                return

    async def _approve(self, csr: dict[str, Any], verdict: Verdict) -> None:
        approved = models.view(CertificateSigningRequest, copy.deepcopy(csr))
        listed = approved.setdefault("status", {}).setdefault("conditions", [])
        listed.append(
            {
                "type": "Approved",
                "status": "True",
                "reason": APPROVE_REASON,
                "message": verdict.message,
                "lastUpdateTime": timefmt.format_time(self.clock.now()),
            }
        )
        await self.api.update(kinds.CSR, models.wire(approved), subresource="approval")
        await self.recorder.event(
            csr,
            reason=verdict.event_reason,
            note=f"auto approved the CSR {csr['metadata']['name']}",
        )


def _decided(csr: Mapping[str, Any]) -> bool:
    """Whether a cached CSR (not read through a schema) is approved or denied."""
    found = shapes.mapping(csr.get("status")).get("conditions") or []
    return any(conditions.find(found, kind) is not None for kind in ("Approved", "Denied"))
