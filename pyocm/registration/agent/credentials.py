"""The hub kubeconfig secret: what it holds, whether it is still good, and how to build it.

Keys are upstream's (``kubeconfig``, ``tls.crt``, ``tls.key``, ``cluster-name``,
``agent-name``). The stored ``kubeconfig`` embeds the certificate and key so the secret
is usable on its own; it is valid only for the hub the bootstrap kubeconfig names
(same server and CA) and while a certificate for the agent's subject is unexpired.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pyocm.pki import kubeconfig as kubeconfigs
from pyocm.registration.agent import certs

KUBECONFIG = "kubeconfig"
TLS_CRT = "tls.crt"
TLS_KEY = "tls.key"
CLUSTER_NAME = "cluster-name"
AGENT_NAME = "agent-name"


@dataclass(frozen=True)
class Hub:
    """Where the hub is and which CA vouches for it, from the bootstrap kubeconfig."""

    server: str
    ca_pem: bytes | None
    insecure: bool = False

    @classmethod
    def from_bootstrap(cls, bootstrap: Mapping[str, Any]) -> Hub:
        info = kubeconfigs.parse_kubeconfig(kubeconfigs.render_kubeconfig(bootstrap))
        return cls(server=info.server, ca_pem=info.ca_pem, insecure=info.insecure)

    def kubeconfig(self, *, cert_pem: bytes, key_pem: bytes) -> dict[str, Any]:
        return kubeconfigs.build_kubeconfig(
            server=self.server,
            ca_pem=self.ca_pem,
            cert_pem=cert_pem,
            key_pem=key_pem,
            insecure=self.insecure,
        )


def secret_data(
    hub: Hub, *, subject: certs.Subject, cert_pem: bytes, key_pem: bytes
) -> dict[str, bytes]:
    return {
        KUBECONFIG: kubeconfigs.render_kubeconfig(
            hub.kubeconfig(cert_pem=cert_pem, key_pem=key_pem)
        ).encode(),
        TLS_CRT: cert_pem,
        TLS_KEY: key_pem,
        CLUSTER_NAME: subject.cluster.encode(),
        AGENT_NAME: subject.agent.encode(),
    }


def valid(data: Mapping[str, bytes], *, hub: Hub, subject: certs.Subject, now: datetime) -> bool:
    """Upstream's "hub kubeconfig valid" check, on the secret's data."""
    if not data.get(KUBECONFIG) or not data.get(TLS_KEY):
        return False
    try:
        stored = kubeconfigs.parse_kubeconfig(data[KUBECONFIG].decode())
    except (kubeconfigs.KubeconfigError, UnicodeDecodeError, ValueError):
        return False
    if stored.server != hub.server or stored.ca_pem != hub.ca_pem:
        return False
    return certs.usable(certs.load_chain(data.get(TLS_CRT, b"")), subject, now=now)
