"""What the ``pyocm`` commands share: finding the hub's kubeconfig, running async work,
and turning failures into one clear line and an exit code."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import socket
import ssl
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar
from urllib.parse import urlsplit

import typer
import yaml
from rich.console import Console
from rich.table import Table

from pyocm.apiserver.config import default_data_dir
from pyocm.base.loop import run_main
from pyocm.kube import names
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.pki.kubeconfig import KubeconfigError, load_kubeconfig
from pyocm.registration.agent.errors import AgentError
from pyocm.registration.hub.accept import AcceptError
from pyocm.runtime import incluster
from pyocm.runtime.client import Api
from pyocm.runtime.errors import ApiConnectionError

T = TypeVar("T")

KUBECONFIG_HELP = (
    "Hub kubeconfig (default: $KUBECONFIG, else the pod's ServiceAccount when run in a "
    "cluster, else the admin.kubeconfig of the running local hub: 'pyocm hub' or 'pyocm up')."
)

#: How long a local hub has to answer a TLS handshake before it counts as not running.
PROBE_SECONDS = 3.0


def kubeconfig_path(given: Path | None) -> Path:
    """``--kubeconfig``, else ``$KUBECONFIG`` (its first file), else the running local
    hub's admin kubeconfig (:func:`local_hub_kubeconfig`)."""
    if given is not None:
        return given
    env = os.environ.get("KUBECONFIG", "")
    first = next((part for part in env.split(os.pathsep) if part), "")
    return Path(first) if first else local_hub_kubeconfig()


def connect(given: Path | None) -> Api:
    """The hub: ``--kubeconfig``, else ``$KUBECONFIG``, else this pod's ServiceAccount when
    run in a cluster (client-go's order), else the running local hub's admin kubeconfig."""
    if given is None and not os.environ.get("KUBECONFIG") and incluster.available():
        return Api.from_in_cluster()
    path = kubeconfig_path(given)
    if not path.is_file():
        fail(f"no kubeconfig at {path}")
    return Api.from_kubeconfig(path)


def local_hub_kubeconfigs() -> list[Path]:
    """Where the local hubs write their admin kubeconfig: ``pyocm hub``'s data directory,
    then ``pyocm up``'s (its default ``--data-dir``)."""
    from pyocm.cli.up import default_up_dir  # up.py imports this module

    return [default_data_dir() / "admin.kubeconfig", default_up_dir() / "hub" / "admin.kubeconfig"]


def local_hub_kubeconfig() -> Path:
    """The admin kubeconfig of the local hub that is running.

    ``pyocm hub`` and ``pyocm up`` both listen on 127.0.0.1:6443 by default and leave
    their kubeconfig behind when stopped, so neither the file's presence nor the port
    answering says which hub is up: a hub counts as running when its server completes a
    TLS handshake trusting that kubeconfig's CA (only the hub that wrote it holds the
    key). When both run (on different ports), the one started last wins: each start
    rewrites its kubeconfig. Fails, naming what was looked for, when none runs."""
    found = [path for path in local_hub_kubeconfigs() if path.is_file()]
    answering = [path for path in found if _answers(path)]
    if answering:
        return max(answering, key=lambda path: path.stat().st_mtime)
    looked = "; ".join(
        f"{path} ({'its hub does not answer' if path in found else 'absent'})"
        for path in local_hub_kubeconfigs()
    )
    fail(
        f"no kubeconfig at a running local hub: looked at {looked}. Start one with "
        "'pyocm hub' or 'pyocm up', or pass --kubeconfig or set KUBECONFIG"
    )


def _answers(path: Path) -> bool:
    """Whether the server in kubeconfig ``path`` completes a TLS handshake with its CA."""
    try:
        info = load_kubeconfig(path)
    except KubeconfigError:
        return False
    where = urlsplit(info.server)
    context = ssl.create_default_context()
    if info.ca_pem:
        context.load_verify_locations(cadata=info.ca_pem.decode())
    if info.insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    try:
        address = (where.hostname or "", where.port or 443)
        with (
            socket.create_connection(address, timeout=PROBE_SECONDS) as raw,
            context.wrap_socket(raw, server_hostname=where.hostname),
        ):
            return True
    except (OSError, ValueError):  # refused, timed out, another hub's certificate
        return False


def connect_managed(given: Path | None) -> Api:
    """A managed cluster: its kubeconfig, else this pod's ServiceAccount (an agent
    deployed on the cluster it manages, as upstream's agents run without the flag)."""
    if given is not None:
        if not given.is_file():
            fail(f"kubeconfig {given} does not exist")
        return Api.from_kubeconfig(given)
    if not incluster.available():
        fail("no managed cluster: pass its kubeconfig, or run in a pod of that cluster")
    return Api.from_in_cluster()


def fail(message: str, *, code: int = 1) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def run(work: Coroutine[Any, Any, T]) -> T:
    """Run ``work`` on uvloop; failures a user can act on become one line on stderr."""
    try:
        return run_main(work)
    except ApiConnectionError as err:
        fail(str(err))
    except (AgentError, AcceptError) as err:
        fail(str(err))
    except ApiError as err:
        fail(f"{err.message} ({err.reason})")
    except OSError as err:  # a port in use, an unwritable data directory
        fail(str(err))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


def setup_logging(level: str) -> None:
    logging.basicConfig(
        level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )


async def until_signal(work: Coroutine[Any, Any, object]) -> None:
    """Run ``work`` until it ends or SIGINT/SIGTERM arrives, then cancel it and wait for
    its cleanup (servers stopped, connections closed); a second signal during the cleanup
    cancels it again, for a cleanup that hangs."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)

    def on_signal() -> None:
        if stop.is_set():
            task.cancel()
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    waiter = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for pending in (task, waiter):
            pending.cancel()
        # The work's own cleanup runs to its end here, not cut short by the loop's close.
        await asyncio.gather(task, waiter, return_exceptions=True)
    if task.done() and not task.cancelled():
        task.result()


def raise_open_file_limit() -> None:
    """Lift the soft limit on open files to the hard one, as Go programs do at start.

    A hub keeps a connection per agent (and a simulator one per simulated cluster), so
    the usual soft limit of 1,024 would cap a fleet long before anything else does."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


#: glibc's mallopt parameter for the mmap threshold, and the threshold it starts with.
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 * 1024


def fix_mmap_threshold() -> bool:
    """Keep glibc serving allocations of 128 KiB and more with their own mmap.

    glibc raises that threshold each time such a block is freed, after which large
    blocks come from the heap, whose recycled pages are already resident. uvloop gives
    every TLS connection a 256 KiB read buffer of which only the first pages are ever
    written, so a hub holding thousands of connections paid for whole buffers: at
    2,000 clusters (4,000 connections) the hub's RSS was 540 MiB, 477 MiB with the
    threshold fixed. Returns whether the setting took (it needs glibc)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        mallopt = ctypes.CDLL(name).mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def name_list(texts: Iterable[str], *, what: str, flag: str) -> list[str]:
    """Comma-separated (and repeated) names, deduplicated in order; a usage error naming
    ``flag`` for one that is not a DNS-1123 subdomain (``what`` says what it should be)."""
    found = list(
        dict.fromkeys(part.strip() for text in texts for part in text.split(",") if part.strip())
    )
    for name in found:
        if problems := names.is_dns1123_subdomain(name):
            fail(f'{flag}: "{name}" is not {what}: {"; ".join(problems)}', code=2)
    return found


def echo_objects(
    items: Sequence[Mapping[str, Any]],
    *,
    output: str,
    kind: Kind,
    table: Callable[[], None],
) -> None:
    """``items`` of ``kind`` as kubectl prints a list: ``-o yaml|json`` (each item with its
    apiVersion and kind), ``-o name`` (``<kind>.<group>/<name>``), else ``table()``, or
    "No resources found" for none."""
    if output in ("yaml", "json"):
        typed = [{"apiVersion": kind.api_version, "kind": kind.kind, **i} for i in items]
        echo_list(typed, output=output)
    elif output == "name":
        resource = f"{kind.kind.lower()}.{kind.group}" if kind.group else kind.kind.lower()
        for item in items:
            typer.echo(f"{resource}/{item['metadata']['name']}")
    elif not items:
        typer.echo("No resources found", err=True)
    else:
        table()


def echo_list(items: list[dict[str, Any]], *, output: str) -> None:
    """``items`` as kubectl prints ``-o json`` or ``-o yaml`` of a list."""
    listed = {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {}}
    if output == "json":
        typer.echo(json.dumps(listed, indent=4))
    else:
        typer.echo(yaml.safe_dump(listed, sort_keys=True, default_flow_style=False), nl=False)


def echo_table(
    headers: Sequence[str],
    rows: Sequence[tuple[str, ...]],
    *,
    no_headers: bool = False,
    widths: Sequence[int] = (),
) -> None:
    """Rows under ``headers`` as kubectl lays out a table (``--no-headers``: rows only);
    ``widths``: the least width of each column, so that later rows line up with a table
    printed before."""
    table = Table(box=None, header_style="bold", show_header=not no_headers)
    for index, column in enumerate(headers):
        table.add_column(column, min_width=widths[index] if index < len(widths) else None)
    for row in rows:
        table.add_row(*row)
    Console(width=200).print(table)
