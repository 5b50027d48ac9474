"""lichess-bot's shipped option set, as it configures the real `brudno` through python-chess.

lichess-bot (the bridge that runs UCI engines as lichess.org bots) passes its
``config.yml.default`` ``uci_options`` straight to python-chess's ``configure``, which refuses
any option the engine did not declare or a value outside the declared range; then it plays
with ponder on.  Before issues 14 and 15 this stopped at start-up (``Threads 4``,
``SyzygyPath``).  Here the same options, the same calls, and a game with pondering.
"""

from __future__ import annotations

import random

import chess
import chess.engine

from tests.support.paths import DATA
from tests.support.processes import descendants, is_search_helper

LICHESS_BOT_UCI_OPTIONS = {
    "Threads": 4,
    "Hash": 512,
    "SyzygyPath": str(DATA / "syzygy" / "regular"),
    "UCI_ShowWDL": True,
    "Move Overhead": 100,
}
"""``engine: uci_options:`` of lichess-bot's config.yml.default (the tables' path is ours)."""


def test_lichess_bots_default_options_and_a_game_with_ponder(brudno: list[str]) -> None:
    with chess.engine.SimpleEngine.popen_uci(brudno, timeout=60) as engine:
        engine.configure(LICHESS_BOT_UCI_OPTIONS)
        assert engine.options["Ponder"].type == "check"
        board = chess.Board()
        rng = random.Random(14)
        clock = {chess.WHITE: 30.0, chess.BLACK: 30.0}
        plies = 0
        while not board.is_game_over() and plies < 40:
            if board.turn == chess.WHITE:  # the bot's side
                limit = chess.engine.Limit(
                    white_clock=clock[chess.WHITE],
                    black_clock=clock[chess.BLACK],
                    white_inc=0.2,
                    black_inc=0.2,
                )
                result = engine.play(board, limit, ponder=True, info=chess.engine.INFO_ALL)
                assert result.move in board.legal_moves
                if result.ponder is not None:
                    after = board.copy()
                    after.push(result.move)
                    assert result.ponder in after.legal_moves
                if result.info.get("depth"):  # a search, not a book move: UCI_ShowWDL's triple
                    assert result.info["wdl"].relative.total() == 1000
                move = result.move
            else:  # the opponent on lichess: sometimes the expected reply, sometimes not
                move = rng.choice(list(board.legal_moves))
            board.push(move)
            plies += 1
        pid = engine.transport.get_pid()  # type: ignore[attr-defined]
        assert len([p for p in descendants(pid) if is_search_helper(p)]) == 3
