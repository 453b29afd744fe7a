"""Signing approved CustomSigner CSRs of add-on agents with the add-on's ``sign`` callback
(upstream's ``CSRSignController``).

A CSR is signed when it is an add-on CSR (approve.py's filter), approved and not denied,
has no certificate, is not for the kube-apiserver-client signer (the API server's own),
and its cluster and ManagedClusterAddOn exist. The callback answering b"" leaves it
unsigned. Where upstream retries a failing signer forever, a
:class:`~pyocm.pki.signer.SigningRefused` (a broken or expired CA, an unreadable
request) becomes a Failed condition on the CSR and a Warning event, once; the agent
asks again with a new CSR. Other errors (the API) are retried with backoff.
"""

from __future__ import annotations

import base64
import copy
import logging
from collections.abc import Mapping

from pyocm.addon.agent import KUBE_CLIENT_SIGNER, AgentAddon
from pyocm.addon.registration.approve import addon_of
from pyocm.api import conditions, models, shapes, wellknown
from pyocm.api.models.addon_v1beta1 import ManagedClusterAddOn
from pyocm.api.models.certificates_v1 import CertificateSigningRequest
from pyocm.api.models.cluster_v1 import ManagedCluster
from pyocm.base.clock import Clock
from pyocm.kube import kinds, timefmt
from pyocm.pki.signer import SigningRefused
from pyocm.runtime.client import Api
from pyocm.runtime.events import Recorder
from pyocm.runtime.informer import Informer

log = logging.getLogger(__name__)
#: The reason of the Warning event on a CSR its add-on's signer refused.
SIGN_FAILED_EVENT = "AddonCSRSignFailed"


def signable(csr: Mapping[str, object]) -> bool:
    """Approved, neither denied nor failed, unsigned, and not the API server's to sign."""
    spec, status = shapes.mapping(csr.get("spec")), shapes.mapping(csr.get("status"))
    found = shapes.objects(status.get("conditions"))
    if not conditions.is_true(found, "Approved"):
        return False
    if any(conditions.find(found, kind) is not None for kind in ("Denied", "Failed")):
        return False
    return not status.get("certificate") and spec.get("signerName") != KUBE_CLIENT_SIGNER


class AddonCsrSigningController:
    def __init__(
        self,
        api: Api,
        *,
        addons: Mapping[str, AgentAddon],
        csrs: Informer,
        clusters: Informer,
        mcas: Informer,
        recorder: Recorder,
        clock: Clock,
    ) -> None:
        self.api = api
        self.addons = addons
        self.csrs = csrs
        self.clusters = clusters
        self.mcas = mcas
        self.recorder = recorder
        self.clock = clock

    async def reconcile(self, name: str) -> None:
        csr = self.csrs.store.get(name)
        if csr is None or not signable(csr):
            return
        addon_name = addon_of(csr, self.addons)
        if addon_name is None:
            return
        options = self.addons[addon_name].options()
        registration = options.registration
        labels = shapes.string_map(shapes.mapping(csr.get("metadata")).get("labels"))
        cluster_name = labels.get(wellknown.CLUSTER_NAME_LABEL, "")
        cluster = self.clusters.store.get(cluster_name)
        addon = self.mcas.store.get(f"{cluster_name}/{addon_name}")
        if registration is None or registration.sign is None or cluster is None or addon is None:
            return
        if not options.accepts(models.view(ManagedClusterAddOn, addon)):
            return
        signed = models.view(CertificateSigningRequest, copy.deepcopy(csr))
        try:
            pem = await registration.sign(
                self.api,
                models.view(ManagedCluster, copy.deepcopy(cluster)),
                models.view(ManagedClusterAddOn, copy.deepcopy(addon)),
                copy.deepcopy(csr),
            )
        except SigningRefused as err:
            await self._fail(signed, err)
            return
        if not pem:
            return
        signed.setdefault("status", {})["certificate"] = base64.b64encode(pem).decode()
        await self.api.update(kinds.CSR, models.wire(signed), subresource="status")

    async def _fail(self, csr: CertificateSigningRequest, err: SigningRefused) -> None:
        message = f"failed to sign addon csr {csr['metadata']['name']}: {err.message}"
        log.warning("%s", message)
        moment = timefmt.format_time(self.clock.now())
        csr.setdefault("status", {}).setdefault("conditions", []).append(
            {
                "type": "Failed",
                "status": "True",
                "reason": err.reason,
                "message": message,
                "lastUpdateTime": moment,
                "lastTransitionTime": moment,
            }
        )
        stored = await self.api.update(kinds.CSR, models.wire(csr), subresource="status")
        await self.recorder.event(stored, reason=SIGN_FAILED_EVENT, note=message, type="Warning")
