"""``pyocm hub``: the API server and the hub's registration controllers in one process.

The controllers and the CRD installer reach the server through its API with the admin
kubeconfig, exactly as ``pyocm controller`` does against any other API server.

On etcd, several hubs may serve one store: ``--reuse-port`` lets replicas on one host
share the port (the kernel spreads connections over them, each process its own event
loop and core), ``--replicas N`` starts N such processes and restarts one that dies, and
the controllers run in one replica at a time under Lease leader election
(:mod:`pyocm.cli.hubelection`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import signal
import socket
from collections.abc import Coroutine
from datetime import timedelta
from pathlib import Path
from typing import Any, NoReturn

import typer

from pyocm import hubmanager
from pyocm.addon.builtin import addons_named
from pyocm.apiserver.config import ServerConfig, default_data_dir, parse_listen
from pyocm.apiserver.server import HubServer
from pyocm.apiserver.storage.backends import open_backend
from pyocm.apiserver.storage.errors import StorageError
from pyocm.base.loop import run_main
from pyocm.cli import hubelection, replicaset
from pyocm.cli.common import fix_mmap_threshold, raise_open_file_limit, setup_logging
from pyocm.local import crdinstall
from pyocm.registration.hub.manager import HubOptions
from pyocm.runtime.client import Api

log = logging.getLogger("pyocm.hub")


def hub(
    data_dir: Path = typer.Option(
        None,
        "--data-dir",
        help="Where the hub keeps its database, keys and admin.kubeconfig (default: $PYOCM_DATA_DIR, else $XDG_DATA_HOME/pyocm/hub, else ~/.local/share/pyocm/hub).",
    ),
    listen: str = typer.Option(
        "127.0.0.1:6443", "--listen", help="HOST:PORT to serve on; port 0 picks a free one."
    ),
    cluster_signing_duration: str = typer.Option(
        "8760h",
        "--cluster-signing-duration",
        help="Longest client certificate the hub signs, e.g. 8760h or 30m.",
    ),
    sqlite_synchronous: str = typer.Option(
        "FULL",
        "--sqlite-synchronous",
        help="FULL (acknowledged writes survive power loss) or NORMAL.",
    ),
    storage: str = typer.Option(
        "",
        "--storage",
        help="Where the hub stores objects: etcd://HOST:PORT[,HOST:PORT...] for etcd v3 (members"
        " tried in order), or sqlite:///PATH; default: SQLite in --data-dir.",
    ),
    etcd_prefix: str = typer.Option(
        "/registry",
        "--etcd-prefix",
        help="The prefix of every key in etcd; hubs sharing an etcd need their own"
        " (kube-apiserver's flag).",
    ),
    etcd_cafile: str = typer.Option(
        "", "--etcd-cafile", help="CA bundle to verify etcd with; implies TLS to etcd."
    ),
    etcd_certfile: str = typer.Option(
        "", "--etcd-certfile", help="Client certificate for etcd (PEM); implies TLS to etcd."
    ),
    etcd_keyfile: str = typer.Option(
        "", "--etcd-keyfile", help="Key of --etcd-certfile (PEM), if not in that file."
    ),
    controllers: bool = typer.Option(
        True,
        "--controllers/--no-controllers",
        help="Run the hub's registration controllers in this process.",
    ),
    feature_gates: str = typer.Option(
        "",
        "--feature-gates",
        help="Comma-separated Gate=true|false, e.g. ManagedClusterAutoApproval=true.",
    ),
    auto_approved_csr_users: str = typer.Option(
        "",
        "--auto-approved-csr-users",
        help="Comma-separated users whose join CSRs are approved without an admin (needs ManagedClusterAutoApproval).",
    ),
    watch_bookmark_interval: float = typer.Option(
        55.0,
        "--watch-bookmark-interval",
        min=1.0,
        max=60.0,
        help="Seconds between bookmarks on a quiet watch (kube-apiserver: about a minute).",
    ),
    tls_handshake_timeout: float = typer.Option(
        32.0, "--tls-handshake-timeout", min=0.1, help="Seconds to finish a TLS handshake."
    ),
    read_header_timeout: float = typer.Option(
        32.0,
        "--read-header-timeout",
        min=0.1,
        help="Seconds to send a request's headers (kube-apiserver: 32).",
    ),
    unauthenticated_idle_timeout: float = typer.Option(
        90.0,
        "--unauthenticated-idle-timeout",
        min=0.1,
        help="Seconds a connection that never authenticated may stay idle (kube-apiserver: 90).",
    ),
    max_connections: int = typer.Option(
        0,
        "--max-connections",
        min=0,
        help="Most open connections; 0 derives it from the open-file limit.",
    ),
    manifest_limit: int = typer.Option(
        500 * 1024,
        "--manifest-limit",
        "--manifestLimit",
        min=1,
        help="Most bytes a ManifestWork's manifests may take together (upstream's work webhook flag).",
    ),
    addons: str = typer.Option(
        "",
        "--addons",
        help="Comma-separated add-ons pyocm implements to run on this hub, e.g. helloworld.",
    ),
    ocm_admission: bool = typer.Option(
        True,
        "--ocm-admission/--no-ocm-admission",
        help="Apply OCM's admission rules in-process; off when 'pyocm webhook' serves them.",
    ),
    min_request_timeout: int = typer.Option(
        1800,
        "--min-request-timeout",
        min=1,
        help="Seconds a watch lasts at least when its client sets no timeout; it ends at a"
        " random time before twice this (kube-apiserver's flag).",
    ),
    compaction_interval: str = typer.Option(
        "5m",
        "--compaction-interval",
        help="How far back a watch can resume, e.g. 5m or 90s: older changes are forgotten and"
        " a watch from before them gets 410 Gone, after which clients list again"
        " (kube-apiserver's --etcd-compaction-interval); 0 keeps the last 100,000 changes.",
    ),
    reuse_port: bool = typer.Option(
        False,
        "--reuse-port",
        help="Share --listen's port with other hub replicas on this host (SO_REUSEPORT);"
        " needs --storage etcd://.",
    ),
    replicas: int = typer.Option(
        1,
        "--replicas",
        min=1,
        help="Run N hub processes sharing --listen's port and --data-dir (a replica that"
        " dies is started again); needs --storage etcd://.",
    ),
    log_level: str = typer.Option("INFO", "--log-level"),
) -> None:
    """Run a hub API server in the foreground until Ctrl-C or SIGTERM."""
    setup_logging(log_level)
    raise_open_file_limit()
    fix_mmap_threshold()
    try:
        host, port = parse_listen(listen)
        duration = parse_duration(cluster_signing_duration)
        gates = parse_feature_gates(feature_gates)
        addon_names = parse_addons(addons)
        history = parse_interval(compaction_interval)
    except ValueError as err:
        _fail(str(err))
    if sqlite_synchronous.upper() not in ("FULL", "NORMAL"):
        _fail("--sqlite-synchronous must be FULL or NORMAL")
    config = ServerConfig(
        data_dir=(data_dir or default_data_dir()).expanduser().resolve(),
        host=host,
        port=port,
        cluster_signing_duration=duration,
        sqlite_synchronous=sqlite_synchronous.upper(),
        feature_gates=gates,
        watch_bookmark_interval=watch_bookmark_interval,
        tls_handshake_timeout=tls_handshake_timeout,
        read_header_timeout=read_header_timeout,
        unauthenticated_idle_timeout=unauthenticated_idle_timeout,
        max_connections=max_connections,
        manifest_limit=manifest_limit,
        ocm_admission=ocm_admission,
        min_request_timeout=min_request_timeout,
        compaction_interval=history,
        storage=storage,
        etcd_prefix=etcd_prefix,
        etcd_cafile=etcd_cafile,
        etcd_certfile=etcd_certfile,
        etcd_keyfile=etcd_keyfile,
    )
    try:
        check_storage(config)
        check_replicas(config, replicas=replicas, reuse_port=reuse_port)
    except (ValueError, TypeError) as err:
        _fail(str(err))
    if replicas > 1:
        raise typer.Exit(replicaset.supervise(config, replicas=replicas))
    config = dataclasses.replace(config, reuse_port=reuse_port)
    options = None
    if controllers:
        users = tuple(user.strip() for user in auto_approved_csr_users.split(",") if user.strip())
        options = HubOptions(feature_gates=gates, auto_approved_users=users, addons=addon_names)
    try:
        check_port(host, port, reuse_port=reuse_port)
        _run(config, options)
    except (OSError, StorageError) as err:  # a busy port; a full disk, a damaged store
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None


def check_storage(config: ServerConfig) -> None:
    """Refuse a malformed --storage URL, or etcd options without etcd, before anything
    is written into the data directory."""
    if not config.storage_url.startswith("etcd://"):
        given = [
            flag
            for flag, value in (
                ("--etcd-cafile", config.etcd_cafile),
                ("--etcd-certfile", config.etcd_certfile),
                ("--etcd-keyfile", config.etcd_keyfile),
            )
            if value
        ]
        if given or config.etcd_prefix != "/registry":
            flags = given or ["--etcd-prefix"]
            verb = "needs" if len(flags) == 1 else "need"
            raise ValueError(f"{', '.join(flags)} {verb} --storage etcd://HOST:PORT")
    open_backend(config.storage_url, **config.storage_options())  # checks, does not open


def check_replicas(config: ServerConfig, *, replicas: int, reuse_port: bool) -> None:
    """Replicas share the store: refuse them on SQLite, whose database is one process's."""
    if (replicas > 1 or reuse_port) and not config.shared_storage:
        flag = "--replicas" if replicas > 1 else "--reuse-port"
        raise ValueError(
            f"{flag} needs --storage etcd://HOST:PORT: a hub on SQLite is one process"
            " (its database file cannot be shared by several)"
        )


def check_port(host: str, port: int, *, reuse_port: bool = False) -> None:
    """Bind HOST:PORT as the server will, then let it go: a port another process holds
    fails here, before the hub writes its keys and database into a data directory.

    The server binds again once its store is open (its listener needs the socket then);
    only a process taking the port in between still makes the start fail there."""
    if port == 0:
        return  # any free port will do
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if reuse_port:  # replicas may hold it already: only a process without the option fails
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            sock.bind((host, port))
        except OSError as err:
            raise OSError(
                f"cannot listen on {host}:{port}: {err.strerror} "
                "(is another pyocm hub or pyocm up running? stop it, or pass another --listen)"
            ) from None


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def parse_duration(text: str) -> timedelta:
    """Go-style durations: ``8760h``, ``30m``, ``1h30m``, ``90s``."""
    units = {"h": 3600, "m": 60, "s": 1}
    total, number = 0.0, ""
    for char in text.strip():
        if char.isdigit() or char == ".":
            number += char
        elif char in units and number:
            total += float(number) * units[char]
            number = ""
        else:
            raise ValueError(f"invalid duration {text!r}: use forms like 8760h, 30m or 1h30m")
    if number or total <= 0:
        raise ValueError(f"invalid duration {text!r}: use forms like 8760h, 30m or 1h30m")
    return timedelta(seconds=total)


def parse_interval(text: str) -> float:
    """Seconds of a Go-style duration, where 0 (``0``, ``0s``) is allowed: off."""
    if re.fullmatch(r"0+(\.0*)?[hms]?", text.strip()):
        return 0.0
    return parse_duration(text).total_seconds()


def parse_addons(text: str) -> tuple[str, ...]:
    """``--addons``: built-in add-on names (ValueError naming an unknown one)."""
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    addons_named(names)  # refuses unknown names
    return names


def parse_feature_gates(text: str) -> dict[str, bool]:
    """``A=true,B=false`` as Kubernetes components take ``--feature-gates``."""
    gates: dict[str, bool] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        if not sep or not name or value.lower() not in ("true", "false"):
            raise ValueError(f"invalid feature gate {item!r}: use Name=true or Name=false")
        gates[name] = value.lower() == "true"
    return gates


def _run(config: ServerConfig, options: HubOptions | None) -> None:
    run_main(_serve(config, options))


async def _serve(config: ServerConfig, options: HubOptions | None) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    server = HubServer(config)
    await server.start()
    api = Api.from_kubeconfig(config.admin_kubeconfig)
    running: asyncio.Task[None] | None = None
    electing: asyncio.Task[None] | None = None
    identity = hubelection.replica_identity()
    try:
        if config.shared_storage:
            electing = asyncio.create_task(
                hubelection.run_server_controllers(server, api, identity=identity),
                name="server controllers election",
            )
            electing.add_done_callback(lambda task: _controllers_ended(task, stop))
        await crdinstall.install(api, crdinstall.ocm_crds())
        if options is not None:
            running = asyncio.create_task(_hub_controllers(config, api, options, identity))
            running.set_name("hub controllers")
            running.add_done_callback(lambda task: _controllers_ended(task, stop))
        print(f"pyocm hub listening on {server.url} (port {server.port})", flush=True)
        print(f"admin kubeconfig: {config.admin_kubeconfig}", flush=True)
        print(f"data directory: {config.data_dir}", flush=True)
        await stop.wait()
    finally:
        for task in (running, electing):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        await api.close()
        await server.stop()
    print("pyocm hub stopped", flush=True)
    if (
        running is not None
        and not running.cancelled()
        and running.done()
        and running.exception() is not None
    ):
        raise SystemExit(1)  # the controllers failed: a supervisor should see it


def _hub_controllers(
    config: ServerConfig, api: Api, options: HubOptions, identity: str
) -> Coroutine[Any, Any, None]:
    """On shared storage under their Lease (other replicas may run them), else at once."""
    if config.shared_storage:
        return hubelection.run_hub_controllers(api, dataclasses.replace(options, identity=identity))
    return hubmanager.build(api, options=options).run()


def _controllers_ended(task: asyncio.Task[None], stop: asyncio.Event) -> None:
    """Controllers never end on their own; if they fail, the hub stops rather than limp on."""
    if not task.cancelled() and task.exception() is not None:
        log.error("hub controllers failed, stopping: %s", task.exception())
        stop.set()
