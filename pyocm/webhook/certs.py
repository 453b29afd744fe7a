"""The serving certificate from ``--cert-dir``, reloaded when its files change.

A kubelet updates a mounted Secret in place (it swaps the ``..data`` symlink), and a
certificate controller rotates the Secret before it expires; controller-runtime's
certwatcher picks the new pair up without restarting the listener. Here every TLS
handshake first reads the two files (a few hundred bytes each; their contents, not
their timestamps, which a rewrite within the same clock tick leaves unchanged): when
either changed, the pair is loaded into a fresh context that this handshake and the
later ones use, so the next connection after a rotation already sees the new
certificate. A pair that does not load
(a write caught half done) leaves the current one serving until the files settle.
"""

from __future__ import annotations

import logging
import ssl
from pathlib import Path

log = logging.getLogger(__name__)

#: controller-runtime's default ``CertDir``: ``{TempDir}/k8s-webhook-server/serving-certs``.
DEFAULT_CERT_DIR = Path("/tmp/k8s-webhook-server/serving-certs")
CERT_NAME = "tls.crt"
KEY_NAME = "tls.key"

_Stamp = tuple[bytes, bytes]


class ReloadingCertificate:
    def __init__(self, cert_dir: Path) -> None:
        self.cert_file = cert_dir / CERT_NAME
        self.key_file = cert_dir / KEY_NAME
        self._stamp = self._read_stamp()
        self._current = self._load()  # raises: a webhook without its pair cannot start
        # The listener's context: its callback hands each handshake the current pair.
        self.server_context = self._load()
        self.server_context.sni_callback = self._choose

    def refresh(self) -> None:
        """Load the pair again if the files changed since it was last loaded."""
        try:
            stamp = self._read_stamp()
        except OSError as err:
            log.warning("serving certificate unreadable, keeping the current one: %s", err)
            return
        if stamp == self._stamp:
            return
        try:
            self._current = self._load()
        except (OSError, ssl.SSLError, ValueError) as err:
            log.warning("serving certificate did not load, keeping the current one: %s", err)
            return
        self._stamp = stamp
        log.info("serving certificate reloaded from %s", self.cert_file)

    def _choose(
        self, connection: ssl.SSLObject, server_name: str | None, _: ssl.SSLContext
    ) -> None:
        self.refresh()
        connection.context = self._current

    def _read_stamp(self) -> _Stamp:
        return self.cert_file.read_bytes(), self.key_file.read_bytes()

    def _load(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = ssl.TLSVersion.TLSv1_2  # controller-runtime's default
        context.load_cert_chain(self.cert_file, self.key_file)
        return context
