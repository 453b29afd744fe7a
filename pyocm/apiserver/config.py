"""Server configuration: one frozen object, validated once."""

from __future__ import annotations

import ipaddress
import math
import os
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path


def default_data_dir() -> Path:
    """``$PYOCM_DATA_DIR``, else ``$XDG_DATA_HOME/pyocm/hub``, else ``~/.local/share/pyocm/hub``."""
    explicit = os.environ.get("PYOCM_DATA_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "pyocm" / "hub"


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``[v6]:PORT`` or ``:PORT``; port 0 picks a free port."""
    host, sep, port = value.rpartition(":")
    if not sep:
        raise ValueError(f"--listen {value!r}: expected HOST:PORT")
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"--listen {value!r}: port {port!r} is not a number") from None
    if not 0 <= number <= 65535:
        raise ValueError(f"--listen {value!r}: port must be between 0 and 65535")
    return host, number


def is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class ServerConfig:
    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 6443
    #: Storage URL; empty means SQLite in the data directory.
    storage: str = ""
    #: For etcd:// storage, kube-apiserver's --etcd-prefix (every key in etcd starts
    #: with it, so hubs sharing an etcd keep apart), and its --etcd-cafile,
    #: --etcd-certfile and --etcd-keyfile (TLS to etcd, with a client certificate).
    etcd_prefix: str = "/registry"
    etcd_cafile: str = ""
    etcd_certfile: str = ""
    etcd_keyfile: str = ""
    #: SQLite durability: FULL (every acknowledged write survives power loss) or NORMAL.
    sqlite_synchronous: str = "FULL"
    #: Longest certificate the CSR signer issues (kube-controller-manager's
    #: --cluster-signing-duration).
    cluster_signing_duration: timedelta = timedelta(days=365)
    #: Extra names or addresses for the serving certificate.
    extra_sans: tuple[str, ...] = ()
    #: The Kubernetes version reported by /version. 1.30 makes the kubectl dispatcher on
    #: this machine pick a JSON-speaking kubectl until protobuf bodies are supported.
    kube_version: str = "v1.30.0"
    #: How often the CSR cleaner runs.
    csr_cleanup_interval: timedelta = timedelta(hours=1)
    feature_gates: dict[str, bool] = field(default_factory=dict)
    #: Seconds between the bookmarks of a quiet watch that allows them. kube-apiserver
    #: sends one about every minute and kopf re-watches after 70 s of silence; each
    #: bookmark is a write to every agent's watch, so not more often than needed.
    watch_bookmark_interval: float = 55.0
    #: Seconds a client has to finish its TLS handshake, and then to send each request's
    #: headers: kube-apiserver's ReadHeaderTimeout (32 s), which Go's server also applies
    #: to the handshake.
    tls_handshake_timeout: float = 32.0
    read_header_timeout: float = 32.0
    #: Seconds a connection that never authenticated may stay idle after a response
    #: (kube-apiserver's IdleTimeout). Authenticated connections keep theirs longer, so
    #: agents renewing leases every minute reuse them.
    unauthenticated_idle_timeout: float = 90.0
    #: Most connections open at once; 0 derives it from the open-file limit, keeping a
    #: reserve for the database, the logs and the in-process controllers.
    max_connections: int = 0
    #: Most bytes a ManifestWork's manifests may take together (upstream's work webhook
    #: ``--manifestLimit``, 500 KiB by default).
    manifest_limit: int = 500 * 1024
    #: Apply OCM's admission rules (pyocm.hooks) in-process. Off for a hub whose OCM
    #: admission runs as webhooks (``pyocm webhook``): both would run the taint mutator
    #: twice, and the second pass refuses every new taint's stamped ``timeAdded``.
    ocm_admission: bool = True
    #: Seconds a watch without timeoutSeconds lasts at least (it picks up to twice this):
    #: kube-apiserver's --min-request-timeout.
    min_request_timeout: int = 1800
    #: Seconds of changes a watch can resume from; older ones are forgotten at the next
    #: write, and a watch from before them gets 410 Gone (kube-apiserver compacts etcd
    #: every --etcd-compaction-interval, 5 minutes). 0 bounds the history by count only.
    compaction_interval: float = 300.0
    #: Listen with SO_REUSEPORT, so several hub processes on one host share the port and
    #: the kernel spreads new connections over them. Only with shared (etcd) storage.
    reuse_port: bool = False

    def __post_init__(self) -> None:
        if not 0 < self.watch_bookmark_interval <= 60:
            raise ValueError("watch_bookmark_interval must be more than 0 and at most 60 seconds")
        for name in (
            "tls_handshake_timeout",
            "read_header_timeout",
            "unauthenticated_idle_timeout",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be more than 0 seconds")
        if self.max_connections < 0:
            raise ValueError("max_connections must be 0 (derived) or more")
        if self.manifest_limit <= 0:
            raise ValueError("manifest_limit must be more than 0 bytes")
        if self.min_request_timeout < 1:
            raise ValueError("min_request_timeout must be at least 1 second")
        if self.compaction_interval < 0:
            raise ValueError("compaction_interval must be 0 (by count only) or more")
        if self.reuse_port and not self.shared_storage:
            raise ValueError(
                "--reuse-port and --replicas need shared storage (--storage etcd://HOST:PORT):"
                " replicas on SQLite would each have a database of their own"
            )

    @property
    def watch_history_seconds(self) -> float:
        """How long the store keeps a change for watches (``compaction_interval``, none
        when 0: the store's count bound alone applies)."""
        return self.compaction_interval or math.inf

    @property
    def shared_storage(self) -> bool:
        """Whether other API server processes may serve the same store (etcd): the
        server's controllers then run only while this process holds their Lease."""
        return self.storage_url.startswith("etcd://")

    @property
    def storage_url(self) -> str:
        return self.storage or f"sqlite:///{self.data_dir / 'state.db'}"

    def storage_options(self) -> dict[str, object]:
        """The options of ``storage_url``'s store (storage.open_backend's keywords)."""
        options: dict[str, object] = {"history_max_age": self.watch_history_seconds}
        scheme = self.storage_url.partition("://")[0]
        if scheme == "sqlite":
            options["synchronous"] = self.sqlite_synchronous
        elif scheme == "etcd":
            options.update(
                etcd_prefix=self.etcd_prefix,
                etcd_cafile=self.etcd_cafile,
                etcd_certfile=self.etcd_certfile,
                etcd_keyfile=self.etcd_keyfile,
                # etcd keeps history itself: compact it as kube-apiserver does.
                etcd_compaction_interval=self.compaction_interval,
            )
        return options

    @property
    def pki_dir(self) -> Path:
        return self.data_dir / "pki"

    @property
    def admin_kubeconfig(self) -> Path:
        return self.data_dir / "admin.kubeconfig"
