"""In-cluster configuration: connecting from inside a pod, as client libraries do.

A pod's ServiceAccount credential is mounted at
``/var/run/secrets/kubernetes.io/serviceaccount`` (``token``, ``ca.crt``,
``namespace``) and the API server's Service is named by ``KUBERNETES_SERVICE_HOST`` and
``KUBERNETES_SERVICE_PORT`` (client-go's ``rest.InClusterConfig``). The token is given
as a file, so a rotated (bound, expiring) token is read again when the server refuses
the old one.

``PYOCM_SERVICE_ACCOUNT_DIR`` moves the mount point (for tests, and for running a
command outside a pod with a pod's credential); nothing else differs from a pod.
"""

from __future__ import annotations

import os
from pathlib import Path

from lightkube.config.kubeconfig import KubeConfig, SingleConfig

from pyocm.runtime.errors import ApiConnectionError

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
HOST_ENV, PORT_ENV = "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"
DIR_ENV = "PYOCM_SERVICE_ACCOUNT_DIR"


def account_dir() -> Path:
    return Path(os.environ.get(DIR_ENV) or SERVICE_ACCOUNT_DIR)


def available() -> bool:
    """Whether this process runs in a pod: the Service's address in the environment
    (client-go's test: ``ErrNotInCluster`` without it)."""
    return bool(os.environ.get(HOST_ENV) and os.environ.get(PORT_ENV))


def config() -> SingleConfig:
    """The in-cluster connection; :class:`ApiConnectionError` saying what is missing."""
    if not available():
        raise ApiConnectionError(
            f"not in a cluster: {HOST_ENV} and {PORT_ENV} must be set (or pass a kubeconfig)"
        )
    where = account_dir()
    for name in ("token", "ca.crt", "namespace"):
        if not (where / name).is_file():
            raise ApiConnectionError(f"in-cluster configuration: {where / name} does not exist")
    picked = KubeConfig.from_service_account(where).get()
    if picked is None:  # from_one always names its context; kept for the type
        raise ApiConnectionError("in-cluster configuration has no context")
    return picked


def namespace() -> str:
    """The pod's namespace (the ServiceAccount's), as mounted."""
    return (account_dir() / "namespace").read_text().strip()
