"""Semantic versions as Kubernetes' CEL ``semver`` library reads them (blang/semver v4:
``Parse``, and the library's normalizing parse), with blang's error words."""

from __future__ import annotations

import string
from dataclasses import dataclass
from functools import total_ordering

_DIGITS = frozenset(string.digits)
_ALPHANUM = frozenset(string.ascii_letters + string.digits + "-")


class SemverError(ValueError):
    """Not a semantic version; ``str()`` is blang/semver's message."""


@total_ordering
@dataclass(frozen=True)
class Semver:
    """A parsed version; ordered as semver orders (build metadata does not count)."""

    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    build: tuple[str, ...] = ()

    def compare(self, other: Semver) -> int:
        """-1, 0 or 1 as blang's ``Version.Compare``."""
        mine, theirs = (self.major, self.minor, self.patch), (other.major, other.minor, other.patch)
        if mine != theirs:
            return 1 if mine > theirs else -1
        if not self.pre or not other.pre:
            return (not self.pre) - (not other.pre)
        for a, b in zip(self.pre, other.pre, strict=False):
            if a != b:
                return 1 if _pre_key(a) > _pre_key(b) else -1
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self.compare(other) < 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self.compare(other) == 0

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            text += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            text += "+" + ".".join(self.build)
        return text


def _pre_key(part: int | str) -> tuple[int, int, str]:
    # numeric identifiers sort before alphanumeric ones
    return (0, part, "") if isinstance(part, int) else (1, 0, part)


def parse(text: str, *, normalize: bool = False) -> Semver:
    """``semver.Parse`` (strict ``MAJOR.MINOR.PATCH[-pre][+build]``), or with
    ``normalize`` the library's lenient form: a leading ``v`` dropped, leading zeroes
    dropped, a missing minor or patch read as 0."""
    return _parse(_normalized(text) if normalize else text)


def _normalized(text: str) -> str:
    parts = text.removeprefix("v").split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            trimmed = part.lstrip("0")
            if not trimmed or trimmed[0] not in _DIGITS:
                trimmed = "0" + trimmed
            parts[i] = trimmed
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)


def _parse(text: str) -> Semver:
    if not text:
        raise SemverError("Version string empty")
    parts = text.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _number(parts[0], "major")
    minor = _number(parts[1], "minor")
    rest, build = parts[2], ""
    if "+" in rest:
        rest, build = rest.split("+", 1)
        build_parts = build.split(".")
    else:
        build_parts = []
    pre_parts: list[str] = []
    if "-" in rest:
        rest, pre = rest.split("-", 1)
        pre_parts = pre.split(".")
    patch = _number(rest, "patch")
    pre_ids = tuple(_prerelease(p) for p in pre_parts)
    for part in build_parts:
        if not part:
            raise SemverError("Build meta data is empty")
        if not set(part) <= _ALPHANUM:
            raise SemverError(f"Invalid character(s) found in build meta data {_quote(part)}")
    return Semver(major, minor, patch, pre_ids, tuple(build_parts))


def _number(text: str, name: str) -> int:
    if not set(text) <= _DIGITS:
        raise SemverError(f"Invalid character(s) found in {name} number {_quote(text)}")
    if len(text) > 1 and text[0] == "0":
        raise SemverError(
            f"{name.capitalize()} number must not contain leading zeroes {_quote(text)}"
        )
    if not text:
        raise SemverError('strconv.ParseUint: parsing "": invalid syntax')
    return int(text)


def _prerelease(text: str) -> int | str:
    if not text:
        raise SemverError("Prerelease is empty")
    if set(text) <= _DIGITS:
        if len(text) > 1 and text[0] == "0":
            raise SemverError(
                f"Numeric PreRelease version must not contain leading zeroes {_quote(text)}"
            )
        return int(text)
    if set(text) <= _ALPHANUM:
        return text
    raise SemverError(f"Invalid character(s) found in prerelease {_quote(text)}")


def _quote(text: str) -> str:
    """Go's ``%q`` for the plain text versions hold."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
