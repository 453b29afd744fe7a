"""The manifests of ``pyocm create work -f``: read as kubectl reads ``-f`` and checked as
upstream's work webhook checks them, before anything reaches the hub.

A source is a file, a directory (its ``.json``, ``.yaml`` and ``.yml`` files, sorted,
not recursively, as kubectl without ``-R``) or ``-`` for standard input. Each file holds
one or more YAML documents (JSON is YAML); empty documents are skipped and a ``List``
(any kind ending in ``List`` with ``items``) gives its items, as kubectl flattens them.
Values come out as kubectl's YAML reader gives them: timestamps stay strings.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import orjson
import yaml

EXTENSIONS = (".json", ".yaml", ".yml")
_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ManifestFileError(ValueError):
    """A source that cannot be read, or a manifest upstream's work webhook would refuse."""


@dataclass(frozen=True)
class Manifest:
    """One Kubernetes object and where it was read (``file, document N[, item M]``)."""

    obj: dict[str, Any]
    source: str

    @property
    def identity(self) -> tuple[str, str, str, str]:
        meta = self.obj.get("metadata") or {}
        return (
            str(self.obj.get("apiVersion")),
            str(self.obj.get("kind")),
            str(meta.get("namespace") or ""),
            str(meta.get("name")),
        )


class _Loader(_BASE):  # type: ignore[misc]
    """YAML as go-yaml gives it to JSON: a timestamp is the string it was written as."""


_Loader.add_constructor(
    "tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node)
)


def read(sources: Sequence[str], *, stdin: TextIO | None = None) -> list[Manifest]:
    """Every manifest of ``sources``, checked; raises :class:`ManifestFileError`."""
    manifests: list[Manifest] = []
    for name, text in _texts(sources, stdin=stdin or sys.stdin):
        manifests.extend(_parse(name, text))
    if not manifests:
        raise ManifestFileError(f"no manifests in {', '.join(sources)}")
    check(manifests)
    return manifests


def check(manifests: Sequence[Manifest]) -> None:
    """Upstream's rules (apiVersion and kind, a name, no generateName, no duplicates)."""
    seen: dict[tuple[str, str, str, str], str] = {}
    for manifest in manifests:
        problem = _problem(manifest.obj)
        if problem:
            raise ManifestFileError(f"{manifest.source}: {problem}")
        version, kind, namespace, name = manifest.identity
        earlier = seen.setdefault(manifest.identity, manifest.source)
        if earlier != manifest.source:
            raise ManifestFileError(
                f"{manifest.source}: duplicate manifest for resource {namespace}/{name} "
                f"with resource type {version}.{kind} (as {earlier})"
            )


def _problem(obj: dict[str, Any]) -> str | None:
    for field in ("apiVersion", "kind"):
        if not isinstance(obj.get(field), str) or not obj[field]:
            return f"{field} must be set in manifest"
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("name"), str) or not meta["name"]:
        return "name must be set in manifest"
    if meta.get("generateName"):
        return "generateName must not be set in manifest"
    return None


def _texts(sources: Sequence[str], *, stdin: TextIO) -> Iterator[tuple[str, str]]:
    for source in sources:
        if source == "-":
            yield "STDIN", stdin.read()
            continue
        path = Path(source)
        files = (
            sorted(p for p in path.iterdir() if p.is_file() and p.suffix in EXTENSIONS)
            if path.is_dir()
            else [path]
        )
        if path.is_dir() and not files:
            raise ManifestFileError(f"{source}: no {', '.join(EXTENSIONS)} files in the directory")
        for file in files:
            try:
                yield str(file), file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as err:
                raise ManifestFileError(f"cannot read {file}: {_reason(err)}") from None


def _reason(err: Exception) -> str:
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    return str(err)


def _parse(name: str, text: str) -> Iterator[Manifest]:
    try:
        documents = list(yaml.load_all(text, Loader=_Loader))
    except yaml.YAMLError as err:
        raise ManifestFileError(f"{name}: not valid YAML: {err}") from None
    for number, document in enumerate(documents, start=1):
        if document is None:
            continue
        yield from _flatten(document, f"{name}, document {number}")


def _flatten(document: Any, source: str) -> Iterator[Manifest]:
    if not isinstance(document, dict):
        raise ManifestFileError(f"{source}: not a Kubernetes object but a {_type(document)}")
    try:
        orjson.dumps(document)
    except TypeError as err:
        raise ManifestFileError(f"{source}: cannot be sent as JSON: {err}") from None
    kind, items = document.get("kind"), document.get("items")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(items, list):
        for number, item in enumerate(items, start=1):
            yield from _flatten(item, f"{source}, item {number}")
        return
    yield Manifest(document, source)


def _type(value: Any) -> str:
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    return type(value).__name__
