"""``brudno mqtt-ask`` and ``brudno mqtt`` as commands, and a broker with TLS and passwords."""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import aiomqtt
import chess
import pytest

from brudno.cli import build_parser, main
from games.chess_game import default_evaluator
from protocol.transports.mqtt import worker as mqtt
from protocol.transports.mqtt.ask import AskClient, NoWorkerOnlineError
from protocol.transports.mqtt.worker import (
    FatalBrokerError,
    MqttWorker,
    ReplyStatus,
    TerminalReply,
    WorkerConfig,
    parse_job,
)
from protocol.uci.options import NO_EVAL_FILES, EvalFileAccess
from protocol.uci.runner import ThreadRunner
from tests.support.mosquitto_fixture import (
    HANG_TIMEOUT,
    FailingRunner,
    Mosquitto,
    ask_client,
    free_port,
    make_password_file,
    make_tls_files,
    publish_presence,
    running_worker,
    unique_prefix,
)
from tests.support.paths import REPO
from tests.support.tcp_helpers import ensure_warm


@dataclass(frozen=True)
class Run:
    code: int
    out: list[str]
    err: str


async def _brudno(brudno: list[str], *args: str, stdin: bytes = b"",
                  env: dict[str, str] | None = None) -> Run:
    process = await asyncio.create_subprocess_exec(
        *brudno, *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, **(env or {})},
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
            _brudno(brudno, "mqtt-ask", *url, "--fen", "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1",
                    "--depth", "3", "--option", "MultiPV=2"),
            _brudno(brudno, "mqtt-ask", *url, "--game", "tictactoe", "--job", "-", "--quiet",
                    stdin=b"position startpos moves P@a1 P@b2\ngo depth 9\n"),
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


def test_mqtt_ask_without_an_answer(mosquitto: Mosquitto,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    # A worker says it is online but takes no jobs (hung, or its session holds them): the
    # job is re-sent while no worker accepts it, then given up.
    prefix = unique_prefix()
    asyncio.run(publish_presence(mosquitto, prefix, "ghost", "online"))
    try:
        code = main(["mqtt-ask", "--broker", mosquitto.url, "--prefix", prefix,
                     "--nodes", "100", "--timeout", "1.5", "--retry-after", "0.5"])
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
    ask = ["mqtt-ask", "--broker", mosquitto.url, "--prefix", prefix, "--nodes", "100",
           "--timeout", str(HANG_TIMEOUT)]
    assert main(ask) == 3
    err = capsys.readouterr().err
    assert err.startswith("brudno mqtt-ask: no worker is online: none announces 'online' on "
                          f"{prefix}/workers/+/status"), err
    assert "no answer within" not in err

    # A worker that has left (its retained offline) is no worker either; the message says so.
    asyncio.run(publish_presence(mosquitto, prefix, "gone", "offline"))
    try:
        assert main(ask) == 3
    finally:
        asyncio.run(publish_presence(mosquitto, prefix, "gone", ""))
    err = capsys.readouterr().err
    assert "no worker is online" in err and "1 known worker(s) offline" in err, err


async def test_the_ask_client_knows_who_is_online(mosquitto: Mosquitto, mqtt_prefix: str) -> None:
    await ensure_warm()
    async with ask_client(mosquitto, mqtt_prefix) as ask:
        assert await ask.online_workers() == []
        with pytest.raises(NoWorkerOnlineError, match="no worker is online"):
            await ask.ask("chess", "go depth 1", timeout=HANG_TIMEOUT, require_worker=True)
    async with running_worker(mosquitto, mqtt_prefix) as worker, \
            ask_client(mosquitto, mqtt_prefix) as ask:
        worker_id = worker.config.worker_id
        assert await ask.online_workers() == [worker_id]
        answer = await ask.ask("chess", "go depth 1", timeout=HANG_TIMEOUT, require_worker=True)
        assert answer.worker == worker_id and not answer.error
    async with ask_client(mosquitto, mqtt_prefix) as ask:
        assert await ask.online_workers() == []
        assert ask.workers == {worker_id: "offline"}


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


def test_worker_command_refuses_bad_settings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mqtt", "--broker", "http://example:80"]) == 2
    assert "bad broker URL" in capsys.readouterr().err
    assert main(["mqtt", "--prefix", "a/#"]) == 2
    assert "bad topic prefix" in capsys.readouterr().err
    assert main(["mqtt", "--tls", "--cafile", "/nonexistent/ca.pem"]) == 2
    assert "No such file" in capsys.readouterr().err


@pytest.fixture
def secure_broker(tmp_path: Path) -> Mosquitto:
    ca, cert, key = make_tls_files(tmp_path)
    passwd = make_password_file(tmp_path, "bot", "correct horse")
    broker = Mosquitto(tmp_path, listener_config=[f"cafile {ca}", f"certfile {cert}",
                                                  f"keyfile {key}"],
                       extra_config=[f"password_file {passwd}"])
    broker.start()
    yield broker  # type: ignore[misc]
    broker.stop()


async def test_tls_with_a_password(secure_broker: Mosquitto, tmp_path: Path) -> None:
    await ensure_warm()
    mqtt_prefix = unique_prefix()
    good = secure_broker.settings(tls=True, cafile=tmp_path / "ca.pem", username="bot",
                                  password="correct horse")
    async with running_worker(secure_broker, mqtt_prefix, broker=good) as worker, \
            AskClient(good, prefix=mqtt_prefix) as ask:
        answer = await ask.ask("chess", "go depth 2", timeout=HANG_TIMEOUT)
        assert chess.Move.from_uci(answer.bestmove or "") in chess.Board().legal_moves
        assert answer.worker == worker.config.worker_id

    # Wrong password: the worker gives up at once (retrying cannot fix it).
    wrong = WorkerConfig(broker=secure_broker.settings(
        tls=True, cafile=tmp_path / "ca.pem", username="bot", password="wrong"),
        prefix=mqtt_prefix, worker_id="intruder")
    with pytest.raises(FatalBrokerError, match="refused the login"):
        await asyncio.wait_for(MqttWorker(wrong).run(asyncio.Event()), HANG_TIMEOUT)

    # Without our CA the broker's certificate is not trusted.
    with pytest.raises(aiomqtt.MqttError):
        untrusted = secure_broker.settings(tls=True, username="bot", password="correct horse")
        async with AskClient(untrusted, prefix=mqtt_prefix):
            pass



def test_worker_command_with_a_wrong_password(
    secure_broker: Mosquitto, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BRUDNO_MQTT_PASSWORD", "wrong")
    code = main(["mqtt", "--broker", f"mqtts://127.0.0.1:{secure_broker.port}",
                 "--cafile", str(tmp_path / "ca.pem"), "--username", "bot"])
    err = capsys.readouterr().err
    assert code == 2 and "refused the login" in err, err


def test_compose_fleet_runs_a_real_worker_command() -> None:
    text = (REPO / "compose.yaml").read_text(encoding="utf-8")
    worker = text[text.index("\n  worker:"):]
    match = re.search(r"command:\s*(\[[^\]]*\])", worker)
    assert match, "the worker service has no command list"
    args = build_parser().parse_args(json.loads(match[1]))
    assert args.run is mqtt.run
    assert args.broker == "mqtt://mosquitto:1883"
    assert str(args.status_file) in worker[worker.index("healthcheck:"):]
    assert "depends_on: [mosquitto]" in worker


async def test_worker_eval_file_dir_is_checked_and_governs_the_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A job's ``EvalFile`` names a file on the worker's machine: refused by default, only
    files in ``--eval-file-dir`` otherwise.  Jobs run here without a broker (a reply that
    cannot be published is simply not sent)."""
    missing = tmp_path / "nowhere"
    assert main(["mqtt", "--eval-file-dir", str(missing)]) == 2
    assert capsys.readouterr().err == f"brudno mqtt: --eval-file-dir: {missing} does not exist\n"
    args = build_parser().parse_args(["mqtt", "--eval-file-dir", str(tmp_path)])
    assert args.eval_file_dir == tmp_path

    weights = {**default_evaluator().weights, "material.mg.N": 900, "material.eg.N": 900}
    (tmp_path / "n900.json").write_text(json.dumps(weights), "utf-8")
    setoption = "setoption name EvalFile value n900.json"
    job = parse_job(
        f"{setoption}\nposition fen 4k3/8/1n3b2/8/3Q4/8/8/4K3 w - - 0 1\ngo depth 1".encode(),
        "chess",
    )  # the queen on d4 takes the bishop on f6, or with knights at 900 the knight on b6

    async def answer(config: WorkerConfig) -> TerminalReply:
        worker = MqttWorker(config)
        record = mqtt._Record("replies/t", b"c1", [])
        slot = mqtt._Slot(ThreadRunner)
        try:
            return await worker._search(record, job, slot)
        finally:
            await slot.runner.close()

    refusing = WorkerConfig(worker_id="w1", runner_factory=ThreadRunner)
    assert MqttWorker(refusing).eval_files is NO_EVAL_FILES
    assert await answer(refusing) == TerminalReply(
        ReplyStatus.ERROR,
        "info string error: EvalFile: this server loads no weight files "
        f"(start it with --eval-file-dir DIR) ({setoption})",
    )
    serving = WorkerConfig(worker_id="w2", runner_factory=ThreadRunner, eval_file_dir=tmp_path)
    assert MqttWorker(serving).eval_files == EvalFileAccess.within(tmp_path)
    reply = await answer(serving)
    assert (reply.status, reply.payload.splitlines()[-1]) == (ReplyStatus.DONE, "bestmove d4b6")
