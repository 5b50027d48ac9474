"""The match runner's pure parts: time controls, adjudication, the schedule, the statistics of
pairs, the referees (game rules) and the PGN they write.  No engine processes here."""

from __future__ import annotations

import io

import chess.pgn
import pytest

from brudno.arena.match import (
    Adjudicator,
    DrawRule,
    GameJob,
    MatchError,
    MatchSettings,
    PairStats,
    ResignRule,
    TimeControl,
    _move_comment,
    schedule,
)
from brudno.arena.openings import Opening
from brudno.arena.players import EngineConfig, GoLimits, MoveReply
from brudno.arena.referee import (
    DRAW,
    ChessReferee,
    Outcome,
    Termination,
    VariantReferee,
    format_pgn,
)
from brudno.arena.stats import Sprt
from brudno.cli import main

START = Opening(None, (), "start position")


# -- time control ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "base", "inc", "moves", "tag"),
    [
        ("10+0.1", 10_000, 100, None, "10+0.1"),
        ("2+0.02", 2_000, 20, None, "2+0.02"),
        ("40/60", 60_000, 0, 40, "40/60"),
        ("1:30+1", 90_000, 1_000, None, "90+1"),
        ("40/1:00+0.5", 60_000, 500, 40, "40/60+0.5"),
        ("0.5", 500, 0, None, "0.5"),
    ],
)
def test_time_control_parse(text: str, base: int, inc: int, moves: int | None, tag: str) -> None:
    tc = TimeControl.parse(text)
    assert (tc.base_ms, tc.inc_ms, tc.moves) == (base, inc, moves)
    assert tc.text() == tag


@pytest.mark.parametrize("text", ["", "abc", "10+", "0", "0/10", "10++1", "-5+1"])
def test_time_control_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        TimeControl.parse(text)


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


# -- adjudication ----------------------------------------------------------------------------
def test_rule_parsing() -> None:
    assert DrawRule.parse(["movenumber=40", "movecount=8", "score=10"]) == DrawRule(40, 8, 10)
    assert ResignRule.parse(["movecount=3", "score=900"]) == ResignRule(3, 900, False)
    assert ResignRule.parse(["movecount=3", "score=900", "twosided=true"]).twosided
    for bad in (["movenumber=40"], ["movenumber=x", "movecount=1", "score=1"], ["depth=3"]):
        with pytest.raises(ValueError):
            DrawRule.parse(bad)
    with pytest.raises(ValueError):
        ResignRule.parse(["movecount=3", "score=900", "twosided=maybe"])


def reply(cp: int | None = None, mate: int | None = None) -> MoveReply:
    return MoveReply("e2e4", 0.01, cp, mate, 5)


def test_draw_adjudication_needs_both_sides_quiet_for_movecount_moves() -> None:
    judge = Adjudicator(DrawRule(movenumber=10, movecount=2, score=20), None)
    # before move 10 nothing happens, however quiet
    for ply in range(6):
        assert judge.after_move(ply % 2, reply(cp=0), fullmove=5) is None
    judge = Adjudicator(DrawRule(movenumber=10, movecount=2, score=20), None)
    assert judge.after_move(0, reply(cp=5), 12) is None
    assert judge.after_move(1, reply(cp=-25), 12) is None  # outside the band: count restarts
    assert judge.after_move(0, reply(cp=20), 13) is None
    assert judge.after_move(1, reply(cp=-3), 13) is None
    assert judge.after_move(0, reply(cp=0), 14) is None
    outcome = judge.after_move(1, reply(cp=1), 14)
    assert outcome == Outcome(DRAW, Termination.ADJUDICATION, "Draw by adjudication")
    judge = Adjudicator(DrawRule(0, 1, 50), None)
    assert judge.after_move(0, reply(mate=9), 30) is None  # a mate score is never "quiet"
    assert judge.after_move(1, reply(cp=None), 30) is None  # nor is a missing one


def test_resign_adjudication() -> None:
    judge = Adjudicator(None, ResignRule(movecount=2, score=500))
    assert judge.after_move(0, reply(cp=-600), 20) is None
    assert judge.after_move(1, reply(cp=650), 20) is None
    outcome = judge.after_move(0, reply(mate=-4), 21)  # white's second hopeless move
    assert outcome is not None
    assert outcome.result == "0-1"
    assert outcome.termination == Termination.ADJUDICATION
    assert outcome.reason == "Black wins by adjudication"


def test_two_sided_resign_needs_the_winner_to_agree() -> None:
    judge = Adjudicator(None, ResignRule(movecount=1, score=300, twosided=True))
    assert judge.after_move(0, reply(cp=100), 1) is None
    assert judge.after_move(1, reply(cp=-400), 1) is None  # white never claimed +300
    assert judge.after_move(0, reply(cp=350), 2) is None
    outcome = judge.after_move(1, reply(cp=-400), 2)
    assert outcome is not None
    assert outcome.result == "1-0"


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


# -- referees --------------------------------------------------------------------------------
def test_chess_referee_ends_games_by_the_rules() -> None:
    """
    . . . . . . k .
    . . . . . p p p
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    . . . . . . . .
    R . . . . . K .     white to move: Ra8#
    """
    referee = ChessReferee(Opening("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", (), "mate"))
    assert referee.outcome() is None
    assert referee.play("a1a8") == "Ra8#"
    outcome = referee.outcome()
    assert outcome == Outcome("1-0", Termination.NORMAL, "White mates")
    stalemate = ChessReferee(Opening("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", (), "stalemate"))
    assert stalemate.outcome() == Outcome(DRAW, Termination.NORMAL, "Draw by stalemate")
    bare = ChessReferee(Opening("8/8/4k3/8/8/3K4/8/8 w - - 0 1", (), "bare kings"))
    assert bare.outcome() is not None
    assert bare.outcome() == Outcome(
        DRAW, Termination.NORMAL, "Draw by insufficient mating material"
    )
    fifty = ChessReferee(Opening("8/8/4k3/8/8/3K4/8/R7 w - - 99 80", (), "fifty"))
    assert fifty.outcome() is None
    fifty.play("a1a2")
    assert fifty.outcome() == Outcome(DRAW, Termination.NORMAL, "Draw by fifty moves rule")


def test_chess_referee_threefold_repetition_and_illegal_moves() -> None:
    referee = ChessReferee(START)
    for _ in range(2):
        for move in ("g1f3", "g8f6", "f3g1", "f6g8"):
            assert referee.outcome() is None
            referee.play(move)
    outcome = referee.outcome()
    assert outcome is not None
    assert outcome.reason == "Draw by 3-fold repetition"
    with pytest.raises(ValueError):
        referee.play("e2e5")
    with pytest.raises(ValueError):
        referee.play("nonsense")


def test_chess_referee_gives_engines_the_start_and_the_moves() -> None:
    referee = ChessReferee(Opening(None, ("e2e4", "c7c5"), "book"))
    position = referee.position()
    assert position.start_fen is None
    assert list(position.moves) == ["e2e4", "c7c5"]
    assert position.board is referee.board
    assert list(referee.notation()) == ["e4", "c5"]
    assert referee.turn == 0
    assert referee.fullmove == 2


def test_variant_referee_plays_tictactoe_through_the_adapter() -> None:
    """
    . . .
    o o .
    X X .     X to move: c1 completes the first rank
    """
    referee = VariantReferee("tictactoe", Opening("3/pp1/PP1[PPPpp] w - - 0 3", (), "x wins"))
    assert referee.outcome() is None
    assert referee.turn == 0
    assert referee.play("P@c1") == "P@c1"
    assert referee.outcome() == Outcome("1-0", Termination.NORMAL, "White wins")
    with pytest.raises(ValueError):
        VariantReferee("tictactoe", START).play("P@z9")
    full = VariantReferee("tictactoe", START)
    for move in ("b2", "a1", "c1", "a3", "a2", "c2", "b1", "b3", "c3"):
        assert full.outcome() is None
        full.play(move)
    outcome = full.outcome()
    assert outcome is not None
    assert outcome.result == DRAW


# -- PGN -------------------------------------------------------------------------------------
def test_pgn_round_trips_through_python_chess() -> None:
    fen = "r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4"
    referee = ChessReferee(Opening(fen, ("b5a4",), "noob:1"))
    referee.play("g8f6")
    referee.play("e1g1")
    tags = [
        ("Event", "Brudno match"),
        ("Site", "here"),
        ("Date", "2024.01.02"),
        ("Round", "7"),
        ("White", "Brudno"),
        ("Black", "Stockfish 15.1"),
        ("Result", "1-0"),
        ("FEN", fen),
        ("SetUp", "1"),
        ("TimeControl", "10+0.1"),
        ("Termination", Termination.TIME_FORFEIT),
    ]
    text = format_pgn(
        tags, referee, ["book", "-0.25/9 0.120s", "+0.31/11 0.250s"], "1-0", "Black loses on time"
    )
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    assert not game.errors
    assert game.headers["Event"] == "Brudno match"
    assert game.headers["Result"] == "1-0"
    assert game.headers["TimeControl"] == "10+0.1"
    assert game.headers["Termination"] == "time forfeit"
    assert game.board().fen() == fen
    assert [m.uci() for m in game.mainline_moves()] == ["b5a4", "g8f6", "e1g1"]
    comments = [node.comment for node in game.mainline()]
    assert comments == ["book", "-0.25/9 0.120s", "+0.31/11 0.250s Black loses on time"]
    assert "4. Ba4 {book} Nf6" in text
    assert "5. O-O" in text


def test_pgn_escapes_tag_values_as_the_standard_says() -> None:
    text = format_pgn([("Event", 'say "hi" \\o/')], ChessReferee(START), [], "*", None)
    assert text.startswith('[Event "say \\"hi\\" \\\\o/"]\n\n')


def test_pgn_move_numbers_when_black_starts() -> None:
    referee = ChessReferee(Opening("4k3/8/8/8/8/8/4P3/4K3 b - - 0 30", (), "b"))
    referee.play("e8d7")
    referee.play("e2e4")
    text = format_pgn([("Result", "*")], referee, [None, None], "*", None)
    assert text.endswith("30... Kd7 31. e4 *\n")


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
