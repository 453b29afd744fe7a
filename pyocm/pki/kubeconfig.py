"""Kubeconfig files: writing self-contained ones and reading the parts pyocm needs.

Written kubeconfigs embed everything (``certificate-authority-data`` plus either
``client-certificate-data``/``client-key-data`` or ``token``) under the names the OCM
registration agent uses (``default-cluster``, ``default-auth``, ``default-context``), so
they can be copied between machines. They are written atomically with mode 0600
because they hold credentials.

Reading follows client-go's loader for one context: the named or current context picks
a cluster and a user; ``*-data`` fields are base64, path fields are resolved against the
kubeconfig's folder; a client certificate needs a key; ``token`` wins over
``tokenFile``. Exception messages name fields and files, never their contents.
"""

from __future__ import annotations

import base64
import binascii
import os
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped,unused-ignore]

DEFAULT_CLUSTER = "default-cluster"
DEFAULT_USER = "default-auth"
DEFAULT_CONTEXT = "default-context"

_INSECURE_WITH_CA = "specifying a root certificates file with the insecure flag is not allowed"


class KubeconfigError(ValueError):
    """Raised when a kubeconfig cannot be built, read or resolved."""


@dataclass(frozen=True)
class KubeconfigInfo:
    """What a client needs from one kubeconfig context, with files already read."""

    server: str
    ca_pem: bytes | None
    cert_pem: bytes | None
    key_pem: bytes | None
    token: str | None
    insecure: bool


def build_kubeconfig(
    *,
    server: str,
    ca_pem: bytes | None = None,
    cert_pem: bytes | None = None,
    key_pem: bytes | None = None,
    token: str | None = None,
    insecure: bool = False,
    namespace: str | None = None,
) -> dict[str, Any]:
    """Return a kubeconfig dict with one cluster, one user and one current context.

    Exactly one credential is required: a client certificate with its key, or a token.
    A CA and ``insecure`` are mutually exclusive, as client-go refuses the combination.
    """
    if (cert_pem is None) != (key_pem is None):
        raise KubeconfigError("a client certificate and its key must be given together")
    if (cert_pem is None) == (token is None):
        raise KubeconfigError("exactly one of a client certificate or a token is required")
    if insecure and ca_pem is not None:
        raise KubeconfigError(_INSECURE_WITH_CA)
    cluster: dict[str, Any] = {"server": server}
    if ca_pem is not None:
        cluster["certificate-authority-data"] = _b64(ca_pem)
    if insecure:
        cluster["insecure-skip-tls-verify"] = True
    user: dict[str, Any] = {"token": token} if token is not None else {}
    if cert_pem is not None and key_pem is not None:
        user["client-certificate-data"] = _b64(cert_pem)
        user["client-key-data"] = _b64(key_pem)
    context: dict[str, Any] = {"cluster": DEFAULT_CLUSTER, "user": DEFAULT_USER}
    if namespace is not None:
        context["namespace"] = namespace
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": DEFAULT_CLUSTER, "cluster": cluster}],
        "contexts": [{"name": DEFAULT_CONTEXT, "context": context}],
        "current-context": DEFAULT_CONTEXT,
        "preferences": {},
        "users": [{"name": DEFAULT_USER, "user": user}],
    }


def render_kubeconfig(config: Mapping[str, Any]) -> str:
    """Serialise a kubeconfig dict as YAML, keeping the key order kubectl writes.

    libyaml's emitter when PyYAML has it: for a kubeconfig, the text PyYAML's Python
    emitter writes, about ten times faster; an agent renders one for every certificate
    it gets.
    """
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return str(yaml.dump(dict(config), Dumper=dumper, default_flow_style=False, sort_keys=False))


def write_kubeconfig(path: str | os.PathLike[str], config: Mapping[str, Any]) -> None:
    """Write ``config`` to ``path`` with mode 0600, atomically.

    Readers (agents watching their hub kubeconfig) never see a half-written file: the
    text goes to a private temporary file in the same folder, which then replaces
    ``path``.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(render_kubeconfig(config))
        os.chmod(temporary, 0o600)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load_kubeconfig(path: str | os.PathLike[str], *, context: str | None = None) -> KubeconfigInfo:
    """Read the kubeconfig at ``path``; relative file paths resolve against its folder."""
    target = Path(path)
    try:
        text = target.read_text(encoding="utf-8")
    except OSError as err:
        raise KubeconfigError(f"unable to read kubeconfig {target}: {err.strerror}") from None
    return parse_kubeconfig(text, base_dir=target.parent, context=context)


def parse_kubeconfig(
    text: str, *, base_dir: str | os.PathLike[str] | None = None, context: str | None = None
) -> KubeconfigInfo:
    """Resolve one context (``context`` or ``current-context``) of kubeconfig ``text``.

    Relative file paths resolve against ``base_dir`` (the working folder when None).
    """
    config = _load_yaml(text)
    folder = Path(base_dir) if base_dir is not None else Path.cwd()
    context_name = context or str(config.get("current-context") or "")
    if not context_name:
        raise KubeconfigError("invalid configuration: no context chosen")
    entry = _named(config, "contexts", "context", context_name)
    if entry is None:
        raise KubeconfigError(
            f"invalid configuration: context was not found for specified context: {context_name}"
        )
    cluster_name = str(entry.get("cluster") or "")
    cluster = _named(config, "clusters", "cluster", cluster_name)
    if cluster is None:
        raise KubeconfigError(
            f'invalid configuration: cluster "{cluster_name}" was not found for context '
            f'"{context_name}"'
        )
    user_name = str(entry.get("user") or "")
    user = _named(config, "users", "user", user_name)
    if user is None:
        raise KubeconfigError(
            f'invalid configuration: user "{user_name}" was not found for context "{context_name}"'
        )
    return _resolve(cluster=cluster, cluster_name=cluster_name, user=user, folder=folder)


def _resolve(
    *, cluster: Mapping[str, Any], cluster_name: str, user: Mapping[str, Any], folder: Path
) -> KubeconfigInfo:
    server = str(cluster.get("server") or "")
    if not server:
        raise KubeconfigError(
            f'invalid configuration: no server found for cluster "{cluster_name}"'
        )
    insecure = cluster.get("insecure-skip-tls-verify") is True
    ca_pem = _data_or_file(cluster, "certificate-authority", folder)
    if insecure and ca_pem is not None:
        raise KubeconfigError(_INSECURE_WITH_CA)
    for kind in ("client-certificate", "client-key"):
        if user.get(f"{kind}-data") and user.get(kind):
            raise KubeconfigError(f"{kind}-data and {kind} are both specified")
    cert_pem = _data_or_file(user, "client-certificate", folder)
    key_pem = _data_or_file(user, "client-key", folder)
    if cert_pem is not None and key_pem is None:
        raise KubeconfigError("client-key-data or client-key must be specified with a certificate")
    return KubeconfigInfo(
        server=server,
        ca_pem=ca_pem,
        cert_pem=cert_pem,
        key_pem=key_pem,
        token=_token(user, folder),
        insecure=insecure,
    )


def _load_yaml(text: str) -> Mapping[str, Any]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        config = yaml.load(text, Loader=loader)
    except yaml.YAMLError:
        # YAML errors quote the document, which holds credentials.
        raise KubeconfigError("kubeconfig is not valid YAML") from None
    if not isinstance(config, Mapping):
        raise KubeconfigError("kubeconfig must be a YAML mapping")
    return config


def _named(
    config: Mapping[str, Any], section: str, field: str, name: str
) -> Mapping[str, Any] | None:
    for item in config.get(section) or []:
        if isinstance(item, Mapping) and item.get("name") == name:
            body = item.get(field)
            return body if isinstance(body, Mapping) else {}
    return None


def _data_or_file(section: Mapping[str, Any], field: str, folder: Path) -> bytes | None:
    """``<field>-data`` decoded from base64, else the file named by ``<field>``."""
    data = section.get(f"{field}-data")
    if data:
        try:
            return base64.b64decode(str(data), validate=True)
        except (binascii.Error, ValueError):
            raise KubeconfigError(f"{field}-data is not valid base64") from None
    path = section.get(field)
    if not path:
        return None
    return _read_bytes(folder / str(path), field)


def _token(user: Mapping[str, Any], folder: Path) -> str | None:
    token = user.get("token")
    if token:
        return str(token)
    token_file = user.get("tokenFile")
    if not token_file:
        return None
    try:
        return _read_bytes(folder / str(token_file), "tokenFile").decode("utf-8").strip()
    except UnicodeDecodeError:
        raise KubeconfigError("tokenFile does not hold UTF-8 text") from None


def _read_bytes(path: Path, field: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as err:
        raise KubeconfigError(f"unable to read {field} {path}: {err.strerror}") from None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def client_ssl_context(info: KubeconfigInfo) -> ssl.SSLContext:
    """A TLS context that trusts the kubeconfig's CA and presents its client certificate.

    ``ssl`` loads certificates only from files, so the key goes through a private
    temporary folder that is removed before returning.
    """
    ctx = ssl.create_default_context()
    if info.ca_pem:
        ctx.load_verify_locations(cadata=info.ca_pem.decode())
    if info.insecure:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    if info.cert_pem and info.key_pem:
        with tempfile.TemporaryDirectory() as folder:
            cert, key = Path(folder) / "client.crt", Path(folder) / "client.key"
            cert.write_bytes(info.cert_pem)
            key.touch(mode=0o600)
            key.write_bytes(info.key_pem)
            ctx.load_cert_chain(str(cert), str(key))
    return ctx
