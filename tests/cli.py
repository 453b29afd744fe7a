"""Running pyocm commands as a person does: real processes, their output and exit codes."""

from __future__ import annotations

import contextlib
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

PYOCM = [sys.executable, "-m", "pyocm"]


class Running:
    """A pyocm command in the background whose output lines can be waited for."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, split: bool = False) -> None:
        """``split``: stderr apart from stdout; ``lines`` holds both (in the order read),
        ``out`` and ``err`` each stream's own."""
        self.lines: list[str] = []
        self.out: list[str] = []
        self.err: list[str] = []
        self._queue: queue.Queue[tuple[list[str], str] | None] = queue.Queue()
        self.process = subprocess.Popen(
            [*PYOCM, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if split else subprocess.STDOUT,
            text=True,
            env={**os.environ, **(env or {})},
        )
        self._open = 2 if split else 1
        threading.Thread(
            target=self._pump, args=(self.process.stdout, self.out), daemon=True
        ).start()
        if split:
            threading.Thread(
                target=self._pump, args=(self.process.stderr, self.err), daemon=True
            ).start()

    def _pump(self, stream: IO[str] | None, into: list[str]) -> None:
        assert stream is not None
        for line in stream:
            self._queue.put((into, line.rstrip("\n")))
        self._queue.put(None)

    def _take(self, timeout: float) -> str | None:
        """The next line read (kept), or None once every stream has ended."""
        while self._open:
            item = self._queue.get(timeout=timeout)
            if item is None:
                self._open -= 1
                continue
            into, line = item
            into.append(line)
            self.lines.append(line)
            return line
        return None

    def wait_for(self, pattern: str, *, timeout: float = 60, count: int = 1) -> str:
        """The ``count``-th line (default: the first) that matches ``pattern``."""
        deadline = time.monotonic() + timeout
        seen = 0
        for line in self.lines:
            if re.search(pattern, line):
                seen += 1
                if seen == count:
                    return line
        while time.monotonic() < deadline:
            try:
                line = self._take(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            if re.search(pattern, line):
                seen += 1
                if seen == count:
                    return line
        raise AssertionError(f"{pattern!r} not seen; output:\n" + "\n".join(self.lines[-40:]))

    def stop(self, sig: int = signal.SIGINT, *, timeout: float = 20) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout=timeout)
        while True:
            try:
                if self._take(timeout=1) is None:
                    break
            except queue.Empty:
                break
        return code


def pyocm(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PYOCM, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


@dataclass
class UpFleet:
    """A running ``pyocm up``: its hub's and clusters' admin kubeconfigs."""

    process: Running
    hub: Path
    clusters: dict[str, Path] = field(default_factory=dict)


@contextlib.contextmanager
def running_up(tmp: Path, *, clusters: int) -> Iterator[UpFleet]:
    """``pyocm up --clusters N`` on a free port, its data and XDG home under ``tmp``,
    until the block ends; it must then stop cleanly."""
    data = tmp / "up"
    env = {"XDG_DATA_HOME": str(tmp / "xdg"), "KUBECONFIG": ""}
    process = Running(
        "up", "--clusters", str(clusters), "--listen", "127.0.0.1:0", "--data-dir", str(data),
        env=env,
    )  # fmt: skip
    try:
        process.wait_for("Press Ctrl-C to stop", timeout=90)
        names = [f"cluster{index}" for index in range(1, clusters + 1)]
        yield UpFleet(
            process,
            data / "hub" / "admin.kubeconfig",
            {name: data / "clusters" / name / "admin.kubeconfig" for name in names},
        )
    finally:
        assert process.stop() == 0, "\n".join(process.lines[-40:])
