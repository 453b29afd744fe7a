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
from pyocm.kube.status import ApiError
from pyocm.pki.kubeconfig import build_kubeconfig
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


#: The API group a hub serves; ``clusteradm join``'s preflight looks for it too.
CLUSTER_GROUP_PATH = "/apis/cluster.open-cluster-management.io/v1"


async def check_token(server: str, *, ca_pem: bytes, token: str) -> None:
    """Ask the hub, over the verified connection, whether it takes ``token``.

    ``clusteradm join``'s preflight makes its first requests with the bootstrap
    kubeconfig (the server version, then the cluster API group) before it deploys
    anything on the managed cluster; this is that check, so a mistyped or expired token
    fails before a cluster is started or a data directory written."""
    config = build_kubeconfig(server=server, ca_pem=ca_pem, token=token)
    async with Api.from_config(config) as api:
        try:
            await api.text(CLUSTER_GROUP_PATH)
        except ApiError as err:
            if err.code == 401:
                raise AgentError(
                    f"the hub at {server} refused the bootstrap credential (an expired or "
                    "deleted token?); get a new one with 'pyocm get token' on the hub"
                ) from None
            if err.code == 404:
                raise AgentError(
                    f"no apigroup cluster.open-cluster-management.io/v1 detected at {server}: "
                    "is it an OCM hub?"
                ) from None
            raise
