"""An add-on's Secret on the managed cluster: what it holds and when it needs a new certificate.

Upstream (``register/secret_controller.go``, ``register/csr/csr.go``): keys ``tls.crt``,
``tls.key`` and ``cluster-name``, plus ``kubeconfig`` for a kubeClient registration. The
kubeconfig is upstream's: the hub's server and CA from the agent's bootstrap kubeconfig,
context ``default-context`` in namespace ``configuration``, user ``default-auth`` whose
certificate and key are the files ``tls.crt`` and ``tls.key`` next to it. So it never
changes with a rotation, and an add-on agent that mounts the Secret as a folder reads its
current certificate through it. (The cluster's own hub kubeconfig embeds its certificate
instead: credentials.py.)

A new certificate is due, in upstream's order, when the stored one is missing, expired or
for another subject; when an extra key (``kubeconfig``, ``cluster-name``) is missing or
differs; or when 20 to 25 % of its life is left.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pyocm.pki.kubeconfig import DEFAULT_CLUSTER, DEFAULT_CONTEXT, DEFAULT_USER, render_kubeconfig
from pyocm.registration.agent import certs, credentials
from pyocm.registration.agent.addons.config import Registration

#: The namespace upstream's BaseKubeConfigFromBootStrap puts in the context.
CONTEXT_NAMESPACE = "configuration"

#: Why a new certificate is asked for: upstream's event reasons (the misspelling is upstream's).
INVALID = "CertificateValidationFailed"
NO_VALID = "NoValidCertificateFound"
DATA_CHANGED = "AdditonalSecretDataChanged"
ROTATION = "CertificateRotationStarted"


def hub_kubeconfig(hub: credentials.Hub) -> dict[str, Any]:
    """The kubeconfig of a kubeClient registration's Secret (see the module's docstring)."""
    cluster: dict[str, Any] = {"server": hub.server}
    if hub.ca_pem is not None:
        cluster["certificate-authority-data"] = base64.b64encode(hub.ca_pem).decode()
    elif hub.insecure:
        # Upstream always writes false; a pyocm hub joined without a CA is reachable only so.
        cluster["insecure-skip-tls-verify"] = True
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": DEFAULT_CLUSTER, "cluster": cluster}],
        "contexts": [
            {
                "name": DEFAULT_CONTEXT,
                "context": {
                    "cluster": DEFAULT_CLUSTER,
                    "namespace": CONTEXT_NAMESPACE,
                    "user": DEFAULT_USER,
                },
            }
        ],
        "current-context": DEFAULT_CONTEXT,
        "preferences": {},
        "users": [
            {
                "name": DEFAULT_USER,
                "user": {
                    "client-certificate": credentials.TLS_CRT,
                    "client-key": credentials.TLS_KEY,
                },
            }
        ],
    }


def additional_data(
    registration: Registration, *, cluster: str, hub: credentials.Hub
) -> dict[str, bytes]:
    """The keys besides the certificate and key (upstream's ``additionalSecretData``)."""
    data = {credentials.CLUSTER_NAME: cluster.encode()}
    if registration.kube_client:
        data[credentials.KUBECONFIG] = render_kubeconfig(hub_kubeconfig(hub)).encode()
    return data


def renewal_reason(
    data: Mapping[str, bytes],
    registration: Registration,
    *,
    additional: Mapping[str, bytes],
    now: datetime,
    threshold: float,
) -> str | None:
    """Why the Secret's certificate must be replaced (an upstream event reason), or None."""
    pem = data.get(credentials.TLS_CRT, b"")
    chain = certs.load_chain(pem)
    if not chain:
        return INVALID
    if not certs.usable(chain, registration.request, now=now):
        return NO_VALID
    if any(data.get(key) != value for key, value in additional.items()):
        return DATA_CHANGED
    if certs.rotation_due(chain, now=now, threshold=threshold) <= now:
        return ROTATION
    return None


def renewal_due(data: Mapping[str, bytes], *, now: datetime, threshold: float) -> datetime:
    """When the stored certificate falls due (``now`` if there is none)."""
    chain = certs.load_chain(data.get(credentials.TLS_CRT, b""))
    return certs.rotation_due(chain, now=now, threshold=threshold) if chain else now


def secret_data(
    *, cert_pem: bytes, key_pem: bytes, additional: Mapping[str, bytes]
) -> dict[str, bytes]:
    return {credentials.TLS_CRT: cert_pem, credentials.TLS_KEY: key_pem, **additional}
