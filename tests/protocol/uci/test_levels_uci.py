"""Playing levels through the real `brudno`: how a GUI sets them (python-chess, as lichess-bot
and GUIs do) and what the engine then plays and says."""

from __future__ import annotations

import chess
import chess.engine
import pytest

from games.chess_game.levels import CHESS_ELO
from tests.support.uci_process import UciProcess


def test_a_gui_limits_strength_by_elo_and_the_search_stays_within_the_level(
    brudno: list[str],
) -> None:
    with chess.engine.SimpleEngine.popen_uci(brudno, timeout=60) as engine:
        elo = engine.options["UCI_Elo"]
        assert (elo.min, elo.max) == (CHESS_ELO.lowest, CHESS_ELO.highest)
        level = engine.options["Skill Level"]
        assert (level.type, level.min, level.max, level.default) == ("spin", 0, 20, 20)
        engine.configure({"UCI_LimitStrength": True, "UCI_Elo": CHESS_ELO.lowest})
        cap = CHESS_ELO.skill(CHESS_ELO.lowest).depth
        board = chess.Board()
        for _ in range(8):
            limit = chess.engine.Limit(white_clock=10, black_clock=10, white_inc=0.1, black_inc=0.1)
            result = engine.play(board, limit, info=chess.engine.INFO_ALL)
            assert result.move is not None and result.move in board.legal_moves
            assert 1 <= result.info["depth"] <= cap
            board.push(result.move)
        with pytest.raises(chess.engine.EngineError):
            engine.configure({"UCI_Elo": CHESS_ELO.highest + 1})  # beyond the measured range


@pytest.mark.asyncio
async def test_skill_level_applies_to_tictactoe_and_uci_elo_says_it_does_not(
    brudno: list[str],
) -> None:
    engine = await UciProcess.start(brudno)
    try:
        said = await engine.exchange(
            "uci",
            "setoption name UCI_Variant value tictactoe",
            "setoption name Skill Level value 0",
            "setoption name UCI_LimitStrength value true",
        )
        assert any(
            "tictactoe has no measured Elo scale; Skill Level (0) sets its level" in line
            for line in said
        ), said
        await engine.send("position startpos", "go depth 9")
        lines = await engine.read_until(lambda line: line.startswith("bestmove"))
        depths = [int(line.split()[2]) for line in lines if line.startswith("info depth")]
        assert depths and max(depths) == 1  # level 0 searches one ply (full strength: 9)
        assert lines[-1].split()[1] in {f"P@{f}{r}" for f in "abc" for r in "123"}
    finally:
        await engine.close()
