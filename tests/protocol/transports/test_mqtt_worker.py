"""One in-process MQTT worker against a real Mosquitto: the wire format, bad jobs,
duplicates, flow control, internal errors and presence."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiomqtt
import chess
import pytest
from paho.mqtt.packettypes import PacketTypes

from games.chess_game import default_evaluator
from protocol.transports.mqtt.ask import AskOptions
from protocol.transports.mqtt.config import WorkerConfig
from protocol.transports.mqtt.jobs import TerminalReply, parse_job
from protocol.transports.mqtt.slots import Slot
from protocol.transports.mqtt.topics import jobs_topic, status_topic
from protocol.transports.mqtt.wire import (
    ReplyStatus,
    correlation_of,
    new_properties,
    user_properties,
)
from protocol.transports.mqtt.worker import MqttWorker, _Record
from protocol.uci.options import NO_EVAL_FILES, EvalFileAccess
from protocol.uci.runner import SearchRunner, ThreadRunner
from tests.support.mosquitto_fixture import (
    HANG_TIMEOUT,
    SECRET_PATH,
    FailingRunner,
    GatedRunner,
    Mosquitto,
    ask_client,
    retained_status,
    running_worker,
    wait_until,
)
from tests.support.tcp_helpers import ensure_warm


@dataclass(frozen=True)
class Reply:
    status: str
    worker: str
    correlation: bytes | None
    lines: tuple[str, ...]


class RawClient:
    """Publishes jobs with hand-made properties and records every reply, wire-level."""

    def __init__(self, client: aiomqtt.Client, response_topic: str) -> None:
        self.client = client
        self.response_topic = response_topic
        self.replies: list[Reply] = []
        self.arrived = asyncio.Event()

    async def publish(
        self,
        topic: str,
        payload: bytes,
        *,
        correlation: bytes | None = None,
        response_topic: str | None = "",
        qos: int = 1,
    ) -> None:
        props = new_properties(PacketTypes.PUBLISH)
        if response_topic is not None:
            props.ResponseTopic = response_topic or self.response_topic
        if correlation is not None:
            props.CorrelationData = correlation
        await self.client.publish(topic, payload, qos=qos, properties=props)

    async def read(self) -> None:
        async for message in self.client.messages:
            props = user_properties(message.properties)
            payload = message.payload
            assert isinstance(payload, bytes)
            self.replies.append(
                Reply(
                    props["status"],
                    props["worker"],
                    correlation_of(message.properties),
                    tuple(payload.decode().splitlines()),
                )
            )
            self.arrived.set()

    def of(self, correlation: bytes) -> list[Reply]:
        return [r for r in self.replies if r.correlation == correlation]

    async def terminal(self, correlation: bytes, count: int = 1) -> list[Reply]:
        """The replies for ``correlation`` once ``count`` terminal ones have arrived."""

        def done() -> bool:
            return sum(r.status in ("done", "error") for r in self.of(correlation)) >= count

        await wait_until(done, f"{count} terminal replies to {correlation!r}")
        return self.of(correlation)


@contextlib.asynccontextmanager
async def raw_client(broker: Mosquitto, mqtt_prefix: str) -> AsyncIterator[RawClient]:
    async with aiomqtt.Client(
        "127.0.0.1", broker.port, protocol=aiomqtt.ProtocolVersion.V5
    ) as client:
        raw = RawClient(client, f"{mqtt_prefix}/replies/raw")
        await client.subscribe(raw.response_topic, qos=1)
        reader = asyncio.create_task(raw.read())
        try:
            yield raw
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader


def _legal(move: str | None, fen: str = chess.STARTING_FEN) -> bool:
    return chess.Move.from_uci(move or "") in chess.Board(fen).legal_moves


async def test_a_worker_answers_a_job_with_thinned_info_and_bestmove(
    mosquitto: Mosquitto, mqtt_prefix: str
) -> None:
    await ensure_warm()
    async with (
        running_worker(mosquitto, mqtt_prefix) as worker,
        raw_client(mosquitto, mqtt_prefix) as raw,
    ):
        job = b"setoption name MultiPV value 2\nposition startpos moves e2e4\ngo depth 3\n"
        await raw.publish(jobs_topic(mqtt_prefix, "chess"), job, correlation=b"\x00job-1\xff")
        replies = await raw.terminal(b"\x00job-1\xff")
        assert replies[0].status == "accepted"
        assert replies[-1].status == "done"
        assert {r.worker for r in replies} == {worker.config.worker_id}
        assert all(r.status == "info" for r in replies[1:-1])
        lines = [line for r in replies for line in r.lines]
        assert lines[-1].startswith("bestmove ")
        best = lines[-1].split()[1]
        after_e4 = chess.Board()
        after_e4.push_uci("e2e4")
        assert chess.Move.from_uci(best) in after_e4.legal_moves
        infos = [line.split() for line in lines if line.startswith("info depth")]
        # One line per (depth, multipv), depths in order, both MultiPV lines at each depth.
        keys = [(int(t[2]), int(t[t.index("multipv") + 1])) for t in infos]
        assert keys == [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2)]
        assert all("pv" in t and "currmove" not in t for t in infos)
        assert worker.stats.searched == 1

        # A second job in the same worker starts from scratch: no options or position leak.
        await raw.publish(jobs_topic(mqtt_prefix, "chess"), b"go depth 2", correlation=b"job-2")
        replies = await raw.terminal(b"job-2")
        final = replies[-1].lines
        assert _legal(final[-1].split()[1])
        assert all(" multipv 2 " not in line for line in final)

        # Other games: the topic's last level is the UCI_Variant; options pass through.
        await raw.publish(
            jobs_topic(mqtt_prefix, "tictactoe"),
            b"setoption name Algorithm value alphabeta\nposition startpos\ngo depth 9",
            correlation=b"job-3",
        )
        replies = await raw.terminal(b"job-3")
        assert replies[-1].status == "done"
        assert replies[-1].lines[-1].startswith("bestmove P@")


async def test_the_ask_client_gets_the_answer(mosquitto: Mosquitto, mqtt_prefix: str) -> None:
    await ensure_warm()
    async with (
        running_worker(mosquitto, mqtt_prefix) as worker,
        ask_client(mosquitto, mqtt_prefix) as ask,
    ):
        seen: list[str] = []
        fen = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"  # back-rank mate in one
        answer = await ask.ask(
            "chess",
            f"position fen {fen}\ngo depth 3\n",
            timeout=HANG_TIMEOUT,
            options=AskOptions(on_line=seen.append),
        )
        assert answer.bestmove == "a1a8"
        assert answer.worker == worker.config.worker_id
        assert not answer.error and answer.sends == 1
        assert list(answer.lines) == seen
        assert seen[-1].startswith("bestmove a1a8")
        assert any(" score mate 1 " in line for line in seen)


async def test_bad_jobs_get_error_replies_and_never_kill_the_worker(
    mosquitto: Mosquitto, mqtt_prefix: str
) -> None:
    await ensure_warm()
    async with (
        running_worker(mosquitto, mqtt_prefix, max_hash_mb=32) as worker,
        raw_client(mosquitto, mqtt_prefix) as raw,
    ):
        chess_topic = jobs_topic(mqtt_prefix, "chess")
        bad = {
            b"garbage": (chess_topic, b"\x00\xff\xfe\x01"),
            b"unknown": (chess_topic, b"hello there\ngo depth 1"),
            b"illegal": (chess_topic, b"position startpos moves e2e5\ngo depth 1"),
            b"badfen": (chess_topic, b"position fen not/a/fen w - - 0 1\ngo depth 1"),
            b"game": (jobs_topic(mqtt_prefix, "checkers"), b"go depth 1"),
            b"nested": (jobs_topic(mqtt_prefix, "chess/x"), b"go depth 1"),
            b"infinite": (chess_topic, b"go infinite"),
            b"option": (chess_topic, b"setoption name NoSuchOption value 1\ngo depth 1"),
            b"hash": (chess_topic, b"setoption name Hash value 64\ngo depth 1"),
        }
        for correlation, (topic, payload) in bad.items():
            await raw.publish(topic, payload, correlation=correlation)
        # No response topic: nowhere to answer, but it must not wedge the worker either.
        await raw.publish(chess_topic, b"go depth 1", correlation=b"lost", response_topic=None)
        await raw.publish(
            chess_topic,
            b"go depth 1",
            correlation=b"wild",
            response_topic=f"{mqtt_prefix}/replies/+",
        )
        await raw.publish(chess_topic, b"position startpos\ngo depth 2", correlation=b"good")

        expected = {
            b"garbage": "not UTF-8",
            b"unknown": "unknown command (hello there)",
            b"illegal": "illegal move e2e5",
            b"badfen": "(position fen not/a/fen w - - 0 1)",
            b"game": "unknown game; this worker plays ",
            b"nested": "(chess/x)",
            b"infinite": "waits for a stop",
            b"option": "NoSuchOption",
            b"hash": "limit of 32 MiB",
        }
        for correlation, text in expected.items():
            replies = await raw.terminal(correlation)
            assert [r.status for r in replies] == ["error"], (correlation, replies)
            assert all(line.startswith("info string error: ") for line in replies[0].lines)
            assert text in replies[0].lines[0], (correlation, replies[0].lines)
        good = await raw.terminal(b"good")
        assert good[-1].status == "done" and _legal(good[-1].lines[-1].split()[1])
        assert raw.of(b"lost") == [] and raw.of(b"wild") == []
        assert worker.stats.unanswerable == 2
        assert worker.stats.searched == 1  # refused jobs never reach the search


async def test_duplicates_are_answered_once(mosquitto: Mosquitto, mqtt_prefix: str) -> None:
    gate = asyncio.Event()  # closed: the search waits, so the duplicate meets it running

    def gated(hash_mb: int) -> SearchRunner:
        return GatedRunner(gate, hash_mb)

    # Two slots, so the broker hands over the duplicate while the original still runs.
    async with (
        running_worker(mosquitto, mqtt_prefix, concurrency=2, runner_factory=gated) as worker,
        raw_client(mosquitto, mqtt_prefix) as raw,
    ):
        topic = jobs_topic(mqtt_prefix, "chess")
        job = b"position startpos moves d2d4\ngo nodes 4000"
        await raw.publish(topic, job, correlation=b"dup")
        await raw.publish(topic, job, correlation=b"dup")
        await wait_until(lambda: worker.stats.duplicates == 1, "the duplicate joined the job")
        gate.set()
        first = await raw.terminal(b"dup")
        # Once more after completion: the cached reply is published again, nothing searched.
        await raw.publish(topic, job, correlation=b"dup")
        replies = await raw.terminal(b"dup", count=2)
        finals = [r for r in replies if r.status == "done"]
        assert finals[0] == first[-1] and finals[1].lines == finals[0].lines
        assert worker.stats.searched == 1
        assert worker.stats.duplicates == 2
        # The same correlation data from another response topic is another client's job.
        await raw.publish(
            topic, job, correlation=b"dup", response_topic=f"{mqtt_prefix}/replies/other"
        )
        await wait_until(lambda: worker.stats.searched == 2, "a second, distinct job ran")
        await raw.publish(topic, b"go depth 1", correlation=b"sentinel")
        await raw.terminal(b"sentinel")  # replies come in order: nothing more for b"dup"
        assert [r.status for r in raw.of(b"dup")].count("done") == 2  # ("other" is not ours)


async def test_receive_maximum_limits_jobs_in_flight(
    mosquitto: Mosquitto, mqtt_prefix: str
) -> None:
    await ensure_warm()
    # The first job cannot end before the worker's time limit stops it.
    async with (
        running_worker(mosquitto, mqtt_prefix, concurrency=1, max_job_s=1.5) as worker,
        raw_client(mosquitto, mqtt_prefix) as raw,
    ):
        topic = jobs_topic(mqtt_prefix, "chess")
        await raw.publish(topic, b"go depth 40", correlation=b"long")
        for n in range(3):
            await raw.publish(topic, b"go depth 1", correlation=f"short-{n}".encode())
        await wait_until(
            lambda: any(r.status == "accepted" for r in raw.of(b"long")), "the long job started"
        )
        await asyncio.sleep(0.3)
        # The broker holds the other jobs back until the running one is acknowledged.
        assert worker.running_jobs == 1
        assert worker.stats.received == 1
        for n in range(3):
            await raw.terminal(f"short-{n}".encode())
        assert worker.stats.received == 4 and worker.stats.searched == 4
        order = [r.correlation for r in raw.replies if r.status == "accepted"]
        assert order == [b"long", b"short-0", b"short-1", b"short-2"]


async def test_a_job_over_the_time_limit_is_stopped_and_still_answered(
    mosquitto: Mosquitto, mqtt_prefix: str
) -> None:
    await ensure_warm()
    async with (
        running_worker(mosquitto, mqtt_prefix, max_job_s=0.5) as worker,
        raw_client(mosquitto, mqtt_prefix) as raw,
    ):
        await raw.publish(jobs_topic(mqtt_prefix, "chess"), b"go depth 40", correlation=b"deep")
        replies = await raw.terminal(b"deep")
        assert replies[-1].status == "done"
        assert _legal(replies[-1].lines[-1].split()[1])
        assert worker.stats.searched == 1


async def test_presence_is_retained_online_then_offline(
    mosquitto: Mosquitto, mqtt_prefix: str, tmp_path: Path
) -> None:
    await ensure_warm()
    status_file = tmp_path / "worker.status"
    async with running_worker(mosquitto, mqtt_prefix, status_file=status_file) as worker:
        worker_id = worker.config.worker_id
        assert await retained_status(mosquitto, mqtt_prefix, worker_id) == "online"
        assert status_file.read_text() == "online\n"
        async with ask_client(mosquitto, mqtt_prefix) as ask:
            assert await ask.wait_workers(1, HANG_TIMEOUT) == [worker_id]
    assert await retained_status(mosquitto, mqtt_prefix, worker_id) == "offline"
    assert status_file.read_text() == "offline\n"
    assert status_topic(mqtt_prefix, worker_id).endswith(f"/{worker_id}/status")


async def test_a_qos0_job_is_answered_too(mosquitto: Mosquitto, mqtt_prefix: str) -> None:
    await ensure_warm()
    async with running_worker(mosquitto, mqtt_prefix), raw_client(mosquitto, mqtt_prefix) as raw:
        await raw.publish(jobs_topic(mqtt_prefix, "chess"), b"go depth 1", correlation=b"q0", qos=0)
        replies = await raw.terminal(b"q0")
        assert replies[-1].status == "done"


@pytest.mark.parametrize("concurrency", [2])
async def test_concurrent_jobs_run_in_separate_processes(
    mosquitto: Mosquitto, mqtt_prefix: str, concurrency: int
) -> None:
    await ensure_warm()
    # Searches that never end by themselves (depth 60), ended by the worker's time limit:
    # each runs long enough to be seen running beside another, however fast the machine.
    async with (
        running_worker(mosquitto, mqtt_prefix, concurrency=concurrency, max_job_s=1.0) as worker,
        ask_client(mosquitto, mqtt_prefix) as ask,
    ):
        jobs = [
            ask.ask("chess", f"position startpos moves {m}\ngo depth 60", timeout=HANG_TIMEOUT)
            for m in ("e2e4", "d2d4", "c2c4", "g1f3")
        ]
        peak = 0

        async def watch() -> None:
            nonlocal peak
            while True:
                peak = max(peak, worker.running_jobs)
                await asyncio.sleep(0.01)

        watcher = asyncio.create_task(watch())
        answers = await asyncio.gather(*jobs)
        watcher.cancel()
        assert all(a.bestmove is not None and not a.error for a in answers)
        assert peak == concurrency


async def test_ucinewgame_makes_answers_reproducible(
    mosquitto: Mosquitto, mqtt_prefix: str
) -> None:
    await ensure_warm()
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    job = f"ucinewgame\nposition fen {fen}\ngo nodes 800\n"

    def stable(line: str) -> str:
        # Node counts and moves must match; timings may not.
        tokens = line.split()
        for timed in ("nps", "time"):
            if timed in tokens:
                del tokens[tokens.index(timed) : tokens.index(timed) + 2]
        return " ".join(tokens)

    async with (
        running_worker(mosquitto, mqtt_prefix) as worker,
        ask_client(mosquitto, mqtt_prefix) as ask,
    ):
        first = await ask.ask("chess", job, timeout=HANG_TIMEOUT)
        await ask.ask(
            "chess", "position startpos moves g1f3\ngo nodes 800", timeout=HANG_TIMEOUT
        )  # fills the table with something else
        second = await ask.ask("chess", job, timeout=HANG_TIMEOUT)
        assert worker.stats.searched == 3
    assert _legal(first.bestmove, fen)
    assert [stable(line) for line in first.lines] == [stable(line) for line in second.lines]


async def test_shutdown_stops_running_jobs_answers_them_and_goes_offline(
    mosquitto: Mosquitto, mqtt_prefix: str
) -> None:
    await ensure_warm()
    async with raw_client(mosquitto, mqtt_prefix) as raw:
        async with running_worker(mosquitto, mqtt_prefix, shutdown_timeout_s=0.2) as worker:
            await raw.publish(jobs_topic(mqtt_prefix, "chess"), b"go depth 40", correlation=b"big")
            await wait_until(
                lambda: any(r.status == "accepted" for r in raw.of(b"big")), "the job started"
            )
            worker_id = worker.config.worker_id
        # The context exit is the shutdown: the job was stopped and answered before offline.
        replies = await raw.terminal(b"big")
        assert replies[-1].status == "done"
        assert _legal(replies[-1].lines[-1].split()[1])
    assert await retained_status(mosquitto, mqtt_prefix, worker_id) == "offline"


async def test_a_qos0_flood_is_bounded_and_the_worker_still_answers(
    mosquitto: Mosquitto, mqtt_prefix: str
) -> None:
    """Receive Maximum holds back QoS 1 jobs only: QoS 0 jobs beyond the intake are dropped,
    QoS 1 jobs never are, and what the worker holds stays bounded."""
    gate = asyncio.Event()  # closed: every search waits, so no job ends during the flood

    def gated(hash_mb: int) -> SearchRunner:
        return GatedRunner(gate, hash_mb)

    async with (
        running_worker(
            mosquitto, mqtt_prefix, concurrency=1, backlog=3, runner_factory=gated
        ) as worker,
        raw_client(mosquitto, mqtt_prefix) as raw,
    ):
        topic = jobs_topic(mqtt_prefix, "chess")
        flood = [f"q0-{n}".encode() for n in range(300)]
        job = b"\n" * 60_000 + b"position startpos\ngo depth 1"  # 64 KB-ish, as reported
        try:
            for correlation in flood:
                await raw.publish(topic, job, correlation=correlation, qos=0)
            # A QoS 1 job while the intake is full: taken all the same, never dropped.
            await raw.publish(topic, b"position startpos moves e2e4\ngo depth 1", correlation=b"q1")
            await wait_until(
                lambda: worker.stats.received == len(flood) + 1, "the worker saw the whole flood"
            )
            limit = worker.intake_limit
            assert limit == 1 + 3  # concurrency + backlog
            assert worker.stats.dropped == len(flood) - limit
            assert worker.pending_jobs == limit + 1  # the QoS 1 job on top
        finally:
            gate.set()
        replies = await raw.terminal(b"q1")
        after_e4 = chess.Board()
        after_e4.push_uci("e2e4")
        assert replies[-1].status == "done"
        assert chess.Move.from_uci(replies[-1].lines[-1].split()[1]) in after_e4.legal_moves

        def answered() -> list[bytes]:
            return [
                r.correlation or b""
                for r in raw.replies
                if r.status in ("done", "error") and r.correlation in flood
            ]

        await wait_until(lambda: len(answered()) == limit, "the QoS 0 jobs taken in are done")
        # Once the flood is over, a normal job is answered as ever.
        await raw.publish(topic, b"position startpos\ngo depth 2", correlation=b"after")
        after = await raw.terminal(b"after")
        assert after[-1].status == "done" and _legal(after[-1].lines[-1].split()[1])
        assert len(answered()) == limit  # at most what it could take: the dropped stay so
        assert {r.status for r in raw.replies if r.correlation in flood} <= {"accepted", "done"}
        # Never more pending than the intake, plus the QoS 1 jobs Receive Maximum lets in.
        assert worker.stats.peak_pending == limit + 1
        assert worker.stats.searched == limit + 2
        await wait_until(lambda: worker.pending_jobs == 0, "nothing is pending any more")


async def test_reused_correlation_data_for_another_job_gets_that_jobs_answer(
    mosquitto: Mosquitto, mqtt_prefix: str
) -> None:
    await ensure_warm()
    topic = jobs_topic(mqtt_prefix, "chess")
    white = b"position startpos\ngo depth 2"
    black = b"position startpos moves e2e4\ngo depth 2"
    after_e4 = chess.Board()
    after_e4.push_uci("e2e4")

    def best(reply: Reply) -> chess.Move:
        return chess.Move.from_uci(reply.lines[-1].split()[1])

    async with (
        running_worker(mosquitto, mqtt_prefix, concurrency=2) as worker,
        raw_client(mosquitto, mqtt_prefix) as raw,
    ):
        # One after the other: the second job must not get the first one's cached answer.
        await raw.publish(topic, white, correlation=b"same")
        await raw.terminal(b"same")
        await raw.publish(topic, black, correlation=b"same")
        finals = [r for r in await raw.terminal(b"same", count=2) if r.status == "done"]
        assert best(finals[0]) in chess.Board().legal_moves
        assert best(finals[1]) in after_e4.legal_moves
        assert (worker.stats.searched, worker.stats.duplicates) == (2, 0)

        # At the same time: the second must not join the first while it runs.
        await raw.publish(topic, white, correlation=b"twin")
        await raw.publish(topic, black, correlation=b"twin")
        twins = [r for r in await raw.terminal(b"twin", count=2) if r.status == "done"]
        sides = sorted(
            "white"
            if best(r) in chess.Board().legal_moves
            else "black"
            if best(r) in after_e4.legal_moves
            else "illegal"
            for r in twins
        )
        assert sides == ["black", "white"]

        # The same text for another game is another job too.
        await raw.publish(topic, b"go depth 1", correlation=b"game")
        await raw.publish(jobs_topic(mqtt_prefix, "tictactoe"), b"go depth 1", correlation=b"game")
        games = [r for r in await raw.terminal(b"game", count=2) if r.status == "done"]
        assert sorted(r.lines[-1].startswith("bestmove P@") for r in games) == [False, True]
        assert (worker.stats.searched, worker.stats.duplicates) == (6, 0)

        # A real duplicate (the same job and correlation data) is still answered once.
        await raw.publish(topic, black, correlation=b"same")
        again = [r for r in await raw.terminal(b"same", count=3) if r.status == "done"]
        assert again[2].lines == again[1].lines
        assert (worker.stats.searched, worker.stats.duplicates) == (6, 1)


async def test_an_internal_error_is_logged_in_full_and_answered_in_one_short_line(
    mosquitto: Mosquitto, mqtt_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    async with (
        running_worker(mosquitto, mqtt_prefix, runner_factory=FailingRunner) as worker,
        raw_client(mosquitto, mqtt_prefix) as raw,
    ):
        topic = jobs_topic(mqtt_prefix, "chess")
        # The search fails inside the session (which answers UCI with a stand-in move) ...
        await raw.publish(topic, b"position startpos moves e2e4\ngo depth 3", correlation=b"search")
        # ... or the worker's own work for the job fails (clearing the table).
        await raw.publish(topic, b"ucinewgame\nposition startpos\ngo depth 3", correlation=b"clear")
        incidents = []
        for correlation in (b"search", b"clear"):
            replies = await raw.terminal(correlation)
            assert replies[-1].status == "error", replies
            assert [r.status for r in replies].count("error") == 1
            assert not any(line.startswith("bestmove") for r in replies for line in r.lines)
            (line,) = replies[-1].lines
            head = "info string error: internal error, see the worker's log for incident "
            assert line.startswith(head) and line.endswith(" (go depth 3)"), line
            assert "/" not in line and "Traceback" not in line and "secret" not in line
            incidents.append(line[len(head) :].split()[0])
        assert worker.stats.failed == 2 and worker.stats.searched == 1
    for incident in incidents:
        (record,) = [r for r in caplog.records if f"incident={incident}" in r.getMessage()]
        assert record.levelno == logging.ERROR
    # The full story, traceback and all, stays on the worker: for each failure, a record
    # with the exception that names the worker's file.
    failures = [
        r for r in caplog.records if r.exc_info is not None and SECRET_PATH in str(r.exc_info[1])
    ]
    assert {str(r.exc_info[1]).split(":")[0] for r in failures if r.exc_info} == {"search", "clear"}
    assert "Traceback" in caplog.text


async def test_worker_eval_file_dir_governs_the_jobs(tmp_path: Path) -> None:
    """A job's ``EvalFile`` names a file on the worker's machine: refused by default, only
    files in ``--eval-file-dir`` otherwise.  Jobs run here without a broker (a reply that
    cannot be published is simply not sent).  (That the command checks the directory:
    tests/brudno/test_mqtt_worker_cli.py.)"""
    weights = {**default_evaluator().weights, "material.mg.N": 900, "material.eg.N": 900}
    (tmp_path / "n900.json").write_text(json.dumps(weights), "utf-8")
    setoption = "setoption name EvalFile value n900.json"
    job = parse_job(
        f"{setoption}\nposition fen 4k3/8/1n3b2/8/3Q4/8/8/4K3 w - - 0 1\ngo depth 1".encode(),
        "chess",
    )  # the queen on d4 takes the bishop on f6, or with knights at 900 the knight on b6

    async def answer(config: WorkerConfig) -> TerminalReply:
        worker = MqttWorker(config)
        record = _Record("replies/t", b"c1", [])
        slot = Slot(ThreadRunner)
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
