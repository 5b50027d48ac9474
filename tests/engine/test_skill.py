"""Playing levels (engine/skill.py): what a level may play, what it reports, that it is capped,
and that a low level can lose the small games while full strength does not."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import chess
import pytest

from engine.game import Game
from engine.info import InfoCallback, SearchInfo, SearchResult
from engine.limits import Limits
from engine.score import Cp, Mate, Reported
from engine.search import Searcher
from engine.skill import (
    CANDIDATES,
    FULL_STRENGTH,
    TIME_SHARE,
    EloScale,
    Skill,
    choose_line,
    search_at_level,
)
from games.registry import get_variant


def line(k: int, score: Reported, *pv: str) -> SearchInfo:
    return SearchInfo(depth=3, multipv=k, score=score, pv=pv)


def draws(lines: list[SearchInfo], skill: Skill, n: int = 400) -> Counter[int]:
    rng = random.Random(7)
    return Counter(choose_line(lines, skill, rng) for _ in range(n))


def test_a_move_beyond_the_levels_max_loss_is_never_played() -> None:
    skill = Skill(19)
    lines = [
        line(1, Cp(100), "a"),
        line(2, Cp(100 - skill.max_loss), "b"),
        line(3, Cp(99 - skill.max_loss), "c"),
        line(4, Cp(-900), "d"),
    ]
    counts = draws(lines, skill)
    assert set(counts) == {0, 1}
    assert counts[0] > counts[1]  # the better of two allowed moves is the likelier


def test_a_low_level_plays_close_alternatives_often_and_a_high_one_rarely() -> None:
    lines = [line(1, Cp(30), "a"), line(2, Cp(20), "b"), line(3, Cp(5), "c"), line(4, Cp(0), "d")]
    low = draws(lines, Skill(0))
    high = draws(lines, Skill(19))
    assert low[0] < 0.5 * sum(low.values())  # a weak player: any of four near-equal moves
    assert len(low) == CANDIDATES
    assert high[0] > low[0]


def test_a_seen_mate_is_played_and_a_seen_mate_against_is_avoided() -> None:
    mate = [line(1, Mate(2), "a"), line(2, Cp(600), "b"), line(3, Cp(550), "c")]
    assert set(draws(mate, Skill(0))) == {0}
    escape = [line(1, Cp(-50), "a"), line(2, Mate(-3), "b"), line(3, Mate(-1), "c")]
    assert set(draws(escape, Skill(0))) == {0}


def fake_search(lines: list[SearchInfo]) -> Any:
    """A search that reports ``lines`` (best first) and returns them, recording its call."""
    calls: list[tuple[Limits, int]] = []

    def search(limits: Limits, multipv: int, on_info: InfoCallback) -> SearchResult:
        calls.append((limits, multipv))
        for info in lines[:multipv]:
            on_info(info)
        best = lines[0]
        return SearchResult(
            best.pv[0],
            best.pv[1],
            best.score,
            best.depth,
            1000,
            5,
            pv=best.pv,
            lines=tuple(lines[:multipv]),
        )

    search.calls = calls  # type: ignore[attr-defined]
    return search


def test_the_move_played_is_reported_last_as_line_one_and_ponder_follows_it() -> None:
    lines = [line(k + 1, Cp(10 - k), f"m{k}", f"r{k}") for k in range(CANDIDATES)]
    search = fake_search(lines)
    for seed in range(40):
        infos: list[SearchInfo] = []
        result = search_at_level(
            search, Limits(depth=9), Skill(0, seed=seed), multipv=1, on_info=infos.append
        )
        assert all(info.multipv == 1 for info in infos)  # the GUI asked for one line
        assert infos[-1].pv == result.pv
        assert (result.best, result.ponder) == result.pv[:2]
        assert result.score == infos[-1].score
        assert [len(r.lines) for r in (result,)] == [1]
    limits, multipv = search.calls[0]
    assert limits.depth == Skill(0).depth  # capped below the go's depth 9
    assert multipv == CANDIDATES
    played = set()
    for seed in range(40):
        infos = []
        played.add(
            search_at_level(
                search, Limits(), Skill(0, seed=seed), multipv=1, on_info=infos.append
            ).best
        )
    assert len(played) > 1  # seeds give other games


def test_depth_cap_grows_with_the_level_and_a_smaller_go_depth_stays() -> None:
    depths = [Skill(level).depth for level in range(FULL_STRENGTH)]
    assert depths == sorted(depths) and depths[0] == 1 and depths[-1] > 5
    assert Skill(18).limits(Limits(depth=2)).depth == 2
    assert Skill(18).limits(Limits(nodes=50)).nodes == 50
    clock = Skill(18).limits(Limits(wtime=8000, btime=6000, winc=100, movetime=1000))
    assert (clock.wtime, clock.btime, clock.winc, clock.binc, clock.movetime) == (
        int(8000 * TIME_SHARE),
        int(6000 * TIME_SHARE),
        int(100 * TIME_SHARE),
        None,
        int(1000 * TIME_SHARE),
    )
    assert TIME_SHARE < 1  # a level never has more time than full strength
    with pytest.raises(ValueError):
        Skill(FULL_STRENGTH)
    with pytest.raises(ValueError):
        Skill(-1)


def test_elo_scale_interpolates_between_measured_points_and_clamps_outside() -> None:
    scale = EloScale(((1350, 0.0), (1500, 6.0), (1800, 15.0)), reference="test")
    assert (scale.lowest, scale.highest) == (1350, 1800)
    assert scale.skill(1350).level == 0.0
    assert scale.skill(1425).level == 3.0
    assert scale.skill(1600).level == pytest.approx(9.0)
    assert scale.skill(1000).level == 0.0
    assert scale.skill(2500).level == 15.0
    for bad in (((1350, 0.0),), ((1350, 5.0), (1500, 4.0)), ((1350, 0.0), (1500, 20.0))):
        with pytest.raises(ValueError):
            EloScale(bad, reference="test")


def searched(game: Game[Any], skill: Skill | None, searcher: Searcher, limits: Limits) -> Any:
    def search(capped: Limits, multipv: int, on_info: InfoCallback) -> SearchResult:
        return searcher.search(game, capped, on_info=on_info, multipv=multipv)

    if skill is None:
        return searcher.search(game, limits)
    return search_at_level(search, limits, skill, multipv=1, on_info=lambda _info: None)


def test_a_chess_level_plays_legal_lines_within_its_depth() -> None:
    variant = get_variant("chess")
    searcher = Searcher(4)
    board = chess.Board()
    rng = random.Random(3)
    for ply in range(24):
        game = variant.new(board.fen())
        infos: list[SearchInfo] = []

        def search(capped: Limits, multipv: int, on_info: InfoCallback, game: Any = game) -> Any:
            return searcher.search(game, capped, on_info=on_info, multipv=multipv)

        skill = Skill(ply % 12, seed=ply)
        result = search_at_level(
            search, Limits(nodes=20_000), skill, multipv=1, on_info=infos.append
        )
        assert max(info.depth for info in infos) <= skill.depth
        after = board.copy()
        for text in result.pv:
            move = chess.Move.from_uci(text)
            assert move in after.legal_moves, (board.fen(), result.pv)
            after.push(move)
        assert result.best == result.pv[0]
        board.push(chess.Move.from_uci(result.pv[0]))
        if board.is_game_over():
            break
        board.push(rng.choice(list(board.legal_moves)))
        if board.is_game_over():
            break


def play(variant: str, first: Skill | None, second: Skill | None, limits: Limits) -> int:
    """One game; +1 if the first player wins, -1 if it loses, 0 for a draw."""
    game = get_variant(variant).new()
    searchers = (Searcher(1), Searcher(1))
    players = (first, second)
    while not game.is_terminal() and game.legal_moves():
        side = game.side
        result = searched(game.copy(), players[side], searchers[side], limits)
        game.push(game.parse_move(result.best))
    outcome = game.terminal_value()  # for the side to move, who did not make the last move
    if outcome == 0:
        return 0
    return 1 if (game.side == 0) == (outcome > 0) else -1


def test_tictactoe_level_zero_loses_to_full_strength_which_never_loses() -> None:
    limits = Limits(depth=9)
    results = [play("tictactoe", None, Skill(0, seed=seed), limits) for seed in range(12)]
    results += [-play("tictactoe", Skill(0, seed=seed), None, limits) for seed in range(12)]
    assert min(results) >= 0  # full strength (first here) never loses
    assert results.count(1) >= 2  # and the weakest level loses some games


def test_connect4_level_zero_loses_to_a_deeper_search() -> None:
    limits = Limits(depth=6)
    results = [play("cfour", None, Skill(0, seed=seed), limits) for seed in range(3)]
    results += [-play("cfour", Skill(0, seed=seed), None, limits) for seed in range(3)]
    assert results.count(1) >= 4
