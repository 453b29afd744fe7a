"""The built-in admission plugins kube-apiserver enables by default that a hub needs.

- NamespaceLifecycle: no content in a missing or terminating namespace; the system
  namespaces cannot be deleted.
- CertificateSubjectRestriction: no ``system:masters`` client certificates through CSRs.
- CertificateApproval / CertificateSigning: approving needs ``approve`` and writing a
  certificate needs ``sign`` on ``certificates.k8s.io/signers`` for the signer name.
- RBAC escalation prevention on roles and bindings.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

from pyocm.apiserver.admission.chain import BasePlugin, Operation, Plugin, Request
from pyocm.apiserver.authorization import authorizer, escalation
from pyocm.apiserver.authorization.attributes import Attributes
from pyocm.kube import status
from pyocm.pki import signer

if TYPE_CHECKING:
    from pyocm.apiserver.state import ServerState

IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"


def default_plugins(state: ServerState) -> list[Plugin]:
    return [
        NamespaceLifecycle(state),
        CertificateSubjectRestriction(),
        CertificateApproval(state),
        RbacEscalation(state),
    ]


class NamespaceLifecycle(BasePlugin):
    name = "NamespaceLifecycle"

    def __init__(self, state: ServerState) -> None:
        self._state = state

    def handles(self, request: Request) -> bool:
        if request.resource.plural == "namespaces" and not request.resource.group:
            return request.operation is Operation.DELETE
        return request.resource.namespaced and request.operation is Operation.CREATE

    async def validate(self, request: Request) -> None:
        if request.operation is Operation.DELETE:
            if request.name in IMMORTAL_NAMESPACES:
                raise status.forbidden_error(
                    message=f'namespaces "{request.name}" is forbidden: this namespace may not be deleted',
                    resource="namespaces",
                    name=request.name,
                )
            return
        ns_info = self._state.catalog.get("", "v1", "namespaces")
        assert ns_info is not None
        try:
            ns = await self._state.store.get(ns_info, namespace="", name=request.namespace)
        except status.ApiError as err:
            if err.reason == "NotFound":
                raise status.not_found(
                    resource="namespaces", group="", name=request.namespace
                ) from None
            raise
        if (
            ns.get("metadata", {}).get("deletionTimestamp")
            or (ns.get("status") or {}).get("phase") == "Terminating"
        ):
            message = f"unable to create new content in namespace {request.namespace} because it is being terminated"
            raise status.forbidden_error(
                message=f'{status.qualified(request.resource.plural, request.resource.group)} "{request.name}" is forbidden: {message}',
                resource=request.resource.plural,
                group=request.resource.group,
                name=request.name,
                causes=[
                    {
                        "reason": "NamespaceTerminating",
                        "message": message,
                        "field": "metadata.namespace",
                    }
                ],
            )


def _is_csr(request: Request) -> bool:
    return (
        request.resource.group == "certificates.k8s.io"
        and request.resource.plural == "certificatesigningrequests"
    )


class CertificateSubjectRestriction(BasePlugin):
    name = "CertificateSubjectRestriction"

    def handles(self, request: Request) -> bool:
        return _is_csr(request) and request.operation is Operation.CREATE

    async def validate(self, request: Request) -> None:
        spec = (request.obj or {}).get("spec") or {}
        if spec.get("signerName") != CLIENT_SIGNER:
            return
        try:
            pem = base64.b64decode(str(spec.get("request") or ""))
            masters = signer.csr_subject_has_masters(pem)
        except Exception:
            return  # the strategy reports a malformed request as Invalid
        if masters:
            raise status.forbidden_error(
                message=f'certificatesigningrequests.certificates.k8s.io "{request.name}" is forbidden: '
                f"use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed",
                resource="certificatesigningrequests",
                group="certificates.k8s.io",
                name=request.name,
            )


class CertificateApproval(BasePlugin):
    """Approval needs ``approve``, issuing needs ``sign``, on the signer (or ``<domain>/*``)."""

    name = "CertificateApproval"

    def __init__(self, state: ServerState) -> None:
        self._state = state

    def handles(self, request: Request) -> bool:
        return (
            _is_csr(request)
            and request.operation is Operation.UPDATE
            and request.subresource in ("approval", "status")
        )

    async def validate(self, request: Request) -> None:
        verb = "approve" if request.subresource == "approval" else "sign"
        if verb == "sign" and (request.obj or {}).get("status", {}).get("certificate") == (
            request.old or {}
        ).get("status", {}).get("certificate"):
            return
        signer_name = str(((request.old or {}).get("spec") or {}).get("signerName") or "")
        domain = signer_name.split("/", 1)[0]
        for name in (signer_name, f"{domain}/*"):
            attrs = Attributes(
                user=request.ctx.user,
                verb=verb,
                resource_request=True,
                api_group="certificates.k8s.io",
                resource="signers",
                name=name,
            )
            if authorizer.authorize(self._state.rbac, attrs).allowed:
                return
        raise status.forbidden_error(
            message=f'certificatesigningrequests.certificates.k8s.io "{request.name}" is forbidden: '
            f'user not permitted to {verb} requests with signerName "{signer_name}"',
            resource="certificatesigningrequests",
            group="certificates.k8s.io",
            name=request.name,
        )


class RbacEscalation(BasePlugin):
    name = "RBACEscalation"
    _ROLES = {"roles": "Role", "clusterroles": "ClusterRole"}
    _BINDINGS = {"rolebindings": "RoleBinding", "clusterrolebindings": "ClusterRoleBinding"}

    def __init__(self, state: ServerState) -> None:
        self._state = state

    def handles(self, request: Request) -> bool:
        return (
            request.resource.group == "rbac.authorization.k8s.io"
            and request.operation in (Operation.CREATE, Operation.UPDATE)
            and not request.ctx.user.is_superuser()
        )

    async def validate(self, request: Request) -> None:
        plural = request.resource.plural
        assert request.obj is not None
        if plural in self._ROLES:
            escalation.check_role_write(
                self._state.rbac,
                user=request.ctx.user,
                kind=self._ROLES[plural],
                namespace=request.namespace,
                new=request.obj,
                old=request.old,
            )
        elif plural in self._BINDINGS:
            escalation.check_binding_write(
                self._state.rbac,
                user=request.ctx.user,
                kind=self._BINDINGS[plural],
                namespace=request.namespace,
                new=request.obj,
                old=request.old,
            )
