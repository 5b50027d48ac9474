"""Playing levels through the real `brudno`: how a GUI sets them (python-chess, as lichess-bot
and GUIs do) and what the engine then plays and says."""

from __future__ import annotations

import json

import chess
import chess.engine
import pytest

from engine.skill import Skill
from games.chess_game.levels import CALIBRATION_PATH, CHESS_ELO
from tests.support.uci_process import UciProcess


def test_a_gui_limits_strength_by_elo_within_the_calibrated_range_and_its_node_budget(
    brudno: list[str],
) -> None:
    elos = [point["elo"] for point in json.loads(CALIBRATION_PATH.read_text())["points"]]
    with chess.engine.SimpleEngine.popen_uci(brudno, timeout=60) as engine:
        elo = engine.options["UCI_Elo"]
        assert (elo.min, elo.max, elo.default) == (min(elos), max(elos), min(elos))
        level = engine.options["Skill Level"]
        assert (level.type, level.min, level.max, level.default) == ("spin", 0, 20, 20)
        engine.configure({"UCI_LimitStrength": True, "UCI_Elo": min(elos)})
        skill = CHESS_ELO.skill(min(elos))
        assert skill is not None
        board = chess.Board()
        for _ in range(6):
            result = engine.play(board, chess.engine.Limit(nodes=10**7), info=chess.engine.INFO_ALL)
            assert result.move is not None and result.move in board.legal_moves
            assert 0 < result.info["nodes"] <= skill.nodes  # the level's budget, not the go's
            board.push(result.move)
        for bad in ({"UCI_Elo": max(elos) + 1}, {"UCI_Elo": min(elos) - 1}, {"Skill Level": 21}):
            with pytest.raises(chess.engine.EngineError):
                engine.configure(bad)  # beyond the declared ranges


@pytest.mark.asyncio
async def test_go_infinite_at_a_level_shows_the_levels_search_until_stop(
    brudno: list[str],
) -> None:
    engine = await UciProcess.start(brudno)
    try:
        await engine.exchange("uci", "setoption name Skill Level value 3")
        await engine.send("position startpos", "go infinite")
        cap = Skill(3).depth
        shown = await engine.read_until(lambda line: line.startswith(f"info depth {cap} "))
        await engine.send("stop")
        shown += await engine.read_until(lambda line: line.startswith("bestmove"))
        infos = [line.split() for line in shown if line.startswith("info depth")]
        assert all(int(words[2]) <= (cap or 0) for words in infos)
        assert all(int(words[words.index("nodes") + 1]) <= Skill(3).nodes for words in infos)
        assert all(
            words[words.index("multipv") + 1] == "1" for words in infos if "multipv" in words
        )
    finally:
        await engine.close()


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


@pytest.mark.asyncio
async def test_a_level_ponders_and_answers_the_ponderhit(brudno: list[str]) -> None:
    engine = await UciProcess.start(brudno)
    try:
        await engine.exchange(
            "uci", "setoption name Ponder value true", "setoption name Skill Level value 5"
        )
        await engine.send("position startpos moves e2e4 e7e5", "go ponder wtime 60000 btime 60000")
        pondered = await engine.read_until(lambda line: line.startswith("info depth 1 "))
        await engine.send("ponderhit")
        pondered += await engine.read_until(lambda line: line.startswith("bestmove"))
        board = chess.Board()
        for move in ("e2e4", "e7e5"):
            board.push_uci(move)
        assert chess.Move.from_uci(pondered[-1].split()[1]) in board.legal_moves
        depths = [int(line.split()[2]) for line in pondered if line.startswith("info depth")]
        assert max(depths) <= (Skill(5).depth or 0)
        nodes = [line.split() for line in pondered if " nodes " in line]
        assert all(int(words[words.index("nodes") + 1]) <= Skill(5).nodes for words in nodes)
    finally:
        await engine.close()
