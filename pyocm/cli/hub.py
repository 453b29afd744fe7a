"""``pyocm hub``: the API server (and, as they land, the hub controllers) in one process.

This module and :mod:`pyocm.testing` are the only ones that join the server and the
client side: the OCM CRDs are installed through the API, like any client would.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from datetime import timedelta
from pathlib import Path
from typing import NoReturn

import typer

from pyocm.apiserver.config import ServerConfig, default_data_dir, parse_listen
from pyocm.apiserver.server import HubServer
from pyocm.cli import crdinstall

log = logging.getLogger("pyocm.hub")


def hub(
    data_dir: Path = typer.Option(None, "--data-dir", help="Where the hub keeps its database and keys (default: $PYOCM_DATA_DIR, else ~/.local/share/pyocm/hub)."),
    listen: str = typer.Option("127.0.0.1:6443", "--listen", help="HOST:PORT to serve on; port 0 picks a free one."),
    cluster_signing_duration: str = typer.Option("8760h", "--cluster-signing-duration", help="Longest client certificate the hub signs, e.g. 8760h or 30m."),
    sqlite_synchronous: str = typer.Option("FULL", "--sqlite-synchronous", help="FULL (acknowledged writes survive power loss) or NORMAL."),
    log_level: str = typer.Option("INFO", "--log-level"),
) -> None:
    """Run a hub API server in the foreground until Ctrl-C or SIGTERM."""
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        host, port = parse_listen(listen)
        duration = parse_duration(cluster_signing_duration)
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
    )
    try:
        _run(config)
    except OSError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None


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


def _run(config: ServerConfig) -> None:
    try:
        import uvloop

        uvloop.install()
    except ImportError:  # pragma: no cover - uvloop is a dependency; plain asyncio still works
        pass
    asyncio.run(_serve(config))


async def _serve(config: ServerConfig) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    server = HubServer(config)
    await server.start()
    try:
        await crdinstall.install(kubeconfig=config.admin_kubeconfig)
        print(f"pyocm hub listening on {server.url} (port {server.port})", flush=True)
        print(f"admin kubeconfig: {config.admin_kubeconfig}", flush=True)
        print(f"data directory: {config.data_dir}", flush=True)
        await stop.wait()
    finally:
        await server.stop()
    print("pyocm hub stopped", flush=True)
