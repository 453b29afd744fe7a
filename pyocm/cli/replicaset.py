"""``pyocm hub --replicas N``: N hub processes on one host behind one port.

Each replica is ``pyocm hub`` with the same options plus ``--reuse-port``: every process
listens on the same port with SO_REUSEPORT and the kernel spreads new connections over
them, so TLS handshakes and requests use every core without a proxy in front. (A proxy
such as HAProxy is what replicas on several hosts need; on one host it would only add
a hop and a process that every byte crosses.) They share ``--data-dir``, whose keys the
first one creates (:func:`pyocm.apiserver.pkifiles.locked`).

This process only supervises: it forwards SIGINT and SIGTERM, starts again a replica
that exits while the set is not stopping (as a Deployment's ReplicaSet would), and
exits once every replica has.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from types import FrameType

from pyocm.apiserver.config import ServerConfig

#: Seconds before starting again a replica that exited, so one that cannot start (a
#: broken etcd URL) does not spin.
RESTART_DELAY = 1.0


def replica_args(argv: list[str], *, listen: str) -> list[str]:
    """The replica's command line: ``argv`` (``hub`` and its options) without
    ``--replicas``, plus ``--reuse-port`` and ``--listen`` (the last one given wins)."""
    args: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--replicas":
            skip = True
        elif not arg.startswith("--replicas="):
            args.append(arg)
    return [*args, "--reuse-port", "--listen", listen]


def supervise(config: ServerConfig, *, replicas: int) -> int:
    """Run ``replicas`` hub processes until a signal; the worst exit code of the last
    ones (a replica that died and was replaced does not count)."""
    port_holder = None
    port = config.port
    if port == 0:  # pick one port for all: hold it (bound, not listening) meanwhile
        port_holder = _reserve_port(config.host)
        port = port_holder.getsockname()[1]
    host = f"[{config.host}]" if ":" in config.host else config.host
    argv = sys.argv[sys.argv.index("hub") :]
    command = [sys.executable, "-m", "pyocm", *replica_args(argv, listen=f"{host}:{port}")]
    stopping: list[int] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        stopping.append(signum)
        for process in running:
            if process.poll() is None:
                process.send_signal(signum)

    running = [subprocess.Popen(command) for _ in range(replicas)]
    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    print(f"pyocm hub: {replicas} replicas on port {port}", flush=True)
    try:
        while any(process.poll() is None for process in running) or not stopping:
            for i, process in enumerate(running):
                code = process.poll()
                if code is None or stopping:
                    continue
                print(f"pyocm hub: replica {process.pid} exited ({code}); starting another")
                time.sleep(RESTART_DELAY)
                running[i] = subprocess.Popen(command)
            time.sleep(0.2)
    finally:
        if port_holder is not None:
            port_holder.close()
    # A replica still starting when the signal came ends by it: stopped as asked.
    asked = {-signum for signum in stopping}
    return max(
        0 if process.returncode in asked else abs(int(process.returncode or 0))
        for process in running
    )


def _reserve_port(host: str) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, 0))
    return sock
