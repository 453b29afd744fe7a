"""What the ``pyocm`` commands share: finding the hub's kubeconfig, running async work,
and turning failures into one clear line and an exit code."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import ssl
import sys
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
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
from pyocm.runtime.client import Api, Obj
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


WATCH_HELP = "After the list, print a row for each change until Ctrl-C (as kubectl get -w)."

#: How long one watch request asks the server to keep its stream open before the next.
WATCH_SECONDS = 300


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


@dataclass
class WatchPrinter:
    """What ``get -w`` prints: the list as kubectl does, then each changed object alone,
    as a row lined up under that table, a YAML document, a JSON object, or its name.

    ``rows`` gives the table rows of some objects, ``resource`` the ``-o name`` prefix;
    ``output`` is one of table, wide, yaml, json, name (the caller picks the columns)."""

    output: str
    kind: Kind
    headers: Sequence[str]
    rows: Callable[[list[Obj]], list[tuple[str, ...]]]
    no_headers: bool = False
    _widths: list[int] = field(default_factory=list)

    def listed(self, items: list[Obj]) -> None:
        if self.output in ("yaml", "json", "name"):
            for item in items:
                self.changed("ADDED", item)
        elif not items:
            typer.echo("No resources found", err=True)
        else:
            rows = self.rows(items)
            self._widths = [
                max(len(text) for text in column)
                for column in zip(self.headers, *rows, strict=True)
            ]
            echo_table(self.headers, rows, no_headers=self.no_headers, widths=self._widths)

    def changed(self, event: str, item: Obj) -> None:
        del event  # kubectl shows a deletion as the object's last row too
        typed = {"apiVersion": self.kind.api_version, "kind": self.kind.kind, **item}
        if self.output == "yaml":
            typer.echo("---")
            typer.echo(yaml.safe_dump(typed, sort_keys=True, default_flow_style=False), nl=False)
        elif self.output == "json":
            typer.echo(json.dumps(typed, indent=4))
        elif self.output == "name":
            group = f".{self.kind.group}" if self.kind.group else ""
            typer.echo(f"{self.kind.kind.lower()}{group}/{item['metadata']['name']}")
        else:
            # The header comes with the first row when the list had none to go under.
            first = not self._widths and not self.no_headers
            rows = self.rows([item])
            echo_table(self.headers, rows, no_headers=not first, widths=self._widths)
            if first:
                self._widths = [
                    max(len(text) for text in column)
                    for column in zip(self.headers, *rows, strict=True)
                ]
            sys.stdout.flush()


@dataclass(frozen=True)
class Watched:
    """The objects a ``get -w`` lists and watches: one kind, optionally one namespace and
    selectors, narrowed further by ``keep`` (what the server cannot select)."""

    kind: Kind
    namespace: str | None = None
    labels: str | None = None
    fields: str | None = None
    keep: Callable[[Obj], bool] = lambda _: True
    order: Callable[[Obj], Any] = lambda item: (
        str(item["metadata"].get("namespace", "")),
        str(item["metadata"]["name"]),
    )


def list_and_watch(kubeconfig: Path | None, watched: Watched, printer: WatchPrinter) -> None:
    """``kubectl get -w``: print the list, then every change from the list's
    resourceVersion on until Ctrl-C or SIGTERM, which end it with exit 0."""
    run(until_signal(_list_and_watch(kubeconfig, watched, printer)))


async def _list_and_watch(kubeconfig: Path | None, watched: Watched, printer: WatchPrinter) -> None:
    async with connect(kubeconfig) as api:
        listed = await _list(api, watched)
        printer.listed(sorted(_items(listed, watched), key=watched.order))
        await follow(api, watched, listed, printer.changed)


async def _list(api: Api, watched: Watched) -> Obj:
    return await api.list_all(
        watched.kind, namespace=watched.namespace, labels=watched.labels, fields=watched.fields
    )


def _items(listed: Obj, watched: Watched) -> list[Obj]:
    return [item for item in listed.get("items") or [] if watched.keep(item)]


def _key(item: Obj) -> tuple[str, str]:
    return str(item["metadata"].get("namespace", "")), str(item["metadata"]["name"])


async def follow(
    api: Api, watched: Watched, listed: Obj, changed: Callable[[str, Obj], None]
) -> None:
    """Call ``changed(event, object)`` for each change after ``listed``, for ever.

    A watch the server ends is opened again from the last resourceVersion seen; one too
    old to resume from (410 Gone) lists again, as a reflector does, and reports what
    differs from what was last seen (changed objects, and deleted ones as DELETED)."""
    seen = {_key(item): item for item in _items(listed, watched)}
    version = str(listed.get("metadata", {}).get("resourceVersion", ""))
    while True:
        try:
            events = api.watch(
                watched.kind,
                namespace=watched.namespace,
                labels=watched.labels,
                fields=watched.fields,
                resource_version=version,
                timeout_seconds=WATCH_SECONDS,
            )
            async with contextlib.aclosing(events):
                async for event, item in events:
                    version = str(item.get("metadata", {}).get("resourceVersion", version))
                    if event == "BOOKMARK" or not watched.keep(item):
                        continue
                    if event == "DELETED":
                        seen.pop(_key(item), None)
                    else:
                        seen[_key(item)] = item
                    changed(event, item)
        except ApiError as err:
            if err.code != 410:
                raise
            listed = await _list(api, watched)
            version = str(listed.get("metadata", {}).get("resourceVersion", ""))
            seen = _report_relist(seen, _items(listed, watched), changed)


def _report_relist(
    seen: dict[tuple[str, str], Obj], items: list[Obj], changed: Callable[[str, Obj], None]
) -> dict[tuple[str, str], Obj]:
    """What a fresh list says happened since ``seen``; the fresh list, keyed."""
    now = {_key(item): item for item in items}
    for key, item in seen.items():
        if key not in now:
            changed("DELETED", item)
    for key, item in sorted(now.items()):
        before = seen.get(key)
        if before is None:
            changed("ADDED", item)
        elif before["metadata"].get("resourceVersion") != item["metadata"].get("resourceVersion"):
            changed("MODIFIED", item)
    return now
