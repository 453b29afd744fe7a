"""What a ManagedClusterAddOn asks of the agent: one client certificate per registration.

Upstream's ``pkg/registration/spoke/addon/configuration.go`` (ocm-behaviour.md 1.13): each
entry of the MCA's v1beta1 ``status.registrations`` becomes a :class:`Registration`
naming the Secret to keep in the add-on's install namespace and the certificate to ask
for, with upstream's default subject when the entry leaves it empty. Entries upstream
skips (a ``kubeClient`` entry without ``kubeClient``, a ``customSigner`` entry without a
signer, unknown types) are skipped here too.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from pyocm.api import wellknown
from pyocm.api.models.addon_v1beta1 import (
    ManagedClusterAddOn,
    ManagedClusterAddOnStatusRegistration,
    ManagedClusterAddOnStatusRegistrationCustomSigner,
)
from pyocm.registration.agent import certs

KUBE_CLIENT = "kubeClient"
CUSTOM_SIGNER = "customSigner"
#: The only kubeClient driver pyocm's agent has (upstream's ``--addon-kubeclient-registration-auth``
#: default); ``token`` is upstream's other.
CSR_DRIVER = "csr"


@dataclass(frozen=True)
class Registration:
    """One registration of one add-on: which Secret, where, holding which certificate."""

    addon: str
    type: str
    secret: str
    namespace: str
    #: The add-on agent runs outside the managed cluster (hosted mode): upstream then keeps
    #: the Secret and reads the Lease on the management cluster.
    running_outside: bool
    request: certs.CertificateRequest

    @property
    def kube_client(self) -> bool:
        """A kubeClient registration's Secret also holds a hub kubeconfig."""
        return self.type == KUBE_CLIENT

    @property
    def key(self) -> str:
        """Equal for equal registrations: upstream hashes the registration and the
        install options, and restarts a registration only when that hash changes."""
        fields = {
            "type": self.type,
            "secret": self.secret,
            "namespace": self.namespace,
            "runningOutside": self.running_outside,
            "cn": self.request.common_name,
            "o": sorted(self.request.organizations),
            "ou": sorted(self.request.organizational_units),
            "signer": self.request.signer,
            "expiration": self.request.expiration_seconds,
        }
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def install_namespace(addon: ManagedClusterAddOn) -> str:
    """``status.namespace``, else the v1alpha1 install-namespace annotation, else the default."""
    found = addon.get("status", {}).get("namespace")
    if found:
        return found
    annotations = addon["metadata"].get("annotations", {})
    return (
        annotations.get(wellknown.ADDON_INSTALL_NAMESPACE_ANNOTATION)
        or wellknown.ADDON_DEFAULT_INSTALL_NAMESPACE
    )


def running_outside(addon: ManagedClusterAddOn) -> bool:
    annotations = addon["metadata"].get("annotations", {})
    return bool(annotations.get(wellknown.ADDON_HOSTING_CLUSTER_ANNOTATION))


def hub_kubeconfig_secret(addon: str) -> str:
    """The Secret holding an add-on agent's hub kubeconfig (KubeClient registration)."""
    return f"{addon}-hub-kubeconfig"


def secret_name(addon: str, registration: ManagedClusterAddOnStatusRegistration) -> str | None:
    """``<addon>-hub-kubeconfig`` or ``<addon>-<signer, / as ->-client-cert``; None when
    upstream would skip the entry."""
    kind = registration.get("type")
    if kind == KUBE_CLIENT and "kubeClient" in registration:
        return hub_kubeconfig_secret(addon)
    signer = registration.get("customSigner", {}).get("signerName", "")
    if kind == CUSTOM_SIGNER and signer:
        return f"{addon}-{signer.replace('/', '-')}-client-cert"
    return None


def certificate_request(
    *,
    cluster: str,
    addon: str,
    registration: ManagedClusterAddOnStatusRegistration,
    expiration_seconds: int | None = None,
) -> certs.CertificateRequest:
    """The CSR for ``registration``, as upstream's ``addonX509Subject`` builds its subject:
    kubeClient gets the default group when it names none; a custom signer gets the
    groups and units it names, and only the default user."""
    if registration.get("type") == KUBE_CLIENT:
        client = registration.get("kubeClient", {}).get("subject", {})
        return certs.addon_request(
            cluster=cluster,
            addon=addon,
            user=client.get("user", ""),
            groups=tuple(client.get("groups", [])) or None,
            expiration_seconds=expiration_seconds,
        )
    empty: ManagedClusterAddOnStatusRegistrationCustomSigner = {"signerName": ""}
    signer = registration.get("customSigner", empty)
    subject = signer.get("subject", {})
    return certs.addon_request(
        cluster=cluster,
        addon=addon,
        user=subject.get("user", ""),
        signer=signer["signerName"],
        groups=tuple(subject.get("groups", [])),
        organizational_units=tuple(subject.get("organizationUnits", [])),
        expiration_seconds=expiration_seconds,
    )


def registrations(
    addon: ManagedClusterAddOn, *, cluster: str, expiration_seconds: int | None = None
) -> dict[str, Registration]:
    """The MCA's registrations by :attr:`Registration.key` (two equal entries are one)."""
    name = addon["metadata"]["name"]
    namespace = install_namespace(addon)
    outside = running_outside(addon)
    found: dict[str, Registration] = {}
    for entry in addon.get("status", {}).get("registrations", []):
        secret = secret_name(name, entry)
        if secret is None:
            continue
        registration = Registration(
            addon=name,
            type=entry["type"],
            secret=secret,
            namespace=namespace,
            running_outside=outside,
            request=certificate_request(
                cluster=cluster,
                addon=name,
                registration=entry,
                expiration_seconds=expiration_seconds,
            ),
        )
        found[registration.key] = registration
    return found


def with_driver(
    addon: ManagedClusterAddOn, driver: str = CSR_DRIVER
) -> list[ManagedClusterAddOnStatusRegistration] | None:
    """The registrations with the first kubeClient entry's ``kubeClient.driver`` set to
    ``driver``, or None when it already is (upstream's ``ensureDriver``: the agent tells
    the hub how it authenticates; the hub's token infrastructure reads it)."""
    entries = addon.get("status", {}).get("registrations", [])
    for index, entry in enumerate(entries):
        if entry.get("type") != KUBE_CLIENT:
            continue
        client = entry.get("kubeClient", {})
        if client.get("driver") == driver:
            return None
        updated = list(entries)
        updated[index] = {**entry, "kubeClient": {**client, "driver": driver}}
        return updated
    return None
