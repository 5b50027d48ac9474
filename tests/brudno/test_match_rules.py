"""The match runner's pure parts: go limits, settings, the schedule, the tally of pairs, move
comments, and the help texts.  No engine processes here.  (Time controls, adjudication and the
referees have their own test files, as they have their own modules.)"""

from __future__ import annotations

import pytest

from brudno.arena.clock import TimeControl
from brudno.arena.match import _move_comment
from brudno.arena.openings import Opening
from brudno.arena.players import EngineConfig, GoLimits, MoveReply
from brudno.arena.referee import GameResult, Outcome, Termination
from brudno.arena.results import PairStats
from brudno.arena.schedule import GameJob, schedule
from brudno.arena.settings import MatchError, MatchSettings
from brudno.arena.stats import Sprt
from brudno.cli import main

DRAW = GameResult.DRAW
START = Opening(None, (), "start position")


def test_go_limits_words() -> None:
    limits = GoLimits(wtime=1500, btime=0, winc=100, binc=100, movestogo=12)
    # a clock at zero is sent as 1 ms: "wtime 0" makes some engines resign or move instantly
    words = ["wtime", "1500", "btime", "1", "winc", "100", "binc", "100", "movestogo", "12"]
    assert limits.words() == words
    assert GoLimits(depth=3, nodes=500).words() == ["depth", "3", "nodes", "500"]
    limit = GoLimits(wtime=1500, btime=900, winc=100, binc=100).to_python_chess()
    assert (limit.white_clock, limit.black_clock, limit.white_inc) == (1.5, 0.9, 0.1)


# -- settings --------------------------------------------------------------------------------
ENGINES = (EngineConfig(("a",)), EngineConfig(("b",)))


def test_settings_validation() -> None:
    assert MatchSettings(ENGINES, depth=1).time_control_tag() == "-"
    assert MatchSettings(ENGINES, movetime_ms=250).time_control_tag() == "1/0.25"
    assert MatchSettings(ENGINES, tc=TimeControl.parse("10+0.1")).time_control_tag() == "10+0.1"
    with pytest.raises(MatchError, match="limit"):
        MatchSettings(ENGINES)
    with pytest.raises(MatchError, match="twice"):
        MatchSettings(ENGINES[:1], depth=1)
    with pytest.raises(MatchError, match="exclude"):
        MatchSettings(ENGINES, tc=TimeControl.parse("1+0"), movetime_ms=10)
    with pytest.raises(MatchError, match="exactly two"):
        MatchSettings((*ENGINES, EngineConfig(("c",))), depth=1, sprt=Sprt())
    with pytest.raises(MatchError, match="variant"):
        MatchSettings(ENGINES, depth=1, variant="go")
    with pytest.raises(MatchError, match="chess only"):
        MatchSettings(ENGINES, depth=1, variant="tictactoe", tablebase="/tmp")


# -- schedule and statistics -----------------------------------------------------------------
def test_schedule_pairs_each_opening_with_both_colours() -> None:
    openings = [Opening(f"fen{k}", (), f"o{k}") for k in range(3)]
    jobs = schedule(2, 5, openings)
    assert [(j.white, j.black, j.opening.label, j.pair) for j in jobs] == [
        (0, 1, "o0", 0),
        (1, 0, "o0", 0),
        (0, 1, "o1", 1),
        (1, 0, "o1", 1),
        (0, 1, "o2", 2),
    ]
    assert [j.number for j in jobs] == [1, 2, 3, 4, 5]


def test_round_robin_schedule() -> None:
    jobs = schedule(3, 2, [START])
    assert [(j.white, j.black) for j in jobs] == [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)]
    assert len({j.pair for j in jobs}) == 3
    assert len(schedule(3, 4, [START])) == 12  # openings wrap around


def test_pair_stats_counts_results_from_the_first_engine_and_pairs() -> None:
    stats = PairStats(0, 1)
    white_win = Outcome("1-0", Termination.NORMAL, "White mates")
    black_win = Outcome("0-1", Termination.NORMAL, "Black mates")
    draw = Outcome(DRAW, Termination.NORMAL, "Draw by stalemate")
    stats.add(GameJob(1, 0, 1, START, 0), white_win)  # engine 0 wins with white
    stats.add(GameJob(2, 1, 0, START, 0), white_win)  # engine 0 loses with black
    stats.add(GameJob(3, 0, 1, START, 1), white_win)  # wins
    stats.add(GameJob(4, 1, 0, START, 1), black_win)  # wins again: pair worth 2
    stats.add(GameJob(5, 0, 1, START, 2), draw)  # a pair still open
    assert (stats.wins, stats.draws, stats.losses) == (3, 1, 1)
    assert stats.ptnml == [0, 0, 1, 0, 1]
    assert stats.score == pytest.approx(0.7)
    assert stats.white_points == pytest.approx(3.5)
    lines = stats.lines(["A", "B"], None)
    assert lines[0] == "A vs B: 5 games, W 3 D 1 L 1, score 70.0%"
    assert lines[1].startswith("Elo difference: +147.2 +/- ")
    assert lines[2].startswith("Ptnml(0-2): [0, 0, 1, 0, 1], pair Elo ")


def test_move_comments_follow_cutechess() -> None:
    assert _move_comment(MoveReply("e2e4", 0.5214, 35, None, 12)) == "+0.35/12 0.521s"
    assert _move_comment(MoveReply("e2e4", 0.1, None, -3, 7)) == "-M3/7 0.100s"
    assert _move_comment(MoveReply("e2e4", 0.1, None, None, None)) == "0.100s"


def test_help_texts_render(capsys: pytest.CaptureFixture[str]) -> None:
    """argparse formats help strings with %: a stray percent sign breaks `brudno --help`."""
    for argv in (["--help"], ["match", "--help"], ["epd", "--help"]):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert "--timemargin MS" in text
    assert "--movetime MS" in text
