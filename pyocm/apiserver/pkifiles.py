"""The hub's key material on disk, created on first start and reused after.

``<data>/pki`` holds the CA (which both authenticates client certificates and signs
approved CSRs, as OCM requires), the serving certificate (re-issued when the listen
host is not among its names or it nears expiry), the admin client certificate (group
``system:masters``) and the service-account token signing key. Files are 0600.

API server replicas on one etcd share one data directory (they run on one host,
sharing a port): they must trust and sign with the same CA and verify each other's
service-account tokens. An exclusive lock on ``pki/.lock`` makes the first replica
create the files and every other one, started at the same moment, read them.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography import x509

from pyocm.apiserver.config import ServerConfig
from pyocm.pki import keys
from pyocm.pki.ca import CertificateAuthority

CA_VALIDITY = timedelta(days=3650)
LEAF_VALIDITY = timedelta(days=365)
ADMIN_USER = "pyocm-admin"
MASTERS = "system:masters"


@dataclass
class HubPki:
    ca: CertificateAuthority
    serving_cert: Path
    serving_key: Path
    ca_cert: Path
    admin_cert_pem: bytes
    admin_key_pem: bytes
    sa_key: Any


def load_or_create(config: ServerConfig) -> HubPki:
    pki = config.pki_dir
    pki.mkdir(parents=True, exist_ok=True)
    os.chmod(pki, 0o700)
    with locked(pki):
        return _load_or_create(config, pki)


@contextlib.contextmanager
def locked(pki: Path) -> Iterator[None]:
    """Hold the data directory's key lock: one process at a time creates or renews keys
    (and writes files derived from them, such as the admin kubeconfig)."""
    fd = os.open(pki / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _load_or_create(config: ServerConfig, pki: Path) -> HubPki:
    ca = _ca(pki)
    hosts = serving_hosts(config)
    serving_cert, serving_key = pki / "serving.crt", pki / "serving.key"
    if not _serving_ok(serving_cert, hosts):
        cert_pem, key_pem = ca.issue_serving(hosts=hosts, valid_for=LEAF_VALIDITY)
        _write(serving_cert, cert_pem)
        _write(serving_key, key_pem)
    admin_cert, admin_key = pki / "admin.crt", pki / "admin.key"
    if not admin_cert.exists() or _expires_soon(admin_cert.read_bytes()):
        cert_pem, key_pem = ca.issue_client(
            common_name=ADMIN_USER, organizations=[MASTERS], valid_for=LEAF_VALIDITY
        )
        _write(admin_cert, cert_pem)
        _write(admin_key, key_pem)
    sa_path = pki / "sa.key"
    if not sa_path.exists():
        _write(sa_path, keys.private_key_to_pem(keys.generate_private_key()))
    return HubPki(
        ca=ca,
        serving_cert=serving_cert,
        serving_key=serving_key,
        ca_cert=pki / "ca.crt",
        admin_cert_pem=admin_cert.read_bytes(),
        admin_key_pem=admin_key.read_bytes(),
        sa_key=keys.load_private_key(sa_path.read_bytes()),
    )


def serving_hosts(config: ServerConfig) -> list[str]:
    hosts = ["localhost", "127.0.0.1", "::1"]
    for host in (config.host, *config.extra_sans):
        if host and host not in ("0.0.0.0", "::") and host not in hosts:
            hosts.append(host)
    return hosts


def _ca(pki: Path) -> CertificateAuthority:
    cert, key = pki / "ca.crt", pki / "ca.key"
    if cert.exists() and key.exists():
        return CertificateAuthority.load(cert.read_bytes(), key.read_bytes())
    ca = CertificateAuthority.create("pyocm-hub-ca", valid_for=CA_VALIDITY)
    _write(key, ca.key_pem)
    _write(cert, ca.cert_pem)
    return ca


def _serving_ok(path: Path, hosts: list[str]) -> bool:
    if not path.exists():
        return False
    cert = x509.load_pem_x509_certificate(path.read_bytes())
    if _expires_soon(path.read_bytes()):
        return False
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    names = {str(n.value) for n in sans}
    return all(h in names for h in hosts)


def _expires_soon(pem: bytes) -> bool:
    cert = x509.load_pem_x509_certificate(pem)
    return cert.not_valid_after_utc - datetime.now(UTC) < timedelta(days=30)


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
