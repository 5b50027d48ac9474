"""A search that fails still ends in exactly one ``bestmove``, and the session keeps serving.

The session's fallback asks the game for a legal move to play; when the game cannot name one
either (the failure is in move generation itself), ``bestmove 0000`` is still sent.
"""

from __future__ import annotations

import asyncio
from typing import Any

import chess
import pytest

from engine.game import Game
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


class _Broken:
    """The session's chess game with some of its methods out of order.

    A wrapper, not a patched class: mypyc compiles :class:`ChessGame`, and a compiled class
    cannot be patched.  Copies (what a search gets) are broken the same way."""

    def __init__(self, game: Game[Any], *broken: str) -> None:
        self._inner = game
        self._broken = broken

    def __getattr__(self, name: str) -> Any:
        if name in self._broken:
            raise RuntimeError(f"{name} out of order")
        return getattr(self._inner, name)

    def copy(self) -> _Broken:
        if "copy" in self._broken:
            raise RuntimeError("copy out of order")
        return _Broken(self._inner.copy(), *self._broken)


def _break(patch: pytest.MonkeyPatch, session: EngineSession, *broken: str) -> None:
    patch.setattr(session._engine, "game", _Broken(session._engine.game, *broken))


async def test_failed_search_with_no_fallback_move_answers_the_null_move(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sink = ListSink()
    session = EngineSession(sink)
    await session.handle("position startpos moves e2e4")
    with monkeypatch.context() as patch:
        _break(patch, session, "noisy_moves", "legal_moves")
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
        _break(patch, session, "noisy_moves")
        lines = await _go(session, sink, "go depth 2")
    _assert_one_legal_reply_to_e2e4(lines)
    await session.close()


async def test_go_that_fails_before_its_search_still_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A failure before any search has started (here: copying the game for it) is an
    internal error like a failed search, and the ``go`` still gets its one ``bestmove``."""
    sink = ListSink()
    session = EngineSession(sink)
    await session.handle("position startpos moves e2e4")
    with monkeypatch.context() as patch:
        _break(patch, session, "copy")
        lines = await _go(session, sink, "go depth 2")
    _assert_one_legal_reply_to_e2e4(lines)
    errors = [line for line in lines if line.startswith("info string error: internal error")]
    assert errors == ["info string error: internal error in go (RuntimeError) (go depth 2)"]
    lines = await _go(session, sink, "go depth 2")
    _assert_one_legal_reply_to_e2e4(lines)
    await session.close()
