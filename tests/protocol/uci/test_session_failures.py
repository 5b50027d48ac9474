"""A search that fails still ends in exactly one ``bestmove``, and the session keeps serving.

The session's fallback asks the game for a legal move to play; when the game cannot name one
either (the failure is in move generation itself), ``bestmove 0000`` is still sent.
"""

from __future__ import annotations

import asyncio

import chess
import pytest

from games.chess_game.adapter import ChessGame
from protocol.uci.session import EngineSession


class ListSink:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def send(self, line: str, *, droppable: bool = False) -> None:
        self.lines.append(line)


async def _go(session: EngineSession, sink: ListSink, go: str) -> list[str]:
    sink.lines.clear()
    await session.handle(go)
    async with asyncio.timeout(60):  # guards against a hang only
        while not any(line.startswith("bestmove") for line in sink.lines):
            await asyncio.sleep(0.005)
    await asyncio.sleep(0.05)  # a second bestmove would arrive by now
    return sink.lines


def _assert_one_legal_reply_to_e2e4(lines: list[str]) -> None:
    best = [line for line in lines if line.startswith("bestmove")]
    assert len(best) == 1
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(best[0].split()[1]) in board.legal_moves


def _broken(self: ChessGame) -> list[chess.Move]:
    raise RuntimeError("move generator out of order")


async def test_failed_search_with_no_fallback_move_answers_the_null_move(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sink = ListSink()
    session = EngineSession(sink)
    await session.handle("position startpos moves e2e4")
    with monkeypatch.context() as patch:
        patch.setattr(ChessGame, "noisy_moves", _broken)
        patch.setattr(ChessGame, "legal_moves", _broken)
        lines = await _go(session, sink, "go depth 2")
    assert [line for line in lines if line.startswith("bestmove")] == ["bestmove 0000"]
    # One short line for the client (the traceback stays in the server's log).
    errors = [line for line in lines if line.startswith("info string error: internal error")]
    assert len(errors) == 1
    assert errors[0].startswith("info string error: internal error in search (RuntimeError) (")
    assert "Traceback" not in errors[0] and "/" not in errors[0].split("(", 2)[1]
    # Nothing changed: the same position searches normally afterwards.
    lines = await _go(session, sink, "go depth 2")
    _assert_one_legal_reply_to_e2e4(lines)
    await session.close()


async def test_failed_search_falls_back_to_a_legal_move(monkeypatch: pytest.MonkeyPatch) -> None:
    sink = ListSink()
    session = EngineSession(sink)
    await session.handle("position startpos moves e2e4")
    with monkeypatch.context() as patch:
        patch.setattr(ChessGame, "noisy_moves", _broken)
        lines = await _go(session, sink, "go depth 2")
    _assert_one_legal_reply_to_e2e4(lines)
    await session.close()
