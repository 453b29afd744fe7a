"""The benchmarks run and print their figures (their numbers are not judged here)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

#: Each runs a benchmark for seconds: ``./dev test`` runs them after the main suite.
pytestmark = pytest.mark.bench


def bench(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pyocm", "bench", *args], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


@pytest.mark.parametrize(
    ("storage", "hub"), [pytest.param("sqlite", "hub"), pytest.param("etcd", "hub on etcd")]
)
def test_apiserver_benchmark_prints_rates_and_fan_out(storage: str, hub: str) -> None:
    lines = bench(
        "apiserver", "--seconds", "0.5", "--clients", "2", "--watchers", "20", "--storage", storage
    )
    assert len(lines) == 7
    assert re.match(
        rf"{hub} GET configmap \(2 clients\): [\d,]+ req/s, p50 [\d.]+ ms, p99 [\d.]+ ms",
        lines[0],
    )
    assert lines[1].startswith(f"{hub} PUT configmap, durable")
    assert lines[2].startswith("durable writes with group commit (8 clients)")
    assert re.match(r"watch fan-out to 20 watchers \(20 writes\): p50 \d+ ms, p99 \d+ ms", lines[3])
    assert lines[4].startswith("bare aiohttp TLS GET, baseline (2 clients)")
    assert lines[5].startswith("bare aiohttp TLS GET, baseline (8 clients)")
    assert re.match(
        r"ratios to the bare server: GET [\d.]+ \(goal >= 0.5\), "
        r"update [\d.]+ with 8 clients \(goal >= 0.3\), [\d.]+ with 2 ",
        lines[6],
    )


def test_registration_benchmark_prints_both_latencies() -> None:
    lines = bench("registration", "--clusters", "2")
    assert re.match(r"accept -> Available: n=2 p50=\d+ ms", lines[0])
    assert re.match(r"agent start -> Joined \(auto-approval\): n=2 p50=\d+ ms", lines[1])


def test_fleet_benchmark_reports_the_hubs_costs() -> None:
    lines = bench("fleet", "--scenario", "heartbeat-churn", "--clusters", "3", "--duration", "4")
    report = {line[:35].strip(): line[35:] for line in lines}
    assert (
        report["command"]
        == "pyocm bench fleet --scenario heartbeat-churn --clusters 3 --duration 4"
    )
    assert report["clusters"] == "3 (heartbeat-churn)"
    assert re.match(r"n=3 p50=\d+ ms", report["start to available"])
    assert re.match(r"[\d.]+ cores", report["hub CPU in the window"])
    assert re.match(r"\d+ MiB", report["hub RSS after joining"])
    # 3 clusters hold a dozen connections or so; the limit is the process's own.
    assert re.fullmatch(r"\d+ \(limit [\d,]+ per process\)", report["hub open files after joining"])
    assert re.match(r"\d+ MiB", report["hub RSS at the end"])
    assert re.match(r"n=\d+ p50=\d+ ms", report["lease renewal (agent's view)"]), "leases every 2 s"
    assert re.match(r"n=[1-9]\d* p50 ≤ \d+ ms, p99 ", report["lease update (hub handler time)"])
    assert report["Available -> Unknown transitions"] == "0"
    assert re.match(r"[\d.]+ \(\d+ in all\)", report["objects per cluster"])


def test_fleet_benchmark_splits_the_fleet_over_simulator_processes() -> None:
    lines = bench(
        "fleet", "--scenario", "heartbeat-churn", "--clusters", "5", "--duration", "4",
        "--sim-processes", "2",
    )  # fmt: skip
    report = {line[:35].strip(): line[35:] for line in lines}
    assert report["clusters"] == "5 (heartbeat-churn)"
    assert "all available after" in report
    assert re.match(r"n=5 p50=\d+ ms", report["start to available"])
    assert re.match(r"n=\d+ p50=\d+ ms", report["lease renewal (agent's view)"]), "leases every 2 s"
    assert report["Available -> Unknown transitions"] == "0"
    assert report["objects per cluster"].endswith(" in all)")


def test_fleet_benchmark_times_a_rotation_storm() -> None:
    lines = bench("fleet", "--scenario", "rotation-storm", "--clusters", "3", "--duration", "10")
    report = {line[:35].strip(): line[35:] for line in lines}
    assert re.match(r"3 of 3, the last after [\d.]+ s", report["certificates renewed at once"])
    assert re.match(r"n=3 p50=\d+ ms", report["renewal (asked to stored)"])
    assert re.match(r"[\d.]+ cores", report["hub CPU during the storm"])
    assert re.match(
        r"3 approved, created over \d+ s; 3 signed, the last \d+ s after the first was created$",
        report["renewal CSRs on the hub"],
    )
    assert report["Available -> Unknown transitions"] == "0"


def test_fleet_benchmark_runs_a_storm_with_registration_alone() -> None:
    lines = bench(
        "fleet", "--scenario", "rotation-storm", "--clusters", "3", "--duration", "10",
        "--agents", "registration",
    )  # fmt: skip
    report = {line[:35].strip(): line[35:] for line in lines}
    assert report["clusters"] == "3 (rotation-storm, registration alone)"
    assert re.match(r"3 of 3, the last after [\d.]+ s", report["certificates renewed at once"])
    assert report["Available -> Unknown transitions"] == "0"


def test_fleet_benchmark_runs_works_through_the_fleet() -> None:
    lines = bench(
        "fleet", "--scenario", "works", "--clusters", "3", "--duration", "2",
        "--works-per-cluster", "2",
    )  # fmt: skip
    report = {line[:35].strip(): line[35:] for line in lines}
    assert re.match(r"6 in [\d.]+ s \(2 per cluster\)$", report["works created"])
    assert re.match(r"[\d.]+ s \(6 of 6\)$", report["all Applied and Available after"])
    assert re.match(
        r"[\d.]+ cores \([+-][\d.]+ against the window without\)$",
        report["hub CPU in the window, with works"],
    )
    assert re.match(
        r"n=\d+ p50=\d+ ms .*\(\d+ of 200 seen\)$", report["spec change to Applied (hub view)"]
    )


def test_fleet_benchmark_enables_add_ons_on_every_cluster() -> None:
    lines = bench("fleet", "--scenario", "addons", "--clusters", "3", "--duration", "2")
    report = {line[:35].strip(): line[35:] for line in lines}
    assert report["hub"] == "pyocm hub --addons helloworld,helloworld-b,helloworld-c"
    assert report["clusters"] == "3 (addons)"
    assert re.match(
        r"[\d.]+ s \(3 of 3; goal 90 s: (met|MISSED)\)$",
        report["helloworld Available on all after"],
    )
    assert re.match(r"n=3 p50=\d+ ms", report["enable to Available, per cluster"])
    assert report["helloworld certificates and Leases"] == (
        "3 CSRs approved and signed for 3 clusters; 3 Leases renewed by simulated agents"
    )
    assert re.match(r"[\d.]+ s more \(9 of 9 MCAs\)$", report["3 add-ons Available on all after"])
    assert re.match(
        r"[\d.]+ cores \([+-][\d.]+ against the window without; goal \+0.1: (met|MISSED)\)$",
        report["hub CPU in the window, 3 add-ons"],
    )
    assert report["simulated add-on agents"] == (
        "9 (9 with a Lease): Lease renewals only, never connected to the hub"
    )


def test_fleet_benchmark_installs_and_upgrades_a_template_add_on() -> None:
    lines = bench("fleet", "--scenario", "template", "--clusters", "6", "--duration", "2")
    report = {line[:35].strip(): line[35:] for line in lines}
    assert report["clusters"] == "6 (template)"
    assert report["template registrations"] == "KubeClient (2 hub permissions), CustomSigner"
    assert re.match(
        r"[\d.]+ s \(6 of 6; goal 120 s: (met|MISSED)\)$",
        report["Available on all after"],
    )
    assert re.match(r"[\d.]+ cores$", report["hub CPU while enabling"])
    assert re.match(r"n=6 p50=\d+ ms", report["enable to Available, per cluster"])
    assert report["certificates signed"] == (
        "example.com/signer-name: 6 clusters, kubernetes.io/kube-apiserver-client: 6 clusters"
    )
    assert report["hub permission RoleBindings"] == (
        "6 CurrentCluster (cluster namespaces), 1 SingleNamespace in open-cluster-management"
        " (one name, as upstream)"
    )
    assert report["agent Deployments on the clusters"] == "6 (status simulated, nothing runs)"
    # clustersPerDecisionGroup 25% of 6: groups of 2.
    assert report["decision groups"] == "3 (2/2/2 clusters; clustersPerDecisionGroup 25%)"
    for index in range(3):
        assert re.match(
            r"[\d.]+ s \(v2 desired at \+[\d.]+ s, all applied at \+[\d.]+ s\),"
            r" hub CPU ([\d.]+ cores|-)$",
            report[f"group {index} (2 clusters)"],
        )
    assert re.match(
        r"[\d.]+ s \(6 of 6\), hub CPU [\d.]+ cores$", report["v2 applied on all after"]
    )
    assert report["Available lost during the rollout"] == "0"
    assert report["CMA install progression"] == (
        "Completed: selected clusters 6. configured addons 6/6 completed with no errors,"
        " 0 failed 0 timeout."
    )
    assert report["agent Deployments at v2"] == "6 of 6 clusters"


def test_placement_benchmark_reports_latency_and_cpu() -> None:
    lines = bench(
        "placement", "--clusters", "60", "--placements", "10", "--changes", "6",
        "--duration", "3", "--policy", "default",
    )  # fmt: skip
    report = {line[:35].strip(): line[35:] for line in lines}
    assert re.match(r"60 created in [\d.]+ s \(1 in 10 tainted", report["clusters"])
    assert re.match(r"\d+ ms$", report["one placement, first schedule"])
    assert re.match(
        r"n=6 p50=\d+ ms p99=\d+ ms max=\d+ ms \(6 of 6 seen\)", report["spec change to decisions"]
    )
    assert re.match(
        r"10 of 10 in [\d.]+ s .*prioritizers default\)$", report["placements scheduled"]
    )
    assert re.match(r"\d+ in [\d.]+ s$", report["scheduling passes until quiet"])
    assert "NOT quiet" not in report
    assert re.match(r"\d+ in [34] s \(1 % of 60 a minute\)$", report["cluster label changes"])
    assert re.match(r"[\d.]+ cores \(goal < 0.2\)$", report["hub CPU keeping placements current"])
    assert re.match(r"\d+$", report["scheduling passes in the window"])
    assert report["scheduling queue at the end"] == "0 waiting"


def test_fleet_benchmark_refuses_an_unknown_scenario() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pyocm", "bench", "fleet", "--scenario", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "unknown scenario 'nope'" in done.stderr


def test_fleet_benchmark_refuses_works_without_the_work_agent() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pyocm", "bench", "fleet", "--scenario", "works", "--agents",
         "registration"],
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "the works scenario needs --agents all" in done.stderr


def test_fleet_benchmark_refuses_more_simulators_than_clusters() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyocm",
            "bench",
            "fleet",
            "--clusters",
            "2",
            "--sim-processes",
            "3",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        done.returncode == 2 and "--sim-processes must be between 1 and --clusters" in done.stderr
    )


def test_placement_benchmark_refuses_an_unknown_policy() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pyocm", "bench", "placement", "--policy", "nope"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--policy must be one of steady-cpu, default" in done.stderr


def test_fleet_benchmark_runs_the_hub_as_replicas_on_a_three_member_etcd() -> None:
    lines = bench(
        "fleet", "--scenario", "heartbeat-churn", "--clusters", "3", "--duration", "4",
        "--storage", "etcd", "--replicas", "2",
    )  # fmt: skip
    report = {line[:35].strip(): line[35:] for line in lines}
    assert report["hub processes"] == "2 on a 3-member etcd (the hub figures sum them)"
    assert report["Available -> Unknown transitions"] == "0"
    assert re.match(r"n=\d+ p50=\d+ ms", report["lease renewal (agent's view)"]), "leases every 2 s"
    each = report["CPU per process in the window"]
    roles = re.findall(r"(hub \d+|hub supervisor|etcd m\d|fleet) [\d.]+", each)
    assert sorted(r for r in roles if r.startswith("etcd")) == ["etcd m0", "etcd m1", "etcd m2"]
    assert len([r for r in roles if re.fullmatch(r"hub \d+", r)]) == 2, each
    held = report["hub open files after joining"]
    assert re.fullmatch(r"\d+ \+ \d+ \(limit [\d,]+ per process\)", held), "one per replica"
    assert "fleet" in roles and "hub supervisor" in roles
    assert re.match(r"[\d.]+ MiB", report["etcd database (largest member)"])
    assert re.match(r"[\d.]+ \(\d+ in all\)", report["objects per cluster"])
