"""``--metrics-port`` on the real commands: a real ``brudno serve`` and a real ``brudno mqtt``
worker behind a real Mosquitto, each asked over HTTP by a real client.

What is checked: the health probes and their open access, 401 without the token (which never
appears in any answer), and that the metrics count what the sessions did: searches started
and answered, nodes, the latency histograms, stop latency, failed logins; for a worker, its
jobs, its readiness following the broker, and the fleet's presence on the status sample.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import chess
import pytest

from brudno.cli import main
from tests.support.http_helpers import HTTP_LISTENING, get, metrics, wait_for_file_line
from tests.support.mosquitto_fixture import Mosquitto, WorkerProcess, ask_client
from tests.support.tcp_helpers import TcpClient, env_without_token, serve_process

TOKEN = "monitor-secret-7f3a9c"


async def test_serve_health_is_open_the_rest_needs_the_token(brudno: list[str]) -> None:
    async with serve_process(
        brudno, "--metrics-port", "0", env=env_without_token(BRUDNO_TOKEN=TOKEN)
    ) as server:
        found = await server.wait_for_log(HTTP_LISTENING.pattern)
        assert found[1] == "127.0.0.1"  # loopback by default, token or not
        base = f"http://127.0.0.1:{found[2]}"
        health = await get(f"{base}/healthz")
        assert (health.status, health.text) == (200, "ok\n")
        ready = await get(f"{base}/readyz")
        assert (ready.status, ready.text) == (200, "ready: accepting sessions\n")
        paths = ("/metrics", "/status.json", "/", "/events", "/board.svg?variant=chess&fen=8")
        refused = [await get(f"{base}{path}") for path in paths]
        assert [r.status for r in refused] == [401] * len(paths)
        assert 'name="token"' in refused[2].text  # the page's 401 is its login form
        wrong = [
            await get(f"{base}/metrics", token="not-the-token"),
            await get(f"{base}/metrics", headers={"Authorization": "Basic Om5vcGU="}),
            await get(f"{base}/", headers={"Cookie": f"brudno_status={TOKEN}"}),
        ]
        assert [r.status for r in wrong] == [401, 401, 401]
        allowed = [await get(f"{base}{path}", token=TOKEN) for path in paths[:3]]
        assert [r.status for r in allowed] == [200, 200, 200]
        assert "EventSource" not in allowed[2].text and "status.js" in allowed[2].text
        assert (await get(f"{base}/assets/status.js")).status == 200  # no secret in it
        assert (await get(f"{base}/assets/../config.py")).status == 404
        for reply in (health, ready, *refused, *wrong, *allowed):
            assert TOKEN not in reply.text and TOKEN not in repr(reply.headers)
        assert await server.stop() == 0
        assert TOKEN not in "".join(server.log)


async def test_serve_metrics_count_what_sessions_did(brudno: list[str]) -> None:
    async with serve_process(
        brudno, "--metrics-port", "0", env=env_without_token(BRUDNO_TOKEN=TOKEN)
    ) as server:
        base = f"http://127.0.0.1:{(await server.wait_for_log(HTTP_LISTENING.pattern))[2]}"
        before = await metrics(base, TOKEN)
        assert before["brudno_ready"] == 1.0
        assert before["brudno_sessions_open"] == 0.0
        assert before['brudno_service_info{service="serve"}'] == 1.0

        # One timed search, one infinite search stopped, one wrong token.
        client = await TcpClient.open(server.port, token=TOKEN)
        await client.send("position startpos", "go movetime 300")
        _, move = await client.bestmove()
        await client.send("position startpos moves " + move, "go infinite")
        await client.read_until(lambda line: line.startswith("info depth 2 "))
        await client.send("stop")
        await client.bestmove()
        intruder = await TcpClient.open(server.port, token="guess")
        assert "authentication failed" in " ".join(await intruder.read_to_end())
        await intruder.close()

        after = await metrics(base, TOKEN)
        assert after["brudno_sessions_opened_total"] == 1.0
        assert after["brudno_sessions_open"] == 1.0
        assert after["brudno_searches_started_total"] == 2.0
        assert after["brudno_searches_finished_total"] == 2.0
        assert after["brudno_nodes_searched_total"] > 0
        # Only the timed search has a latency and an overshoot; only the stopped one a stop.
        assert after["brudno_bestmove_latency_seconds_count"] == 1.0
        assert 0.2 < after["brudno_bestmove_latency_seconds_sum"] < 60.0
        assert after["brudno_bestmove_overshoot_seconds_count"] == 1.0
        assert after["brudno_stop_latency_seconds_count"] == 1.0
        assert after['brudno_auth_failures_total{reason="wrong_token"}'] == 1.0
        assert after["brudno_emergency_moves_total"] == 0.0
        assert after["brudno_worker_restarts_total"] == 0.0
        assert after["brudno_memory_used_bytes"] == 16 * 2**20  # one session, Hash 16
        assert after["brudno_memory_budget_bytes"] == 2048 * 2**20
        assert after["process_resident_memory_bytes"] > 0

        sample = await get(f"{base}/status.json", token=TOKEN)
        (session,) = json.loads(sample.text)["sessions"]
        assert session["variant"] == "chess"
        played = chess.Board()
        played.push_uci(move)
        assert session["fen"] == played.fen()  # the position searched last
        assert session["searches"] == 2
        assert session["depth"] >= 2 and session["pv"]
        board = await get(f"{base}/{session['board']}", token=TOKEN)
        assert board.status == 200
        assert board.headers["Content-Type"].startswith("image/svg+xml")
        bad = await get(f"{base}/board.svg?variant=chess&fen=nonsense", token=TOKEN)
        assert bad.status == 400
        await client.close()
        assert await server.stop() == 0


async def test_serve_readiness_follows_free_slots(brudno: list[str]) -> None:
    async with serve_process(brudno, "--metrics-port", "0", "--max-sessions", "1") as server:
        base = f"http://127.0.0.1:{(await server.wait_for_log(HTTP_LISTENING.pattern))[2]}"
        client = await TcpClient.open(server.port)
        await client.exchange()
        full = await get(f"{base}/readyz")
        assert (full.status, full.text) == (503, "not ready: full: 1 sessions\n")
        refused = await TcpClient.open(server.port)
        assert "server full" in " ".join(await refused.read_to_end())
        values = await metrics(base)  # no token: loopback and open
        assert values['brudno_sessions_refused_total{reason="full"}'] == 1.0
        assert values["brudno_ready"] == 0.0
        await client.send("quit")
        await client.read_to_end()
        await _wait_status(f"{base}/readyz", 200)  # the slot is free again
        assert await server.stop() == 0


def test_metrics_beyond_loopback_need_a_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("BRUDNO_TOKEN", "BRUDNO_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    public = ["--metrics-port", "0", "--metrics-host", "0.0.0.0"]
    assert main(["serve", "--port", "0", *public]) == 2
    assert main(["mqtt", *public]) == 2
    assert capsys.readouterr().err.count("requires a token") == 2


async def test_worker_metrics_health_and_fleet(
    fresh_mosquitto: Mosquitto, mqtt_prefix: str, brudno: list[str], tmp_path: Path
) -> None:
    worker = WorkerProcess(
        brudno, fresh_mosquitto, mqtt_prefix, "mon-w1", tmp_path, "--metrics-port", "0"
    )
    try:
        found = await wait_for_file_line(worker.log_path, HTTP_LISTENING)
        base = f"http://127.0.0.1:{found[2]}"
        assert (await get(f"{base}/healthz")).status == 200
        async with ask_client(fresh_mosquitto, mqtt_prefix) as ask:
            await ask.wait_workers(1, 60.0)
            await _wait_status(f"{base}/readyz", 200)
            assert (await get(f"{base}/readyz")).text == "ready: subscribed to jobs\n"
            answers = [
                await ask.ask("chess", f"position startpos\ngo nodes {n}", timeout=60.0)
                for n in (300, 500)
            ]
            assert all(a.bestmove and not a.error for a in answers)
            bad = await ask.ask("chess", "position fen garbage\ngo nodes 10", timeout=60.0)
            assert bad.error
        values = await metrics(base)
        assert values['brudno_service_info{service="mqtt"}'] == 1.0
        assert values["brudno_mqtt_jobs_received_total"] == 3.0
        assert values["brudno_mqtt_jobs_answered_total"] == 2.0
        assert values["brudno_mqtt_jobs_rejected_total"] == 1.0
        assert values["brudno_mqtt_jobs_failed_total"] == 0.0
        assert values["brudno_mqtt_jobs_retried_total"] == 0.0
        assert values["brudno_searches_finished_total"] == 2.0
        assert values["brudno_nodes_searched_total"] >= 800
        assert values["brudno_bestmove_latency_seconds_count"] == 2.0
        assert values["brudno_mqtt_workers_online"] == 1.0

        status = json.loads((await get(f"{base}/status.json")).text)
        assert status["service"] == "mqtt"
        assert status["fleet"]["worker"] == "mon-w1"
        assert status["fleet"]["workers_online"] == ["mon-w1"]
        assert status["fleet"]["jobs_answered"] == 2

        # Readiness follows the broker: gone → 503, back → 200.
        fresh_mosquitto.stop()
        await _wait_status(f"{base}/readyz", 503)
        assert (await get(f"{base}/readyz")).text == "not ready: not connected to the broker\n"
        assert (await get(f"{base}/healthz")).status == 200  # alive all the same
        fresh_mosquitto.start()
        await _wait_status(f"{base}/readyz", 200)
        worker.terminate()
        assert worker.wait() == 0, worker.log_text()
    finally:
        worker.close()
    assert re.search(r"event=connected", worker.log_text())


async def _wait_status(url: str, status: int) -> None:
    for _ in range(1200):
        if (await get(url)).status == status:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{url} never answered {status}")
