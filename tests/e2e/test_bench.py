"""The benchmarks run and print their figures (their numbers are not judged here)."""

from __future__ import annotations

import re
import subprocess
import sys


def bench(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pyocm", "bench", *args], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def test_apiserver_benchmark_prints_rates_and_fan_out() -> None:
    lines = bench("apiserver", "--seconds", "0.5", "--clients", "2", "--watchers", "20")
    assert len(lines) == 6
    assert re.match(r"hub GET configmap \(2 clients\): [\d,]+ req/s, p50 [\d.]+ ms, p99 [\d.]+ ms", lines[0])
    assert lines[1].startswith("hub PUT configmap, durable")
    assert lines[2].startswith("durable writes with group commit (8 clients)")
    assert re.match(r"watch fan-out to 20 watchers \(20 writes\): p50 \d+ ms, p99 \d+ ms", lines[3])
    assert lines[4].startswith("bare aiohttp TLS GET, baseline")
    assert re.match(r"ratios to the bare server: GET [\d.]+ \(goal >= 0.5\), update [\d.]+", lines[5])


def test_registration_benchmark_prints_both_latencies() -> None:
    lines = bench("registration", "--clusters", "2")
    assert re.match(r"accept -> Available: n=2 p50=\d+ ms", lines[0])
    assert re.match(r"agent start -> Joined \(auto-approval\): n=2 p50=\d+ ms", lines[1])
