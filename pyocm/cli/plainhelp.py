"""Help output as kubectl's and clusteradm's users read it: value placeholders, not Python types.

Typer shows every parameter's Python type (``--help <bool>``, ``--listen <str>``,
``<int range>``) and a required argument as ``{name}``. pyocm's help instead names what an
option takes after its own name (``--data-dir DIR``), shows flags bare, and arguments as
``NAME`` (``[NAME]`` when optional), as click and cobra do. One root group applies this to
every command once, so no option has to spell out a metavar.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument, TyperGroup, TyperOption

# Options many commands share, described once: each command declares only its default.
SHARED_HELP = {
    "--log-level": "Least severe log messages to print: DEBUG, INFO, WARNING, ERROR or CRITICAL.",
}


class PlainOption(TyperOption):
    """An option shown as ``--data-dir DIR``; a flag as itself."""

    def display_type_rich(self, ctx: Any) -> str | None:
        if self.is_flag or self.count:
            return None
        if self.metavar is not None:
            return self.metavar
        return placeholder(self.opts)


class PlainArgument(TyperArgument):
    """An argument shown as ``NAME`` in usage and help, with no type beside it."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return None

    def _usage_display_name(self) -> str:
        name = self.display_name_raw if self.required else f"[{self.display_name_raw}]"
        return name + ("..." if self.nargs != 1 else "")


def placeholder(opts: list[str]) -> str:
    """The last word of the long option's name: ``--data-dir`` takes a ``DIR``."""
    long = [opt for opt in opts if opt.startswith("--")] or opts
    return long[0].lstrip("-").rsplit("-", 1)[-1].upper()


def plain(command: Any) -> None:
    """Give ``command`` and every command under it pyocm's help style (idempotent)."""
    for param in command.params:
        if isinstance(param, TyperArgument) and not isinstance(param, PlainArgument):
            # The classes only override how a parameter is displayed, so switching the
            # class of typer's own objects keeps everything they parse and check.
            param.__class__ = PlainArgument
            if param.metavar is None and param.name:
                param.metavar = param.name.upper()
        elif isinstance(param, TyperOption) and not isinstance(param, PlainOption):
            param.__class__ = PlainOption
            shared = [SHARED_HELP[opt] for opt in param.opts if opt in SHARED_HELP]
            if shared and not param.help:
                param.help = shared[0]
    for sub in getattr(command, "commands", {}).values():
        plain(sub)


class PlainHelpGroup(TyperGroup):
    """The root group: restyles the whole command tree before it parses anything.

    This runs at ``main`` rather than at construction because typer adds the root's
    completion options only after building the group.
    """

    def main(self, *args: Any, **kwargs: Any) -> Any:
        plain(self)
        return super().main(*args, **kwargs)
