"""Every game through MQTT: a job per variant gets a legal ``bestmove`` back from a worker
with real search processes (the path where a game's bug in a worker process would show)."""

from __future__ import annotations

import pytest

from games.registry import GAMES
from protocol.transports.mqtt.ask import AskOptions
from tests.support.mosquitto_fixture import HANG_TIMEOUT, Mosquitto, ask_client, running_worker
from tests.support.tcp_helpers import ensure_warm

VARIANT_JOBS = [
    ("chess", ("e2e4",)),
    ("tictactoe", ("P@b2",)),
    ("cfour", ("P@d1",)),
    ("grundy", ("7=3+4",)),
]


def test_every_variant_is_covered() -> None:
    assert sorted(name for name, _ in VARIANT_JOBS) == sorted(GAMES)


@pytest.mark.parametrize(("variant", "moves"), VARIANT_JOBS, ids=[v for v, _ in VARIANT_JOBS])
async def test_a_job_per_variant_gets_a_legal_bestmove(
    mosquitto: Mosquitto, mqtt_prefix: str, variant: str, moves: tuple[str, ...]
) -> None:
    await ensure_warm()
    job = f"position startpos moves {' '.join(moves)}\ngo depth 3\n"
    async with (
        running_worker(mosquitto, mqtt_prefix) as worker,
        ask_client(mosquitto, mqtt_prefix) as ask,
    ):
        answer = await ask.ask(
            variant, job, timeout=HANG_TIMEOUT, options=AskOptions(require_worker=True)
        )
    assert not answer.error and answer.errors == (), answer.lines
    assert answer.worker == worker.config.worker_id
    game = GAMES[variant].new()
    for move in moves:  # the position after the moves: the other side is to move
        game.push(game.parse_move(move))
    assert answer.bestmove in {game.format_move(m) for m in game.legal_moves()}, answer.lines
    assert answer.lines[-1].startswith(f"bestmove {answer.bestmove}")
