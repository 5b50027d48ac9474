"""Playing levels (engine/skill.py): what a level may play, what it reports, that it is capped,
and that a low level can lose the small games while full strength does not."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import chess
import pytest

import engine.skill
from engine.game import Game
from engine.info import InfoCallback, SearchInfo, SearchResult
from engine.limits import Limits
from engine.score import Cp, Mate, Reported
from engine.search import Searcher
from engine.skill import (
    CANDIDATES,
    DRAW_ENDS,
    FULL_STRENGTH,
    TIME_SHARE,
    EloScale,
    Search,
    Skill,
    choose_line,
    search_at_level,
)
from games.registry import get_variant


def searching(game: Game[Any], searcher: Searcher) -> Search:
    """The search a level weakens: ``searcher`` on ``game``."""

    def search(capped: Limits, multipv: int, on_info: InfoCallback) -> SearchResult:
        return searcher.search(game, capped, on_info=on_info, multipv=multipv)

    return search


def line(k: int, score: Reported, *pv: str) -> SearchInfo:
    return SearchInfo(depth=3, multipv=k, score=score, pv=pv)


def draws(lines: list[SearchInfo], skill: Skill, n: int = 400) -> Counter[int]:
    rng = random.Random(7)
    return Counter(choose_line(lines, skill, rng) for _ in range(n))


def test_a_move_beyond_the_levels_max_loss_is_never_played() -> None:
    skill = Skill(12)
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
    assert limits.nodes == Skill(0).nodes
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
    search_at_level(search, Limits(), Skill(18), multipv=3, on_info=lambda _: None)
    assert search.calls[-1][0].nodes == Skill(18).budget(3) and search.calls[-1][1] == 3


def test_every_step_up_searches_more_and_draws_less() -> None:
    steps = [i / 4 for i in range(4 * FULL_STRENGTH)]  # fractional levels too
    skills = [Skill(level) for level in steps]
    per_line = [skill.nodes // skill.lines for skill in skills]
    assert all(a < b for a, b in itertools.pairwise(per_line))
    caps = [skill.depth or 999 for skill in skills]
    assert caps == sorted(caps) and caps[0] == 1 and Skill(6).depth is None
    temperatures = [skill.temperature for skill in skills]
    losses = [skill.max_loss for skill in skills]
    assert temperatures == sorted(temperatures, reverse=True)
    assert losses == sorted(losses, reverse=True)
    assert next(s.level for s in skills if not s.draws) == DRAW_ENDS
    for skill in skills:
        assert skill.lines == (CANDIDATES if skill.level < DRAW_ENDS else 1)
        assert (skill.temperature > 0) == skill.draws
    assert Skill(FULL_STRENGTH - 0.01).nodes > 50_000  # near full strength's nodes at 10+0.1


def test_a_level_only_shortens_the_search_and_shares_the_clock_only_with_several_lines() -> None:
    low, top = Skill(3), Skill(18)
    assert low.limits(Limits(depth=1, nodes=50)) == Limits(depth=1, nodes=50)
    assert low.limits(Limits(depth=9)).depth == low.depth
    assert top.limits(Limits(depth=9)).depth == 9
    assert top.limits(Limits()).nodes == top.nodes
    assert top.limits(Limits(), multipv=3).nodes == 3 * top.nodes  # a GUI's lines, each a budget
    assert low.limits(Limits(), multipv=3).nodes == low.nodes  # fewer than its own four
    clock = Limits(wtime=8000, btime=6000, winc=100, movetime=1000)
    shared = low.limits(clock)
    assert (shared.wtime, shared.btime, shared.winc, shared.binc, shared.movetime) == (
        int(8000 * TIME_SHARE),
        int(6000 * TIME_SHARE),
        int(100 * TIME_SHARE),
        None,
        int(1000 * TIME_SHARE),
    )
    assert TIME_SHARE < 1  # a level never has more time than full strength
    assert top.limits(clock) == replace(clock, nodes=top.nodes)  # one line: the real clock
    with pytest.raises(ValueError):
        Skill(FULL_STRENGTH)
    with pytest.raises(ValueError):
        Skill(-1)


def test_a_top_level_is_full_strengths_search_stopped_at_its_budget() -> None:
    variant = get_variant("chess")
    fen = "r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R1BQ1RK1 w - - 0 8"
    for level in (DRAW_ENDS, 19.5):
        skill = Skill(level, seed=1)
        game, searcher, infos = variant.new(fen), Searcher(8), []
        search = searching(game, searcher)
        played = search_at_level(search, Limits(), skill, multipv=1, on_info=infos.append)
        full = Searcher(8).search(variant.new(fen), Limits(nodes=skill.nodes))
        assert (played.best, played.score, played.depth, played.nodes, played.pv) == (
            full.best,
            full.score,
            full.depth,
            full.nodes,
            full.pv,
        )
        assert all(info.multipv == 1 for info in infos)  # one line searched, none lost


def test_the_bottom_level_completes_depth_one_with_captures_resolved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Qxd5 wins a pawn to a one-ply look and loses the queen to ...cxd5: quiescence sees it,
    also when the level's budget ran out before depth 1 was complete."""
    variant = get_variant("chess")
    fen = "4k3/8/2p5/3p4/8/8/8/3QK3 w - - 0 1"
    for budget in (engine.skill.NODES_AT_ZERO, 1):
        monkeypatch.setattr(engine.skill, "NODES_AT_ZERO", budget)
        for seed in range(20):
            game, searcher = variant.new(fen), Searcher(1)
            search = searching(game, searcher)
            result = search_at_level(
                search, Limits(), Skill(0, seed=seed), multipv=1, on_info=lambda _: None
            )
            assert result.depth == 1 and result.best != "d1d5", (budget, seed)


def test_no_level_hangs_a_piece_it_sees() -> None:
    """The rook attacks the knight on a1; only Nb3 and Nc2 keep it. Level 0 draws among
    its four best moves, two of which lose the knight: it never plays those."""
    variant = get_variant("chess")
    fen = "r5k1/8/8/8/8/8/6PP/N6K w - - 0 1"
    played = set()
    for seed in range(40):
        game = variant.new(fen)
        skill = Skill(0, seed=seed)
        result = search_at_level(
            searching(game, Searcher(1)), Limits(), skill, multipv=1, on_info=lambda _: None
        )
        played.add(result.best)
    assert played == {"a1b3", "a1c2"}


def test_every_level_plays_a_mate_it_sees() -> None:
    variant = get_variant("chess")
    fen = "6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"  # Ra8#, while other moves are quiet
    for level in (0, 5, 12, 19.5):
        for seed in range(10):
            game = variant.new(fen)
            result = search_at_level(
                searching(game, Searcher(1)),
                Limits(),
                Skill(level, seed=seed),
                multipv=1,
                on_info=lambda _: None,
            )
            assert result.best == "a1a8", (level, seed, result)
            assert result.nodes <= Skill(level).nodes


def test_a_seed_replays_the_same_game_and_other_seeds_play_others() -> None:
    def game_of(seed: int) -> list[str]:
        game, searcher, moves = get_variant("chess").new(), Searcher(1), []
        for _ in range(6):
            search = searching(game, searcher)
            skill = Skill(2, seed=seed)
            move = search_at_level(search, Limits(), skill, multipv=1, on_info=lambda _: None)
            assert move.best is not None
            moves.append(move.best)
            game.push(game.parse_move(move.best))
        return moves

    assert game_of(5) == game_of(5)
    assert len({tuple(game_of(seed)) for seed in range(4)}) > 1


def test_elo_scale_interpolates_between_measured_points_and_clamps_outside() -> None:
    scale = EloScale(((1350, 0.0), (1500, 6.0), (1800, 15.0)), reference="test")
    assert (scale.lowest, scale.highest) == (1350, 1800)
    assert scale.level(1350) == 0.0
    assert scale.level(1425) == 3.0
    assert scale.level(1600) == pytest.approx(9.0)
    assert scale.level(1000) == 0.0
    assert scale.level(2500) == 15.0
    top = EloScale(((1350, 0.0), (2000, float(FULL_STRENGTH))), reference="full strength on top")
    assert top.skill(2000) is None and top.skill(1999) is not None  # the top is level 20
    assert top.level(1675) == pytest.approx(FULL_STRENGTH / 2)
    for bad in (((1350, 0.0),), ((1350, 5.0), (1500, 4.0)), ((1350, 0.0), (1500, 20.5))):
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
        assert max(info.depth for info in infos) <= (skill.depth or 99)
        assert result.nodes <= skill.nodes
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


def play(
    variant: str, first: Skill | None, second: Skill | None, limits: Limits, fen: str | None = None
) -> int:
    """One game (from ``fen``, else the start); +1 if the first player wins, -1 if it loses,
    0 for a draw."""
    game = get_variant(variant).new(fen)
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


@dataclass(frozen=True, slots=True)
class Ladder:
    """Levels of a game played against the full-strength search at ``depth``: ``seeds``
    games each from ``fen`` (``None``: the start), also as the second player if ``both``;
    with ``openings``, from every position that many plies after it instead, each game of a
    level with a seed of its own."""

    variant: str
    levels: tuple[int, ...]
    seeds: int
    depth: int
    fen: str | None = None
    both: bool = True
    openings: int = 0


def openings(variant: str, fen: str | None, plies: int) -> list[str | None]:
    """The distinct positions ``plies`` plies after ``fen`` that are not over, sorted; ``fen``
    itself for 0 plies."""
    if not plies:
        return [fen]
    found: set[str] = set()
    frontier = [get_variant(variant).new(fen)]
    for ply in range(plies):
        after = []
        for game in frontier:
            for move in game.legal_moves():
                child = game.copy()
                child.push(move)
                if child.is_terminal() or not child.legal_moves():
                    continue
                if ply == plies - 1:
                    found.add(child.fen())
                else:
                    after.append(child)
        frontier = after
    return [*sorted(found)]


LADDERS = [
    Ladder("tictactoe", (0, 2, 4, 8, 16), seeds=1, depth=9, openings=2),
    Ladder("grundy", (0, 4, 8, 12), seeds=10, depth=2, fen="17/13/9/6 w 1", both=False),
    Ladder("cfour", (0, 3, 10, 16), seeds=4, depth=5),
]


@pytest.mark.parametrize("ladder", LADDERS, ids=lambda ladder: ladder.variant)
def test_every_game_scores_no_less_against_full_strength_a_level_higher(ladder: Ladder) -> None:
    """Seeded games of each level against the full-strength search (depth-limited): the
    points never fall as the level rises, and the bottom scores less than the top (the
    grundy start is a first player's win: only the level plays it).

    Tic-tac-toe is played from every two-ply opening (72: 48 won for the first player, 24
    drawn), not from the start: the full-strength search sees the whole game and draws it,
    but which of the drawn lines it plays is its move order's choice, and whether that line
    ever offers the level a losing move is an accident (with one order every level drew every
    game from the start). From the openings a level must win the won positions and hold the
    drawn ones; full strength punishes every mistake, so the points count the mistakes.
    Connect Four's levels below 16 draw among four lines whose scores differ little (the
    game's scores are small), and against depth 5 they lose every game: the top rung is 16,
    the first that searches one line (with one ``Random(seed)`` for every move, level 10
    once happened to hold a game)."""
    limits = Limits(depth=ladder.depth)
    starts = openings(ladder.variant, ladder.fen, ladder.openings)
    games = [
        (fen, seed * len(starts) + k)
        for seed in range(ladder.seeds)
        for k, fen in enumerate(starts)
    ]
    points = []
    for level in ladder.levels:
        results = [
            play(ladder.variant, Skill(level, seed=s), None, limits, fen) for fen, s in games
        ]
        if ladder.both:
            results += [
                -play(ladder.variant, None, Skill(level, seed=s), limits, fen) for fen, s in games
            ]
        points.append(sum(results))
    assert points == sorted(points), dict(zip(ladder.levels, points, strict=True))
    assert points[0] < points[-1]
