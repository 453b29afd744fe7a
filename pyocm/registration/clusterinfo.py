"""Finding a hub's CA the way ``kubeadm join`` does: read ``kube-public/cluster-info``
anonymously, then trust its CA only if it matches the ``--ca-cert-hash`` the admin gave.

The first connection cannot verify the server (the CA is what it fetches), so it sends
no credential at all; the bootstrap token is only ever sent over a verified connection.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import yaml  # type: ignore[import-untyped,unused-ignore]

from pyocm.kube import kinds
from pyocm.registration import bootstraptoken
from pyocm.registration.agent.errors import AgentError
from pyocm.runtime.client import Api

Obj = dict[str, Any]


def ca_of(cluster_info: Obj) -> bytes:
    """The CA PEM inside a cluster-info ConfigMap."""
    try:
        config = yaml.safe_load(str((cluster_info.get("data") or {}).get("kubeconfig", ""))) or {}
        cluster = (config.get("clusters") or [])[0]["cluster"]
        return base64.b64decode(cluster["certificate-authority-data"], validate=True)
    except (yaml.YAMLError, IndexError, KeyError, TypeError, binascii.Error) as err:
        raise AgentError(
            f"the hub's kube-public/cluster-info is not a kubeconfig with a CA ({type(err).__name__})"
        ) from None


def _anonymous(server: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": "hub", "cluster": {"server": server, "insecure-skip-tls-verify": True}}
        ],
        "users": [{"name": "anonymous", "user": {}}],
        "contexts": [{"name": "discovery", "context": {"cluster": "hub", "user": "anonymous"}}],
        "current-context": "discovery",
    }


async def discover_ca(server: str, *, ca_cert_hash: str) -> bytes:
    """The hub's CA, verified against ``ca_cert_hash`` (``sha256:<hex>``)."""
    async with Api.from_config(_anonymous(server)) as api:
        info = await api.get(kinds.CONFIGMAP, "cluster-info", namespace="kube-public")
    ca_pem = ca_of(info)
    if not bootstraptoken.ca_matches(ca_pem, ca_cert_hash):
        raise AgentError(
            f"the CA of {server} does not match --ca-cert-hash {ca_cert_hash} "
            f"(it hashes to {bootstraptoken.ca_cert_hash(ca_pem)}); check the hub address and the join command"
        )
    return ca_pem
