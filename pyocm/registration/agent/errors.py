"""Why an agent stops, in words an operator can act on."""

from __future__ import annotations


class AgentError(RuntimeError):
    """The agent cannot go on without a person changing something (message says what)."""


class AgentStopped(Exception):
    """The hub removed or denied this cluster; the agent ends cleanly."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Rebootstrap(Exception):
    """The hub credential no longer works; start again from the bootstrap credential."""
