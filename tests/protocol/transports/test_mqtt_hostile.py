"""``brudno mqtt`` on a hostile network (issue 44), through the real worker process and a real
Mosquitto: jobs that name someone else's topic as their response topic, floods of
duplicates, evaluation weights left behind for the next client, replies the broker refuses or
disconnects on, and the documented ACL."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import aiomqtt
import chess
from paho.mqtt.packettypes import PacketTypes

from games.chess_game import default_evaluator
from protocol.transports.mqtt.ask import AskClient
from protocol.transports.mqtt.topics import jobs_topic, status_topic
from protocol.transports.mqtt.wire import correlation_of, new_properties, user_properties
from tests.support.http_helpers import HTTP_LISTENING, metrics, wait_for_file_line
from tests.support.mosquitto_fixture import (
    HANG_TIMEOUT,
    Mosquitto,
    WorkerProcess,
    ask_client,
    make_password_file,
    wait_until,
)
from tests.support.paths import REPO

FEN = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


@dataclass(frozen=True)
class Seen:
    topic: str
    status: str | None
    """The reply's ``status`` user property (``None``: not a worker's reply)."""
    correlation: bytes | None
    payload: bytes


class Recorder:
    """A plain MQTT client that publishes jobs with any properties and records everything
    it receives on its subscriptions."""

    def __init__(self, client: aiomqtt.Client) -> None:
        self.client = client
        self.seen: list[Seen] = []

    async def publish_job(
        self, topic: str, payload: str, *, response_topic: str, correlation: bytes, qos: int = 1
    ) -> None:
        props = new_properties(PacketTypes.PUBLISH)
        props.ResponseTopic = response_topic
        props.CorrelationData = correlation
        await self.client.publish(topic, payload.encode(), qos=qos, properties=props)

    async def read(self) -> None:
        async for message in self.client.messages:
            payload = message.payload
            self.seen.append(
                Seen(
                    message.topic.value,
                    user_properties(message.properties).get("status"),
                    correlation_of(message.properties),
                    payload if isinstance(payload, bytes) else b"",
                )
            )

    def replies(self, correlation: bytes, status: str | None = None) -> list[Seen]:
        return [
            s
            for s in self.seen
            if s.correlation == correlation
            and s.status is not None
            and (status is None or s.status == status)
        ]

    async def terminal(self, correlation: bytes, count: int = 1) -> list[Seen]:
        def done() -> bool:
            return sum(s.status in ("done", "error") for s in self.replies(correlation)) >= count

        await wait_until(done, f"{count} terminal replies to {correlation!r}")
        return self.replies(correlation)


@contextlib.asynccontextmanager
async def recorder(
    broker: Mosquitto, *topics: str, username: str | None = None
) -> AsyncIterator[Recorder]:
    async with aiomqtt.Client(
        "127.0.0.1",
        broker.port,
        username=username,
        password=username,
        protocol=aiomqtt.ProtocolVersion.V5,
    ) as client:
        for topic in topics:
            await client.subscribe(topic, qos=1)
        rec = Recorder(client)
        reader = asyncio.create_task(rec.read())
        try:
            yield rec
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader


def _stopped_counter(log: str, name: str) -> int:
    match = re.search(rf"event=stopped .*\b{name}=(\d+)", log)
    assert match, log
    return int(match[1])


def _stable(line: str) -> str:
    """An ``info`` line without its timings (node counts and moves must match)."""
    tokens = line.split()
    for timed in ("nps", "time"):
        if timed in tokens:
            del tokens[tokens.index(timed) : tokens.index(timed) + 2]
    return " ".join(tokens)


async def test_a_job_cannot_make_a_worker_publish_outside_the_reply_tree(
    mosquitto: Mosquitto,
    mqtt_prefix: str,
    brudno: list[str],
    tmp_path: Path,
    fleet: list[WorkerProcess],
) -> None:
    worker = WorkerProcess(
        brudno, mosquitto, mqtt_prefix, "victim", tmp_path, "--metrics-port", "0"
    )
    fleet.append(worker)
    listening = await wait_for_file_line(worker.log_path, HTTP_LISTENING)
    presence = status_topic(mqtt_prefix, "victim")
    elsewhere = f"{mqtt_prefix}-elsewhere"
    async with (
        ask_client(mosquitto, mqtt_prefix) as ask,
        recorder(mosquitto, f"{mqtt_prefix}/#", f"{elsewhere}/#") as rec,
    ):
        await ask.wait_workers(1, HANG_TIMEOUT)
        chess_jobs = jobs_topic(mqtt_prefix, "chess")
        hostile = {
            b"presence": presence,  # would take the worker off every client's list
            b"jobs": chess_jobs,  # would feed replies back in as jobs
            b"outside": f"{elsewhere}/x",  # another fleet's (or application's) topics
        }
        for correlation, topic in hostile.items():
            await rec.publish_job(
                chess_jobs, "go depth 1", response_topic=topic, correlation=correlation
            )
        # Jobs are taken in order by the one worker: once this one is answered, the hostile
        # ones have been dealt with.
        await rec.publish_job(
            chess_jobs,
            "go depth 1",
            response_topic=f"{mqtt_prefix}/replies/me",
            correlation=b"sentinel",
        )
        await rec.terminal(b"sentinel")
        for correlation in hostile:
            assert rec.replies(correlation) == [], correlation
        assert [s.payload for s in rec.seen if s.topic == presence] == [b"online"]
        assert ask.workers == {"victim": "online"}
    values = await metrics(f"http://127.0.0.1:{listening[2]}")
    assert values["brudno_mqtt_jobs_rejected_total"] == 3.0
    assert values["brudno_mqtt_jobs_answered_total"] == 1.0
    worker.terminate()
    assert worker.wait() == 0
    log = worker.log_text()
    assert log.count('reason="response topic outside the reply prefixes"') == 3, log
    assert f"response_topic={presence}" in log
    assert _stopped_counter(log, "searched") == 1


async def test_reply_prefixes_can_be_set_to_other_topics(
    mosquitto: Mosquitto,
    mqtt_prefix: str,
    brudno: list[str],
    tmp_path: Path,
    fleet: list[WorkerProcess],
) -> None:
    apps = f"{mqtt_prefix}-apps/"
    worker = WorkerProcess(brudno, mosquitto, mqtt_prefix, "apps", tmp_path, "--reply-prefix", apps)
    fleet.append(worker)
    async with (
        ask_client(mosquitto, mqtt_prefix) as ask,
        recorder(mosquitto, f"{apps}#", f"{mqtt_prefix}/replies/#") as rec,
    ):
        await ask.wait_workers(1, HANG_TIMEOUT)
        topic = jobs_topic(mqtt_prefix, "chess")
        await rec.publish_job(
            topic, "go depth 1", response_topic=f"{mqtt_prefix}/replies/me", correlation=b"old"
        )
        await rec.publish_job(topic, "go depth 1", response_topic=f"{apps}me", correlation=b"new")
        assert [s.status for s in await rec.terminal(b"new")][-1] == "done"
        assert rec.replies(b"old") == []  # the prefixes given replace the default
    worker.terminate()
    assert worker.wait() == 0


async def test_duplicates_of_a_finished_job_get_one_more_reply_at_most(
    mosquitto: Mosquitto,
    mqtt_prefix: str,
    brudno: list[str],
    tmp_path: Path,
    fleet: list[WorkerProcess],
) -> None:
    worker = WorkerProcess(brudno, mosquitto, mqtt_prefix, "dups", tmp_path)
    fleet.append(worker)
    replies = f"{mqtt_prefix}/replies/me"
    job = f"setoption name MultiPV value 20\nposition fen {FEN}\ngo depth 2"
    topic = jobs_topic(mqtt_prefix, "chess")
    flood = 40
    async with (
        ask_client(mosquitto, mqtt_prefix) as ask,
        recorder(mosquitto, replies) as rec,
    ):
        await ask.wait_workers(1, HANG_TIMEOUT)
        await rec.publish_job(topic, job, response_topic=replies, correlation=b"big", qos=0)
        (first,) = [s for s in await rec.terminal(b"big") if s.status == "done"]
        assert len(first.payload) > 2000  # a MultiPV reply: what a flood would multiply
        for _ in range(flood):
            await rec.publish_job(topic, job, response_topic=replies, correlation=b"big", qos=0)
        await rec.terminal(b"big", count=2)  # the one replay
        await rec.publish_job(topic, "go depth 1", response_topic=replies, correlation=b"after")
        await rec.terminal(b"after")
        done = rec.replies(b"big", "done")
        assert len(done) == 2 and done[1].payload == first.payload
    worker.terminate()
    assert worker.wait() == 0
    log = worker.log_text()
    assert _stopped_counter(log, "duplicates") == flood
    assert _stopped_counter(log, "duplicates_ignored") == flood - 1
    assert _stopped_counter(log, "searched") == 2


async def test_the_memory_of_recent_jobs_is_bounded_in_bytes(
    mosquitto: Mosquitto,
    mqtt_prefix: str,
    brudno: list[str],
    tmp_path: Path,
    fleet: list[WorkerProcess],
) -> None:
    """With ``--dedup-kib 8``, four jobs with MultiPV replies of over 2.5 KB each do not all
    fit: the oldest is forgotten (its duplicate is searched again), the newest is not (its
    duplicate gets the cached reply)."""
    worker = WorkerProcess(brudno, mosquitto, mqtt_prefix, "memory", tmp_path, "--dedup-kib", "8")
    fleet.append(worker)
    replies = f"{mqtt_prefix}/replies/me"
    topic = jobs_topic(mqtt_prefix, "chess")
    jobs = {
        f"j{n}".encode(): (
            f"setoption name MultiPV value 30\nsetoption name Move Overhead value {n}\n"
            f"position fen {FEN}\ngo depth 1"
        )
        for n in (1, 2, 3, 4)
    }
    async with (
        ask_client(mosquitto, mqtt_prefix) as ask,
        recorder(mosquitto, replies) as rec,
    ):
        await ask.wait_workers(1, HANG_TIMEOUT)
        for correlation, job in jobs.items():
            await rec.publish_job(topic, job, response_topic=replies, correlation=correlation)
            (done,) = [s for s in await rec.terminal(correlation) if s.status == "done"]
            assert len(done.payload) > 2500
        for correlation in (b"j1", b"j4"):
            await rec.publish_job(
                topic, jobs[correlation], response_topic=replies, correlation=correlation
            )
            await rec.terminal(correlation, count=2)
        # Searched again (an ``accepted`` comes only from a search), or replayed.
        assert [s.status for s in rec.replies(b"j1")].count("accepted") == 2
        assert [s.status for s in rec.replies(b"j4")].count("accepted") == 1
    worker.terminate()
    assert worker.wait() == 0
    log = worker.log_text()
    assert _stopped_counter(log, "searched") == 5
    assert _stopped_counter(log, "duplicates") == 1


async def test_a_slot_clears_its_table_when_the_next_job_scores_otherwise(
    mosquitto: Mosquitto,
    mqtt_prefix: str,
    brudno: list[str],
    tmp_path: Path,
    fleet: list[WorkerProcess],
) -> None:
    """One client's ``EvalFile`` weights leave scored entries in the slot's table; the next
    client's job (shipped weights) must search as on an empty table: the same lines, node
    counts included, as the same job after ``ucinewgame``."""
    weights = {**default_evaluator().weights, "material.mg.N": 900, "material.eg.N": 900}
    (tmp_path / "n900.json").write_text(json.dumps(weights), "utf-8")
    worker = WorkerProcess(
        brudno, mosquitto, mqtt_prefix, "tables", tmp_path, "--eval-file-dir", str(tmp_path)
    )
    fleet.append(worker)
    search = f"position fen {FEN}\ngo nodes 1500"
    async with ask_client(mosquitto, mqtt_prefix) as ask:
        await ask.wait_workers(1, HANG_TIMEOUT)
        weighted = await ask.ask(
            "chess", f"setoption name EvalFile value n900.json\n{search}", timeout=HANG_TIMEOUT
        )
        assert weighted.bestmove is not None and not weighted.error
        after = await ask.ask("chess", search, timeout=HANG_TIMEOUT)
        fresh = await ask.ask("chess", f"ucinewgame\n{search}", timeout=HANG_TIMEOUT)
    assert chess.Move.from_uci(after.bestmove or "") in chess.Board(FEN).legal_moves
    assert [_stable(line) for line in after.lines] == [_stable(line) for line in fresh.lines]
    worker.terminate()
    assert worker.wait() == 0


async def test_a_reply_the_broker_refuses_is_counted_not_delivered(
    mqtt_prefix: str, brudno: list[str], tmp_path: Path, fleet: list[WorkerProcess]
) -> None:
    acl = tmp_path / "acl"
    acl.write_text(
        "\n".join(
            [
                f"topic readwrite {mqtt_prefix}/jobs/#",
                f"topic readwrite {mqtt_prefix}/workers/#",
                f"topic read {mqtt_prefix}/replies/#",
                f"topic write {mqtt_prefix}/replies/open/#",
            ]
        )
        + "\n"
    )
    broker = Mosquitto(tmp_path, extra_config=[f"acl_file {acl}"])
    broker.start()
    try:
        worker = WorkerProcess(brudno, broker, mqtt_prefix, "refused", tmp_path)
        fleet.append(worker)
        async with (
            ask_client(broker, mqtt_prefix) as ask,
            recorder(broker, f"{mqtt_prefix}/replies/#") as rec,
        ):
            await ask.wait_workers(1, HANG_TIMEOUT)
            topic = jobs_topic(mqtt_prefix, "chess")
            closed, opened = f"{mqtt_prefix}/replies/closed", f"{mqtt_prefix}/replies/open/me"
            await rec.publish_job(topic, "go depth 1", response_topic=closed, correlation=b"no")
            await rec.publish_job(topic, "go depth 1", response_topic=opened, correlation=b"ok")
            assert [s.status for s in await rec.terminal(b"ok")][-1] == "done"
            assert rec.replies(b"no") == []
        worker.terminate()
        assert worker.wait() == 0
    finally:
        broker.stop()
    log = worker.log_text()
    assert f"event=reply_refused response_topic={closed} status=done reason_code=0x87" in log
    assert _stopped_counter(log, "replies_refused") == 1


async def test_a_worker_whose_presence_the_broker_refuses_stops_with_status_2(
    mqtt_prefix: str, brudno: list[str], tmp_path: Path
) -> None:
    """Clients would never see such a worker: it says why and exits instead of serving."""
    acl = tmp_path / "acl"
    acl.write_text(f"topic read {mqtt_prefix}/jobs/#\ntopic write {mqtt_prefix}/replies/#\n")
    broker = Mosquitto(tmp_path, extra_config=[f"acl_file {acl}"])
    broker.start()
    try:
        worker = WorkerProcess(brudno, broker, mqtt_prefix, "unseen", tmp_path)
        code = worker.wait()
    finally:
        broker.stop()
    assert code == 2, worker.log_text()
    assert (
        f"the broker refused the presence {mqtt_prefix}/workers/unseen/status "
        "(reason code 0x87" in worker.log_text()
    )


async def test_a_broker_that_disconnects_on_a_reply_gets_no_tight_reconnect_loop(
    mqtt_prefix: str, brudno: list[str], tmp_path: Path, fleet: list[WorkerProcess]
) -> None:
    """Mosquitto cuts off a client that publishes a packet over ``max_packet_size``, as some
    brokers do on a denied publish: the worker tries the reply on a few connections, backing
    off more each time, then gives it up."""
    broker = Mosquitto(tmp_path, extra_config=["max_packet_size 1500"])
    broker.start()
    try:
        worker = WorkerProcess(
            brudno, broker, mqtt_prefix, "cutoff", tmp_path, "--reconnect-max", "4"
        )
        fleet.append(worker)
        async with ask_client(broker, mqtt_prefix) as ask:
            await ask.wait_workers(1, HANG_TIMEOUT)
            big = f"setoption name MultiPV value 30\nposition fen {FEN}\ngo depth 1"
            async with recorder(broker, f"{mqtt_prefix}/replies/#") as rec:
                await rec.publish_job(
                    jobs_topic(mqtt_prefix, "chess"),
                    big,
                    response_topic=f"{mqtt_prefix}/replies/me",
                    correlation=b"big",
                )
                await wait_until(lambda: "event=reply_given_up" in worker.log_text(), "given up")
            # Still serving afterwards.
            await ask.wait_workers(1, HANG_TIMEOUT)
            answer = await ask.ask("chess", "go depth 1", timeout=HANG_TIMEOUT)
            assert answer.bestmove is not None
        worker.terminate()
        assert worker.wait() == 0
    finally:
        broker.stop()
    log = worker.log_text()
    waits = [float(w) for w in re.findall(r"event=reconnect_wait seconds=([\d.]+)", log)]
    # Doubling ceilings with jitter in the upper half: each wait at least the one before.
    assert len(waits) >= 3, log
    assert waits == sorted(waits) and waits[2] >= 1.0, waits
    assert _stopped_counter(log, "replies_given_up") == 1


def _documented_acl() -> str:
    text = (REPO / "docs" / "deploy.md").read_text(encoding="utf-8")
    block = text[text.index("<!-- acl:begin -->") : text.index("<!-- acl:end -->")]
    lines = [line.strip() for line in block.splitlines()[1:]]
    return "\n".join(line for line in lines if not line.startswith("```")) + "\n"


async def test_the_documented_acl_serves_clients_and_keeps_them_apart(
    brudno: list[str], tmp_path: Path, fleet: list[WorkerProcess]
) -> None:
    """docs/deploy.md's Mosquitto ACL as it stands: a worker serves, a client gets its answer
    without waiting out a timeout, and another client reads none of it."""
    acl = tmp_path / "acl"
    acl.write_text(_documented_acl(), "utf-8")
    accounts = {"worker-1": "worker-1", "alice": "alice", "bob": "bob"}
    passwd = make_password_file(tmp_path, "worker-1", "worker-1", alice="alice", bob="bob")
    broker = Mosquitto(tmp_path, extra_config=[f"password_file {passwd}", f"acl_file {acl}"])
    broker.start()
    secrets = {}
    for name, secret in accounts.items():
        secrets[name] = tmp_path / f"{name}.password"
        secrets[name].write_text(secret + "\n", "utf-8")
    login = ["--password-file", str(secrets["worker-1"]), "--username", "worker-1"]
    try:
        worker = WorkerProcess(brudno, broker, "brudno", "worker-1", tmp_path, *login)
        fleet.append(worker)
        async with (
            AskClient(broker.settings(username="alice", password="alice")) as alice,
            recorder(
                broker, "brudno/replies/alice/#", "brudno/replies/bob/#", username="bob"
            ) as bob,
        ):
            await alice.wait_workers(1, HANG_TIMEOUT)
            # The presence marker comes back: waiting "forever" for it must not hang.
            online = await asyncio.wait_for(alice.online_workers(HANG_TIMEOUT * 10), HANG_TIMEOUT)
            assert online == ["worker-1"]
            answer = await alice.ask(
                "chess", f"position fen {FEN}\ngo depth 2", timeout=HANG_TIMEOUT
            )
            assert answer.worker == "worker-1"
            assert chess.Move.from_uci(answer.bestmove or "") in chess.Board(FEN).legal_moves
            # Bob may not touch the worker's presence; his own topic works, and by the time
            # his marker is back, anything of Alice's he could read would be here too.
            await bob.client.publish(
                status_topic("brudno", "worker-1"), b"offline", qos=1, retain=True
            )
            await bob.client.publish("brudno/replies/bob/mark", b"mark", qos=1)
            await wait_until(
                lambda: any(s.topic == "brudno/replies/bob/mark" for s in bob.seen), "bob's mark"
            )
            assert [s.topic for s in bob.seen] == ["brudno/replies/bob/mark"]
            assert alice.workers == {"worker-1": "online"}
        run = await asyncio.create_subprocess_exec(
            *brudno,
            "mqtt-ask",
            "--broker",
            broker.url,
            "--username",
            "alice",
            "--password-file",
            str(secrets["alice"]),
            "--depth",
            "1",
            "--quiet",
            "--timeout",
            str(HANG_TIMEOUT),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(run.communicate(), HANG_TIMEOUT)
        assert run.returncode == 0, err.decode()
        assert out.decode().splitlines()[-1].startswith("bestmove ")
        worker.terminate()
        assert worker.wait() == 0
    finally:
        broker.stop()
    assert "event=reply_refused" not in worker.log_text()
