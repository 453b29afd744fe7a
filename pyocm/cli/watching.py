"""``pyocm get ... -w``, as ``kubectl get -w``: the list, then each change on its own
(a row lined up under the list's table, a YAML document, a JSON object or a name) until
Ctrl-C or SIGTERM, which end it with exit 0.

One request watches from the list's resourceVersion; a watch the server ends is opened
again from the last resourceVersion seen. Unlike kubectl, which prints the 410 Gone
Status and exits when its watch is too old to resume, this lists again, as a reflector
does, and prints only what differs from what it last printed."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer
import yaml

from pyocm.cli.common import connect, echo_table, run, until_signal
from pyocm.kube.kinds import Kind
from pyocm.kube.status import ApiError
from pyocm.runtime.client import Api, Obj

WATCH_HELP = "After the list, print a row for each change until Ctrl-C (as kubectl get -w)."


@dataclass
class WatchPrinter:
    """What ``get -w`` prints: the list as kubectl does, then each changed object alone,
    as a row lined up under that table, a YAML document, a JSON object, or its name.

    ``rows`` gives the table rows of some objects; ``output`` is one of table, wide,
    yaml, json, name (the caller picks the columns). ``name`` overrides the ``-o name``
    line (default ``<kind>.<group>/<name>``); ``empty`` replaces what an empty list
    prints (default: "No resources found" on stderr for a table, nothing otherwise)."""

    output: str
    kind: Kind
    headers: Sequence[str]
    rows: Callable[[list[Obj]], list[tuple[str, ...]]]
    no_headers: bool = False
    name: Callable[[Obj], str] | None = None
    empty: Callable[[], None] | None = None
    _widths: list[int] = field(default_factory=list)

    def listed(self, items: list[Obj]) -> None:
        if not items and self.empty is not None:
            self.empty()
        elif self.output in ("yaml", "json", "name"):
            for item in items:
                self.changed("ADDED", item)
        elif not items:
            typer.echo("No resources found", err=True)
        else:
            rows = self.rows(items)
            self._widths = _widths(self.headers, rows)
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
            typer.echo(self.name(item) if self.name else _resource_name(self.kind, item))
        else:
            # The header comes with the first row when the list had none to go under.
            first = not self._widths and not self.no_headers
            rows = self.rows([item])
            echo_table(self.headers, rows, no_headers=not first, widths=self._widths)
            if first:
                self._widths = _widths(self.headers, rows)
        sys.stdout.flush()


def _widths(headers: Sequence[str], rows: list[tuple[str, ...]]) -> list[int]:
    return [max(len(text) for text in column) for column in zip(headers, *rows, strict=True)]


def _resource_name(kind: Kind, item: Obj) -> str:
    group = f".{kind.group}" if kind.group else ""
    return f"{kind.kind.lower()}{group}/{item['metadata']['name']}"


@dataclass(frozen=True)
class Watched:
    """The objects a ``get -w`` lists and watches: one kind, optionally one namespace and
    selectors, narrowed further by ``keep`` (what the server cannot select).

    ``refresh(api, items)`` is awaited before ``items`` are printed, listed or changed
    (not deleted: a deleted object keeps its last row), for columns that other objects
    fill in, read as of that change."""

    kind: Kind
    namespace: str | None = None
    labels: str | None = None
    fields: str | None = None
    keep: Callable[[Obj], bool] = lambda _: True
    order: Callable[[Obj], Any] = lambda item: (
        str(item["metadata"].get("namespace", "")),
        str(item["metadata"]["name"]),
    )
    refresh: Callable[[Api, list[Obj]], Awaitable[None]] | None = None


Changed = Callable[[str, Obj], Awaitable[None]]


def list_and_watch(kubeconfig: Path | None, watched: Watched, printer: WatchPrinter) -> None:
    """``kubectl get -w``: print the list, then every change from the list's
    resourceVersion on until Ctrl-C or SIGTERM, which end it with exit 0."""
    run(until_signal(_list_and_watch(kubeconfig, watched, printer)))


async def _list_and_watch(kubeconfig: Path | None, watched: Watched, printer: WatchPrinter) -> None:
    async with connect(kubeconfig) as api:

        async def changed(event: str, item: Obj) -> None:
            if watched.refresh is not None and event != "DELETED":
                await watched.refresh(api, [item])
            printer.changed(event, item)

        listed = await _list(api, watched)
        items = sorted(_items(listed, watched), key=watched.order)
        if watched.refresh is not None:
            await watched.refresh(api, items)
        printer.listed(items)
        await follow(api, watched, listed, changed)


async def _list(api: Api, watched: Watched) -> Obj:
    return await api.list_all(
        watched.kind, namespace=watched.namespace, labels=watched.labels, fields=watched.fields
    )


def _items(listed: Obj, watched: Watched) -> list[Obj]:
    return [item for item in listed.get("items") or [] if watched.keep(item)]


def _key(item: Obj) -> tuple[str, str]:
    return str(item["metadata"].get("namespace", "")), str(item["metadata"]["name"])


async def follow(api: Api, watched: Watched, listed: Obj, changed: Changed) -> None:
    """Await ``changed(event, object)`` for each change after ``listed``, for ever.

    Each watch lasts as long as the server gives it (no timeoutSeconds, as kubectl);
    one the server ends is opened again from the last resourceVersion seen. One too old
    to resume from (410 Gone) lists again, as a reflector does, and reports what differs
    from what was last seen (changed objects, and deleted ones as DELETED)."""
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
                    await changed(event, item)
        except ApiError as err:
            if err.code != 410:
                raise
            listed = await _list(api, watched)
            version = str(listed.get("metadata", {}).get("resourceVersion", ""))
            seen = await _report_relist(seen, _items(listed, watched), changed)


async def _report_relist(
    seen: dict[tuple[str, str], Obj], items: list[Obj], changed: Changed
) -> dict[tuple[str, str], Obj]:
    """What a fresh list says happened since ``seen``; the fresh list, keyed."""
    now = {_key(item): item for item in items}
    for key, item in seen.items():
        if key not in now:
            await changed("DELETED", item)
    for key, item in sorted(now.items()):
        before = seen.get(key)
        if before is None:
            await changed("ADDED", item)
        elif before["metadata"].get("resourceVersion") != item["metadata"].get("resourceVersion"):
            await changed("MODIFIED", item)
    return now
