"""Running pyocm commands as a person does: real processes, their output and exit codes."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time

PYOCM = [sys.executable, "-m", "pyocm"]


class Running:
    """A pyocm command in the background whose output lines can be waited for."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self.process = subprocess.Popen(
            [*PYOCM, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, **(env or {})},
        )
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, pattern: str, *, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        for line in self.lines:
            if re.search(pattern, line):
                return line
        while time.monotonic() < deadline:
            try:
                line = self._queue.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                break
            self.lines.append(line)
            if re.search(pattern, line):
                return line
        raise AssertionError(f"{pattern!r} not seen; output:\n" + "\n".join(self.lines[-40:]))

    def stop(self, sig: int = signal.SIGINT, *, timeout: float = 20) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout=timeout)
        with_rest = self._queue
        while True:
            try:
                line = with_rest.get(timeout=1)
            except queue.Empty:
                break
            if line is None:
                break
            self.lines.append(line)
        return code


def pyocm(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PYOCM, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
