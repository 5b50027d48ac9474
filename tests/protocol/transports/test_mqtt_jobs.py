"""The MQTT transport's pure parts: broker URLs, topics, job checking, reply thinning."""

from __future__ import annotations

import argparse

import pytest

from protocol.transports.mqtt.ask import build_job, configure, job_from_args, parse_bestmove
from protocol.transports.mqtt.worker import (
    Backoff,
    BrokerSettings,
    JobError,
    MqttConfigError,
    ReplyCollector,
    WorkerConfig,
    add_broker_arguments,
    broker_from_args,
    check_topic_prefix,
    game_from_topic,
    jobs_filter,
    parse_broker_url,
    parse_job,
    reason_failed,
    status_topic,
    valid_response_topic,
    worker_from_status_topic,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("mqtt://broker.example:1884", ("broker.example", 1884, False)),
        ("mqtt://broker.example", ("broker.example", 1883, False)),
        ("tcp://10.0.0.5:1883", ("10.0.0.5", 1883, False)),
        ("mqtts://hivemq.cloud", ("hivemq.cloud", 8883, True)),
        ("ssl://emqx.local:8884", ("emqx.local", 8884, True)),
        ("127.0.0.1:1999", ("127.0.0.1", 1999, False)),
        ("localhost", ("localhost", 1883, False)),
        ("mqtt://[::1]:1883", ("::1", 1883, False)),
    ],
)
def test_broker_urls(url: str, expected: tuple[str, int, bool]) -> None:
    assert parse_broker_url(url) == expected


@pytest.mark.parametrize(
    "url",
    ["http://x:1883", "mqtt://", "mqtt://x:99999", "mqtt://user:pw@x:1883", "mqtt://x/path"],
)
def test_bad_broker_urls(url: str) -> None:
    with pytest.raises(MqttConfigError):
        parse_broker_url(url)


def _broker_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_broker_arguments(parser)
    return parser.parse_args(list(argv))


def test_password_comes_from_the_environment_never_the_command_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FLEET_SECRET", "s3cret")
    settings = broker_from_args(_broker_args("--broker", "mqtts://b:8883", "--username", "bot",
                                             "--password-env", "FLEET_SECRET"))
    assert (settings.host, settings.port, settings.tls) == ("b", 8883, True)
    assert (settings.username, settings.password) == ("bot", "s3cret")
    assert "s3cret" not in repr(settings)

    monkeypatch.setenv("BRUDNO_MQTT_PASSWORD", "default-var")
    settings = broker_from_args(_broker_args("--username", "bot"))
    assert settings.password == "default-var"

    with pytest.raises(MqttConfigError, match="MISSING_VAR"):
        broker_from_args(_broker_args("--username", "bot", "--password-env", "MISSING_VAR"))
    with pytest.raises(MqttConfigError, match="user name"):
        broker_from_args(_broker_args("--password-env", "FLEET_SECRET"))
    with pytest.raises(MqttConfigError, match="TLS"):
        broker_from_args(_broker_args("--cafile", "ca.pem"))
    assert broker_from_args(_broker_args("--tls", "--cafile", "ca.pem")).tls


def test_topics() -> None:
    assert jobs_filter("brudno", "bots") == "$share/bots/brudno/jobs/#"
    assert status_topic("fleet/eu", "w-1") == "fleet/eu/workers/w-1/status"
    assert worker_from_status_topic("fleet/eu/workers/w-1/status", "fleet/eu") == "w-1"
    assert worker_from_status_topic("fleet/eu/workers/a/b/status", "fleet/eu") is None
    assert worker_from_status_topic("other/workers/w-1/status", "fleet/eu") is None
    assert game_from_topic("brudno/jobs/tictactoe", "brudno") == "tictactoe"
    assert game_from_topic("brudno/jobs/chess/extra", "brudno") == "chess/extra"
    assert valid_response_topic("clients/me/replies")
    for bad in ("", "a/+/b", "a/#", None, b"bytes", "nul\x00"):
        assert not valid_response_topic(bad)
    for bad_prefix in ("", "/brudno", "brudno/", "a/+", "a//b"):
        with pytest.raises(MqttConfigError):
            check_topic_prefix(bad_prefix)
    with pytest.raises(MqttConfigError):
        WorkerConfig(group="a/b", worker_id="w").check()
    with pytest.raises(MqttConfigError):
        WorkerConfig(worker_id="a+b").check()
    with pytest.raises(MqttConfigError):
        WorkerConfig(worker_id="w", concurrency=0).check()


def test_subscription_reason_codes() -> None:
    assert reason_failed([1]) is None
    assert reason_failed([0x9E]) == 0x9E
    assert reason_failed((0, 0x87)) == 0x87


def test_a_good_job_is_split_into_setup_and_go() -> None:
    job = parse_job(
        b"setoption name MultiPV value 2\r\n\nucinewgame\nisready\n"
        b"setoption name UCI_Variant value chess\n"
        b"position startpos moves e2e4\ngo nodes 500\n\n",
        "chess",
    )
    assert job.setup == ("setoption name MultiPV value 2", "position startpos moves e2e4")
    assert job.go == "go nodes 500"
    assert job.limits.nodes == 500
    assert job.new_game
    assert not parse_job(b"go depth 1", "chess").new_game
    assert parse_job(b"go depth 9", "tictactoe").limits.depth == 9
    assert parse_job(b"go wtime 1000 btime 1000", "chess").limits.wtime == 1000


@pytest.mark.parametrize(
    ("payload", "game", "what"),
    [
        (b"go depth 3", "go", "unknown game"),
        (b"\xff\xfe garbage", "chess", "not UTF-8"),
        (b"hello world\ngo depth 1", "chess", "unknown command"),
        (b"position startpos", "chess", "no go command"),
        (b"", "chess", "no go command"),
        (b"go infinite", "chess", "waits for a stop"),
        (b"go ponder movetime 100", "chess", "waits for a stop"),
        (b"go", "chess", "needs a limit"),
        (b"go searchmoves e2e4", "chess", "needs a limit"),
        (b"go depth 2\nposition startpos", "chess", "last command"),
        (b"go depth 2\ngo depth 3", "chess", "last command"),
        (b"go depth x", "chess", "x"),
        (b"stop\ngo depth 1", "chess", "not allowed"),
        (b"quit", "chess", "not allowed"),
        (b"uci\ngo depth 1", "chess", "not allowed"),
        (b"perft 3\ngo depth 1", "chess", "not allowed"),
        (b"setoption name UCI_Variant value tictactoe\ngo depth 1", "chess", "from the topic"),
        (b"x" * 70_000, "chess", "too long"),
    ],
)
def test_bad_jobs_are_refused_with_a_reason(payload: bytes, game: str, what: str) -> None:
    with pytest.raises(JobError) as caught:
        parse_job(payload, game)
    line = caught.value.line()
    assert line.startswith("info string error: ")
    assert what in line
    assert "\n" not in line and line.isprintable()


def test_progress_is_thinned_to_the_last_line_per_depth_and_multipv() -> None:
    sink = ReplyCollector()
    stats = "nodes 10 nps 100 hashfull 0 time 1"
    sink.send(f"info depth 1 seldepth 1 multipv 1 score cp 5 {stats} pv e2e4", droppable=True)
    sink.send("info depth 2 currmove e2e4 currmovenumber 1", droppable=True)
    sink.send(f"info depth 2 seldepth 2 {stats}", droppable=True)
    assert sink.take_ready() == []  # depth 1 still open: a better line may come
    sink.send(f"info depth 2 seldepth 2 multipv 1 score cp 9 lowerbound {stats} pv d2d4",
              droppable=True)
    assert sink.take_ready() == [
        f"info depth 1 seldepth 1 multipv 1 score cp 5 {stats} pv e2e4"
    ]
    assert sink.changed.is_set()
    sink.send(f"info depth 2 seldepth 3 multipv 2 score cp 1 {stats} pv e2e4", droppable=True)
    sink.send(f"info depth 2 seldepth 3 multipv 1 score cp 7 {stats} pv d2d4 d7d5",
              droppable=True)
    sink.send("info string error: illegal searchmove ignored (zz)")
    assert sink.errors == ["info string error: illegal searchmove ignored (zz)"]
    sink.send(f"info depth 3 seldepth 3 multipv 1 score cp 8 {stats} pv e2e4 e7e5",
              droppable=True)
    sink.send("bestmove e2e4 ponder e7e5")
    # Whatever was not published yet goes out with the bestmove, in order.
    assert sink.take_ready() == []
    assert sink.final == [
        f"info depth 2 seldepth 3 multipv 1 score cp 7 {stats} pv d2d4 d7d5",
        f"info depth 2 seldepth 3 multipv 2 score cp 1 {stats} pv e2e4",
        "info string error: illegal searchmove ignored (zz)",
        f"info depth 3 seldepth 3 multipv 1 score cp 8 {stats} pv e2e4 e7e5",
        "bestmove e2e4 ponder e7e5",
    ]


def test_backoff_doubles_to_its_ceiling_and_starts_over() -> None:
    low = Backoff(0.5, 4.0, rng=lambda: 0.0)
    assert [low.next_delay() for _ in range(6)] == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0]
    high = Backoff(0.5, 4.0, rng=lambda: 1.0)
    assert [high.next_delay() for _ in range(5)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    high.reset()
    assert high.next_delay() == 0.5


def test_ask_builds_jobs_from_arguments() -> None:
    parser = argparse.ArgumentParser()
    configure(parser)
    args = parser.parse_args(["--fen", "8/8/8/8/8/8/8/K1k5 w - - 0 1", "--moves", "a1a2",
                              "--option", "MultiPV=2", "--depth", "4", "--nodes", "900"])
    assert job_from_args(args) == (
        "setoption name MultiPV value 2\n"
        "position fen 8/8/8/8/8/8/8/K1k5 w - - 0 1 moves a1a2\n"
        "go depth 4 nodes 900\n"
    )
    assert build_job() == "position startpos\ngo movetime 1000\n"
    assert build_job(go="wtime 100 btime 100").endswith("go wtime 100 btime 100\n")
    with pytest.raises(MqttConfigError):
        job_from_args(parser.parse_args(["--option", "MultiPV"]))
    assert parse_bestmove("bestmove e2e4 ponder e7e5") == ("e2e4", "e7e5")
    assert parse_bestmove("bestmove 0000") == ("0000", None)


def test_broker_settings_show_their_url() -> None:
    assert BrokerSettings("h", 1884).url == "mqtt://h:1884"
    assert BrokerSettings("::1", 8883, tls=True).url == "mqtts://[::1]:8883"
