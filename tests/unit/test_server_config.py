"""The hub's configuration refuses values the server cannot work with."""

from __future__ import annotations

from pathlib import Path

import pytest

from pyocm.apiserver.config import ServerConfig
from pyocm.cli.hub import check_replicas, check_storage, parse_interval


@pytest.mark.parametrize("interval", [0.0, -1.0, 61.0])
def test_a_bookmark_interval_outside_the_minute_is_refused(interval: float) -> None:
    with pytest.raises(ValueError, match="watch_bookmark_interval must be more than 0"):
        ServerConfig(data_dir=Path("/nonexistent"), watch_bookmark_interval=interval)


def test_the_default_bookmark_interval_is_under_a_minute() -> None:
    assert ServerConfig(data_dir=Path("/nonexistent")).watch_bookmark_interval == 55.0


@pytest.mark.parametrize(
    ("given", "error"),
    [
        ({"min_request_timeout": 0}, "min_request_timeout"),
        ({"compaction_interval": -1.0}, "compaction_interval"),
    ],
)
def test_watch_limits_out_of_range_are_refused(given: dict[str, float], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        ServerConfig(data_dir=Path("/tmp/x"), **given)  # type: ignore[arg-type]


def test_a_compaction_interval_of_0_keeps_history_by_count_only() -> None:
    assert ServerConfig(data_dir=Path("/tmp/x")).watch_history_seconds == 300.0
    assert ServerConfig(
        data_dir=Path("/tmp/x"), compaction_interval=0
    ).watch_history_seconds == float("inf")


@pytest.mark.parametrize(
    ("text", "seconds"), [("0", 0.0), ("0s", 0.0), ("90s", 90.0), ("5m", 300.0)]
)
def test_hub_compaction_interval_takes_go_durations_and_0(text: str, seconds: float) -> None:
    assert parse_interval(text) == seconds


def test_storage_options_follow_the_url_scheme() -> None:
    sqlite = ServerConfig(data_dir=Path("/d"), sqlite_synchronous="NORMAL")
    assert sqlite.storage_options() == {"history_max_age": 300.0, "synchronous": "NORMAL"}
    etcd = ServerConfig(
        data_dir=Path("/d"),
        storage="etcd://10.0.0.1:2379",
        etcd_prefix="/hub-a",
        etcd_cafile="/ca",
        compaction_interval=60,
    )
    assert etcd.storage_options() == {
        "history_max_age": 60,
        "etcd_prefix": "/hub-a",
        "etcd_cafile": "/ca",
        "etcd_certfile": "",
        "etcd_keyfile": "",
        # kube-apiserver's --etcd-compaction-interval: etcd's history, like the hub's
        "etcd_compaction_interval": 60,
    }


@pytest.mark.parametrize(
    ("given", "error"),
    [
        ({"etcd_certfile": "/c", "etcd_keyfile": "/k"}, "--etcd-certfile, --etcd-keyfile need"),
        ({"etcd_prefix": "/hub-a"}, "--etcd-prefix needs"),
        ({"storage": "etcd://host"}, "etcd:// endpoints are host:port"),
        ({"storage": "etcd://h:1", "etcd_keyfile": "/k"}, "etcd_keyfile needs etcd_certfile"),
    ],
)
def test_hub_refuses_etcd_options_it_cannot_use(given: dict[str, str], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        check_storage(ServerConfig(data_dir=Path("/d"), **given))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("replicas", "reuse_port", "flag"), [(2, False, "--replicas"), (1, True, "--reuse-port")]
)
def test_replicas_are_refused_on_sqlite(replicas: int, reuse_port: bool, flag: str) -> None:
    sqlite = ServerConfig(data_dir=Path("/d"))
    with pytest.raises(ValueError, match=f"^{flag} needs --storage etcd://HOST:PORT"):
        check_replicas(sqlite, replicas=replicas, reuse_port=reuse_port)
    with pytest.raises(ValueError, match="need shared storage"):
        ServerConfig(data_dir=Path("/d"), reuse_port=True)
    etcd = ServerConfig(data_dir=Path("/d"), storage="etcd://h:1", reuse_port=True)
    check_replicas(etcd, replicas=replicas, reuse_port=reuse_port)
    assert etcd.shared_storage and not sqlite.shared_storage
