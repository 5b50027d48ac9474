"""``brudno mqtt-ask`` as a command: the job it builds from its arguments, what it prints and
its exit status by outcome (an answer, a refusal, an internal error, no answer, no worker,
no broker)."""

from __future__ import annotations

import argparse
import asyncio
import os
from dataclasses import dataclass

import pytest

from brudno.cli import main
from brudno.commands.mqtt_ask import configure, job_from_args
from protocol.transports.mqtt.ask import build_job, parse_bestmove
from protocol.transports.mqtt.errors import MqttConfigError
from tests.support.mosquitto_fixture import (
    HANG_TIMEOUT,
    FailingRunner,
    Mosquitto,
    free_port,
    publish_presence,
    running_worker,
    unique_prefix,
)
from tests.support.tcp_helpers import ensure_warm


@dataclass(frozen=True)
class Run:
    code: int
    out: list[str]
    err: str


async def _brudno(
    brudno: list[str], *args: str, stdin: bytes = b"", env: dict[str, str] | None = None
) -> Run:
    process = await asyncio.create_subprocess_exec(
        *brudno,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    out, err = await asyncio.wait_for(process.communicate(stdin), HANG_TIMEOUT)
    assert process.returncode is not None
    return Run(process.returncode, out.decode().splitlines(), err.decode())


@pytest.mark.slow
async def test_mqtt_ask_prints_the_reply_and_exits_by_outcome(
    mosquitto: Mosquitto, mqtt_prefix: str, brudno: list[str]
) -> None:
    await ensure_warm()
    url = ["--broker", mosquitto.url, "--prefix", mqtt_prefix]
    async with running_worker(mosquitto, mqtt_prefix) as worker:
        full, quiet, illegal = await asyncio.gather(
            _brudno(
                brudno,
                "mqtt-ask",
                *url,
                "--fen",
                "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1",
                "--depth",
                "3",
                "--option",
                "MultiPV=2",
            ),
            _brudno(
                brudno,
                "mqtt-ask",
                *url,
                "--game",
                "tictactoe",
                "--job",
                "-",
                "--quiet",
                stdin=b"position startpos moves P@a1 P@b2\ngo depth 9\n",
            ),
            _brudno(brudno, "mqtt-ask", *url, "--moves", "e2e4", "e2e4", "--nodes", "100"),
        )
    assert full.code == 0, full
    assert full.out[-1].startswith("bestmove a1a8")
    assert any(" multipv 2 " in line for line in full.out)
    assert all(line.startswith(("info depth", "bestmove")) for line in full.out)

    assert quiet.code == 0, quiet
    assert len(quiet.out) == 1 and quiet.out[0].startswith("bestmove P@")

    assert illegal.code == 1, illegal
    assert illegal.out == [
        "info string error: illegal move e2e4 in position "
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1 "
        "(position startpos moves e2e4 e2e4)"
    ]
    assert worker.stats.searched == 2


def test_mqtt_ask_without_an_answer(
    mosquitto: Mosquitto, capsys: pytest.CaptureFixture[str]
) -> None:
    # A worker says it is online but takes no jobs (hung, or its session holds them): the
    # job is re-sent while no worker accepts it, then given up.
    prefix = unique_prefix()
    asyncio.run(publish_presence(mosquitto, prefix, "ghost", "online"))
    try:
        code = main(
            [
                "mqtt-ask",
                "--broker",
                mosquitto.url,
                "--prefix",
                prefix,
                "--nodes",
                "100",
                "--timeout",
                "1.5",
                "--retry-after",
                "0.5",
            ]
        )
    finally:
        asyncio.run(publish_presence(mosquitto, prefix, "ghost", ""))
    err = capsys.readouterr().err
    assert code == 3 and "no answer within 1.5 s" in err, err
    sends = int(err.split("(sent ")[1].split()[0])
    assert sends >= 2

    assert main(["mqtt-ask", "--option", "MultiPV"]) == 2
    assert "NAME=VALUE" in capsys.readouterr().err
    assert main(["mqtt-ask", "--broker", f"mqtt://127.0.0.1:{free_port()}"]) == 3
    assert "cannot reach the broker" in capsys.readouterr().err


def test_mqtt_ask_says_when_no_worker_is_online(
    mosquitto: Mosquitto, capsys: pytest.CaptureFixture[str]
) -> None:
    # The timeout is long: the answer comes from the retained presence, not from waiting.
    prefix = unique_prefix()
    ask = [
        "mqtt-ask",
        "--broker",
        mosquitto.url,
        "--prefix",
        prefix,
        "--nodes",
        "100",
        "--timeout",
        str(HANG_TIMEOUT),
    ]
    assert main(ask) == 3
    err = capsys.readouterr().err
    assert err.startswith(
        "brudno mqtt-ask: no worker is online: none announces 'online' on "
        f"{prefix}/workers/+/status"
    ), err
    assert "no answer within" not in err

    # A worker that has left (its retained offline) is no worker either; the message says so.
    asyncio.run(publish_presence(mosquitto, prefix, "gone", "offline"))
    try:
        assert main(ask) == 3
    finally:
        asyncio.run(publish_presence(mosquitto, prefix, "gone", ""))
    err = capsys.readouterr().err
    assert "no worker is online" in err and "1 known worker(s) offline" in err, err


async def test_mqtt_ask_exits_non_zero_on_an_internal_error(
    mosquitto: Mosquitto, mqtt_prefix: str, brudno: list[str]
) -> None:
    url = ["--broker", mosquitto.url, "--prefix", mqtt_prefix]
    async with running_worker(mosquitto, mqtt_prefix, runner_factory=FailingRunner):
        full, quiet = await asyncio.gather(
            _brudno(brudno, "mqtt-ask", *url, "--depth", "2"),
            _brudno(brudno, "mqtt-ask", *url, "--depth", "2", "--quiet"),
        )
    for run in (full, quiet):
        assert run.code == 1, run
        assert len(run.out) == 1, run
        assert run.out[0].startswith(
            "info string error: internal error, see the worker's log for incident "
        ), run
        assert run.out[0].endswith(" (go depth 2)"), run
        assert "Traceback" not in run.err and "secret" not in run.err + run.out[0], run


def test_ask_builds_jobs_from_arguments() -> None:
    parser = argparse.ArgumentParser()
    configure(parser)
    args = parser.parse_args(
        [
            "--fen",
            "8/8/8/8/8/8/8/K1k5 w - - 0 1",
            "--moves",
            "a1a2",
            "--option",
            "MultiPV=2",
            "--depth",
            "4",
            "--nodes",
            "900",
        ]
    )
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
