"""Every line the search reports is playable (issue 18), judged by a referee outside the engine.

Issue 18: a self-play match once failed while formatting a principal variation, because the
PV held a move that was not legal where it stood (quiescence kept a line that an earlier
branch had left one ply deeper).  The invariant here is wider than that one bug: in every
search below, every ``info`` line's PV (exact lines, aspiration bounds, MultiPV lines, the line
of an iteration cut off by a stop), every ``currmove``, and the result's ``bestmove``, PV,
MultiPV lines and ``ponder`` are replayed move by move by a referee that shares no code with
the engine: python-chess for chess, and for the other games a fresh game built from the root
position's text, asked for its own legal moves.

The positions: openings from ``shared/data/chess/openings`` followed by random playouts
(some preferring captures, to reach endgames; some shuffling pieces back and forth, so the
root repeats a position of its history), random sparse endgames, random positions of every
other variant, and a few thousand moves of self-play carrying the game's history through one
1 MiB table.  Searches end by node limits and stops (the engine's poll sees the stop at an
arbitrary node), and a clock that advances on every reading makes them "long", so aspiration
bounds and ``currmove`` are reported too.  Hypothesis runs derandomized: CI sees the same
examples every time.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import chess
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engine.control import SearchControl
from engine.game import Game
from engine.info import Bound, SearchInfo, SearchResult
from engine.limits import Limits
from engine.search import Searcher
from games.registry import GAMES
from tests.support.paths import DATA

OPENINGS = DATA / "chess" / "openings"
OPENING_FILES = ("UHO_4060_v4_every48th.epd", "noob_3moves_every30th.epd")
OTHER_VARIANTS = sorted(name for name in GAMES if name != "chess")


def examples(n: int) -> settings:
    """Hypothesis settings for ``n`` examples: derandomized (CI sees the same examples every
    run), no deadline (a search's time varies with the machine), no example database."""
    return settings(
        max_examples=n,
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


# -- the referee -------------------------------------------------------------------------------


@functools.cache
def opening_fens() -> tuple[str, ...]:
    """The chess opening positions, read from the shared data (never copied)."""
    fens: list[str] = []
    for name in OPENING_FILES:
        path = OPENINGS / name
        if not path.is_file():
            pytest.fail(f"test data missing: {path}")
        for line in path.read_text(encoding="utf-8").splitlines():
            fields = line.split()
            if len(fields) >= 6 and fields[4].isdigit() and fields[5].isdigit():
                fens.append(chess.Board(" ".join(fields[:6])).fen())  # a FEN
            elif fields:
                fens.append(chess.Board.from_epd(line)[0].fen())  # an EPD line
    return tuple(fens)


@dataclass(frozen=True, slots=True)
class Position:
    """A start position's text in the variant's dialect and the moves played from it: the
    engine's game is built by pushing them, so it carries the history (repetitions)."""

    variant: str
    start: str
    history: tuple[str, ...] = ()

    def game(self) -> Game[Any]:
        game = GAMES[self.variant].new(self.start)
        for text in self.history:
            game.push(game.parse_move(text))
        return game

    def then(self, *moves: str) -> Position:
        return Position(self.variant, self.start, self.history + moves)


class Referee:
    """Judges move texts from one root position without the engine's move generator
    (python-chess) or, for the other games, with a fresh game built from the root's text."""

    def __init__(self, variant: str, root: str | chess.Board) -> None:
        self.variant = variant
        self._board = root.copy() if isinstance(root, chess.Board) else None
        self._root_text = root.fen() if isinstance(root, chess.Board) else root

    @classmethod
    def for_position(cls, position: Position) -> Referee:
        if position.variant != "chess":
            return cls(position.variant, position.game().fen())
        board = chess.Board(position.start)
        for text in position.history:
            move = chess.Move.from_uci(text)
            assert move in board.legal_moves, f"bad test history: {text} in {board.fen()}"
            board.push(move)
        return cls("chess", board)

    @property
    def board(self) -> chess.Board | None:
        """The root position with its history (chess only), for a caller that plays on."""
        return None if self._board is None else self._board.copy()

    def root_moves(self) -> set[str]:
        if self._board is not None:
            return {move.uci() for move in self._board.legal_moves}
        game = GAMES[self.variant].new(self._root_text)
        return {game.format_move(move) for move in game.legal_moves()}

    def check(self, line: Sequence[str], what: str) -> None:
        """Every move of ``line`` is legal where it stands (the test fails, naming the move,
        the line and the root, if not)."""
        if self._board is not None:
            board = self._board.copy(stack=False)
            for i, text in enumerate(line):
                try:
                    move = chess.Move.from_uci(text)
                except ValueError:
                    move = chess.Move.null()
                if move not in board.legal_moves:
                    self._fail(line, i, what)
                board.push(move)
            return
        game = GAMES[self.variant].new(self._root_text)
        for i, text in enumerate(line):
            legal = {game.format_move(move): move for move in game.legal_moves()}
            if text not in legal:
                self._fail(line, i, what)
            assert game.parse_move(text) == legal[text]
            game.push(legal[text])

    def _fail(self, line: Sequence[str], i: int, what: str) -> None:
        pytest.fail(
            f"{what}: move {i + 1} ({line[i]}) of the line {' '.join(line)} is not legal "
            f"({self.variant} root {self._root_text})"
        )


class Watcher:
    """The ``on_info`` callback: checks each report as it arrives, then the result."""

    def __init__(self, referee: Referee, *, multipv: int = 1, limits: Limits | None = None) -> None:
        self.referee = referee
        self.multipv = multipv
        self.root = referee.root_moves()
        allowed = self.root & set((limits and limits.searchmoves) or ())
        self.allowed = allowed or self.root  # no legal move named: every move is searched
        self.lines = 0
        self.bounds = 0
        self.currmoves = 0
        self.then: Callable[[SearchInfo], None] | None = None

    def __call__(self, info: SearchInfo) -> None:
        if info.currmove is not None:
            self.currmoves += 1
            assert info.currmove in self.allowed, f"currmove {info.currmove} not searchable"
        if info.pv:
            self.lines += 1
            self.bounds += info.bound is not Bound.EXACT
            what = f"info depth {info.depth} multipv {info.multipv} {info.bound.value}"
            self.referee.check(info.pv, what)
            assert info.pv[0] in self.allowed, f"{what}: {info.pv[0]} is not in searchmoves"
            assert 1 <= info.multipv <= self.multipv
        if self.then is not None:
            self.then(info)

    def check_result(self, result: SearchResult) -> None:
        if not self.root:
            assert result.best is None and result.ponder is None and not result.pv
            return
        assert result.best in self.allowed, f"bestmove {result.best} is not playable here"
        self.referee.check(result.pv, "result pv")
        if result.pv:
            assert result.pv[0] == result.best
        if result.ponder is not None:
            self.referee.check((result.best, result.ponder), "bestmove + ponder")
            if len(result.pv) > 1:
                assert result.ponder == result.pv[1]
        firsts = []
        for line in result.lines:
            self.referee.check(line.pv, f"result multipv {line.multipv}")
            firsts.append(line.pv[0])
        assert len(set(firsts)) == len(firsts)
        assert len(firsts) <= self.multipv


class FakeClock:
    """Advances ``step`` seconds per reading: a search of a few thousand nodes looks like
    seconds to the driver, which then reports aspiration bounds and ``currmove``."""

    def __init__(self, step: float) -> None:
        self.now = 1000.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class StopAfterPolls(SearchControl):
    """A ``stop`` that the search sees at its ``polls``-th look at the control: somewhere in
    the middle of an iteration, a MultiPV line or an aspiration re-search."""

    __slots__ = ("_polls",)

    def __init__(self, polls: int, *, pondering: bool = False) -> None:
        super().__init__(pondering=pondering)
        self._polls = polls

    @property
    def stopped(self) -> bool:
        if not super().stopped:
            self._polls -= 1
            if self._polls < 0:
                self.stop()
        return super().stopped


def judged(
    searcher: Searcher,
    game: Game[Any],
    watcher: Watcher,
    limits: Limits,
    control: SearchControl | None = None,
) -> SearchResult:
    """Search ``game`` with every report and the result judged by ``watcher``; the game must
    come back untouched."""
    before = game.fen()
    result = searcher.search(
        game, limits, control=control, on_info=watcher, multipv=watcher.multipv
    )
    watcher.check_result(result)
    assert game.fen() == before
    return result


def checked_search(
    searcher: Searcher,
    position: Position,
    limits: Limits,
    *,
    multipv: int = 1,
    control: SearchControl | None = None,
) -> tuple[SearchResult, Watcher]:
    watcher = Watcher(Referee.for_position(position), multipv=multipv, limits=limits)
    return judged(searcher, position.game(), watcher, limits, control), watcher


# -- positions ---------------------------------------------------------------------------------


def _reversible(board: chess.Board, move: chess.Move) -> bool:
    return not (
        board.is_capture(move)
        or board.is_castling(move)
        or move.promotion
        or board.piece_type_at(move.from_square) == chess.PAWN
    )


def chess_playout(start: str, choices: Sequence[int], *, captures: bool, shuffles: int) -> Position:
    """``start``, then one move per choice (an index into the sorted legal moves; captures
    only, while there are some, when ``captures``), then ``shuffles`` rounds of a reversible
    move by each side and both taken back: the round's first position occurs again."""
    board = chess.Board(start)
    played: list[str] = []
    for choice in choices:
        moves = sorted(board.legal_moves, key=chess.Move.uci)
        if not moves:
            break
        taking = [m for m in moves if board.is_capture(m)] if captures else []
        move = (taking or moves)[choice % len(taking or moves)]
        board.push(move)
        played.append(move.uci())
    for round_ in range(shuffles):
        forward: list[chess.Move] = []
        for k in range(2):
            quiet = [
                m for m in sorted(board.legal_moves, key=chess.Move.uci) if _reversible(board, m)
            ]
            if not quiet:
                break
            move = quiet[(round_ * 7 + k * 3 + len(played)) % len(quiet)]
            board.push(move)
            played.append(move.uci())
            forward.append(move)
        for move in forward:
            back = chess.Move(move.to_square, move.from_square)
            if back not in board.legal_moves:
                break
            board.push(back)
            played.append(back.uci())
    return Position("chess", start, tuple(played))


@st.composite
def chess_positions(draw: st.DrawFn) -> Position:
    """An opening, a random playout (some to the endgame) and maybe repetitions."""
    fens = opening_fens()
    start = fens[draw(st.integers(min_value=0, max_value=len(fens) - 1))]
    choices = draw(st.lists(st.integers(min_value=0, max_value=9999), max_size=100))
    captures = draw(st.booleans())
    shuffles = draw(st.integers(min_value=0, max_value=2))
    return chess_playout(start, choices, captures=captures, shuffles=shuffles)


SPARSE_PIECES = "QRRBBNNPPP"


@st.composite
def sparse_positions(draw: st.DrawFn) -> Position:
    """Kings and a few random pieces on random squares: endgames where captures soon leave
    insufficient material and checks soon repeat positions."""
    squares = draw(
        st.lists(st.integers(min_value=0, max_value=63), min_size=9, max_size=9, unique=True)
    )
    pieces = draw(st.lists(st.sampled_from(SPARSE_PIECES), min_size=7, max_size=7))
    colours = draw(st.lists(st.booleans(), min_size=7, max_size=7))
    count = draw(st.integers(min_value=1, max_value=7))
    board = chess.Board(None)
    board.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
    board.set_piece_at(squares[1], chess.Piece(chess.KING, chess.BLACK))
    for square, symbol, white in zip(squares[2 : 2 + count], pieces, colours, strict=False):
        kind = "N" if symbol == "P" and chess.square_rank(square) in (0, 7) else symbol
        board.set_piece_at(square, chess.Piece.from_symbol(kind if white else kind.lower()))
    board.turn = draw(st.booleans())
    if not board.is_valid():
        board.turn = not board.turn  # the side not to move was in check
    if not board.is_valid():
        board.set_piece_at(squares[1], None)
        board.set_piece_at(squares[8], chess.Piece(chess.KING, chess.BLACK))
    assume(board.is_valid())
    return Position("chess", board.fen())


@st.composite
def variant_positions(draw: st.DrawFn, variant: str) -> Position:
    """A random playout from the start (for Grundy's game, from a random heap)."""
    spec = GAMES[variant]
    start = spec.start_fen
    if variant == "grundy":
        start = f"{draw(st.integers(min_value=3, max_value=40))} w 1"
    game = spec.new(start)
    played: list[str] = []
    for choice in draw(st.lists(st.integers(min_value=0, max_value=9999), max_size=40)):
        if game.is_terminal():
            break
        moves = sorted(game.format_move(m) for m in game.legal_moves())
        if not moves:
            break
        text = moves[choice % len(moves)]
        game.push(game.parse_move(text))
        played.append(text)
    return Position(variant, start, tuple(played))


def searchmoves_for(data: st.DataObject, position: Position) -> tuple[str, ...] | None:
    """None (all moves), or some root moves, sometimes with junk the driver must skip."""
    if not data.draw(st.booleans()):
        return None
    moves = sorted(Referee.for_position(position).root_moves())
    junk = data.draw(st.sampled_from(((), ("0000",), ("zz9",))))
    if not moves:
        return junk or None
    chosen = data.draw(st.lists(st.sampled_from(moves), min_size=1, max_size=4, unique=True))
    return (*junk, *chosen)


# -- the searches ------------------------------------------------------------------------------


@examples(100)
@given(
    position=st.one_of(chess_positions(), sparse_positions()),
    nodes=st.integers(min_value=100, max_value=5000),
    multipv=st.integers(min_value=1, max_value=4),
    step=st.sampled_from((0.0, 0.004, 0.05)),
    data=st.data(),
)
def test_every_reported_chess_line_is_playable(
    position: Position, nodes: int, multipv: int, step: float, data: st.DataObject
) -> None:
    searchmoves = searchmoves_for(data, position)
    limits = Limits(nodes=nodes, searchmoves=searchmoves)
    searcher = Searcher(1, clock=FakeClock(step))
    checked_search(searcher, position, limits, multipv=multipv)


@pytest.mark.parametrize("variant", OTHER_VARIANTS)
@examples(40)
@given(
    nodes=st.integers(min_value=1, max_value=3000),
    multipv=st.integers(min_value=1, max_value=4),
    step=st.sampled_from((0.0, 0.05)),
    data=st.data(),
)
def test_every_reported_line_is_playable_in_every_other_variant(
    variant: str, nodes: int, multipv: int, step: float, data: st.DataObject
) -> None:
    position = data.draw(variant_positions(variant))
    limits = Limits(nodes=nodes, searchmoves=searchmoves_for(data, position))
    checked_search(Searcher(1, clock=FakeClock(step)), position, limits, multipv=multipv)


@examples(80)
@given(
    position=st.one_of(chess_positions(), sparse_positions()),
    polls=st.integers(min_value=0, max_value=12),
    multipv=st.integers(min_value=1, max_value=4),
    step=st.sampled_from((0.0, 0.004, 0.05)),
    data=st.data(),
)
def test_lines_stay_playable_when_a_stop_cuts_an_iteration_short(
    position: Position, polls: int, multipv: int, step: float, data: st.DataObject
) -> None:
    """The stop lands at any poll: between iterations, in a MultiPV line, in an aspiration
    re-search; the reported root improvement and the result must still be playable."""
    limits = Limits(infinite=True, searchmoves=searchmoves_for(data, position))
    control = StopAfterPolls(polls)
    checked_search(
        Searcher(1, clock=FakeClock(step)), position, limits, multipv=multipv, control=control
    )


@pytest.mark.parametrize("variant", OTHER_VARIANTS)
@examples(25)
@given(polls=st.integers(min_value=0, max_value=20), data=st.data())
def test_lines_stay_playable_when_a_stop_cuts_an_iteration_short_in_every_other_variant(
    variant: str, polls: int, data: st.DataObject
) -> None:
    position = data.draw(variant_positions(variant))
    control = StopAfterPolls(polls)
    checked_search(
        Searcher(1, clock=FakeClock(0.01)), position, Limits(infinite=True), control=control
    )


@examples(40)
@given(
    position=st.one_of(chess_positions(), sparse_positions()),
    nodes=st.integers(min_value=1, max_value=3000),
    hit_after=st.integers(min_value=0, max_value=6),
)
def test_the_ponder_move_is_legal_after_bestmove_and_pondering_reports_playable_lines(
    position: Position, nodes: int, hit_after: int
) -> None:
    searcher = Searcher(1, clock=FakeClock(0.004))
    result, _ = checked_search(searcher, position, Limits(nodes=nodes))
    if result.best is None or result.ponder is None:
        return
    # The GUI plays bestmove and lets the engine ponder on the expected reply.
    pondered = position.then(result.best, result.ponder)
    control = SearchControl(pondering=True)
    seen = [0]

    def ponderhit_later(_info: SearchInfo) -> None:
        seen[0] += 1
        if seen[0] == hit_after and control.pondering:
            control.ponderhit()

    limits = Limits(ponder=True, wtime=5000, btime=5000, nodes=nodes)
    watcher = Watcher(Referee.for_position(pondered), limits=limits)
    watcher.then = ponderhit_later
    judged(searcher, pondered.game(), watcher, limits, control)


# -- regressions: the positions that showed issue 18 -----------------------------------------

GAME_ENDS_IN_QUIESCENCE = (
    # Before the fix each of these reported a line with a move that is not legal where it
    # stands (chess: IllegalMoveError "no piece of the side to move" while formatting it) by
    # depth 4: a node in quiescence found the game over (a completed line; a capture leaving
    # insufficient material) and returned before clearing its line, and its parent appended
    # the line an earlier branch had left at that ply.
    Position("tictactoe", "3/3/3[PPPPPpppp] w - - 0 1", ("P@b3", "P@a1")),
    Position("cfour", "p1PpP2/p1PPp2/P1pPP2/p1pPp1p/PpppP1P/pPPPpPp[PPPPPPpppppp] w - - 0 16"),
    Position("chess", "1B5K/8/2k5/8/8/8/6p1/8 w - - 0 1"),
    Position("chess", "4B3/3N4/8/4k3/8/4r3/8/K7 b - - 0 1"),
    Position("chess", "8/8/4n1K1/8/4k3/B7/8/8 w - - 0 1"),
    Position("chess", "B7/4P3/4k3/3R4/4b3/5b2/8/2K5 b - - 0 1"),
    # After a history of quiet moves (a random playout found it): queens and rooks come off
    # in quiescence, down to two bare kings.
    Position(
        "chess",
        "K5r1/P7/4k3/8/8/8/4q3/6R1 w - - 0 1",
        ("a8b7", "e2h5", "b7a6", "g8b8", "g1f1", "h5g4", "f1f6", "e6e7"),
    ),
)


@pytest.mark.parametrize(
    "position", GAME_ENDS_IN_QUIESCENCE, ids=lambda p: f"{p.variant}-{p.start.split()[0]}"
)
@pytest.mark.parametrize("multipv", [1, 3])
def test_a_game_that_ends_inside_quiescence_ends_the_reported_line(
    position: Position, multipv: int
) -> None:
    _, watcher = checked_search(
        Searcher(1, clock=FakeClock(0.01)), position, Limits(depth=5), multipv=multipv
    )
    assert watcher.lines >= multipv


# -- a small table, a long game --------------------------------------------------------------


def test_a_one_mib_table_reused_through_repetitions_never_yields_an_unplayable_line() -> None:
    """Long searches in positions whose history repeats, through one 1 MiB table (48,634
    slots, and twice as many nodes searched): entries collide and are replaced, and a
    repeated position is a draw in search."""
    searcher = Searcher(1, clock=FakeClock(0.02))
    rng = random.Random(18)
    fens = opening_fens()
    searched = 0
    bounds = currmoves = 0
    for k in range(5):
        choices = [rng.randrange(10000) for _ in range(rng.randrange(20, 90))]
        position = chess_playout(
            fens[rng.randrange(len(fens))], choices, captures=k % 2 == 1, shuffles=2
        )
        result, watcher = checked_search(
            searcher, position, Limits(nodes=14_000), multipv=1 + k % 3
        )
        searched += result.nodes
        bounds += watcher.bounds
        currmoves += watcher.currmoves
        if result.best is not None:
            # The same game one move on: the table is full of the previous search's entries.
            position = position.then(result.best)
            result, _ = checked_search(searcher, position, Limits(nodes=6_000))
            searched += result.nodes
    assert searched > 2 * searcher.tt.entries
    assert bounds and currmoves  # long searches report those too, and they were judged


def self_play(
    searcher: Searcher, position: Position, rng: random.Random, *, plies: int, max_plies: int
) -> int:
    """Play the engine against itself from ``position`` (small, varied node limits, now and
    then MultiPV, searchmoves or a stop in the middle), judging every search; returns the
    plies played."""
    game = position.game()
    board = Referee.for_position(position).board
    played = 0
    while played < min(plies, max_plies):
        referee = Referee(position.variant, board if board is not None else game.fen())
        if not referee.root_moves():
            break
        if board is not None and (
            board.is_game_over() or board.is_repetition(3) or board.halfmove_clock >= 100
        ):
            break
        if board is None and game.is_terminal():
            break
        multipv = rng.choice((1, 1, 1, 1, 2, 3))
        searchmoves = None
        if rng.random() < 0.05:
            searchmoves = tuple(rng.sample(sorted(referee.root_moves()), 1))
        control = StopAfterPolls(rng.randrange(8)) if rng.random() < 0.1 else None
        limits = Limits(nodes=rng.randrange(20, 220), searchmoves=searchmoves)
        watcher = Watcher(referee, multipv=multipv, limits=limits)
        result = judged(searcher, game, watcher, limits, control)
        assert result.best is not None
        game.push(game.parse_move(result.best))
        if board is not None:
            board.push(chess.Move.from_uci(result.best))
        position = position.then(result.best)
        played += 1
    return played


def test_thousands_of_self_play_moves_report_only_playable_lines() -> None:
    """One engine (one 1 MiB table, never cleared) plays itself from openings, carrying each
    game's history, so repetitions and 50-move counts are the game's, as in a match."""
    rng = random.Random(1018)
    searcher = Searcher(1, clock=FakeClock(0.001))
    fens = opening_fens()
    total = 0
    games = 0
    while total < 3000:
        start = Position("chess", fens[rng.randrange(len(fens))])
        played = self_play(searcher, start, rng, plies=3000 - total, max_plies=240)
        assert played > 0
        total += played
        games += 1
    assert games >= 12


@pytest.mark.parametrize("variant", OTHER_VARIANTS)
def test_self_play_reports_only_playable_lines_in_every_other_variant(variant: str) -> None:
    rng = random.Random(18)
    searcher = Searcher(1, clock=FakeClock(0.001))
    total = 0
    while total < 150:
        start = GAMES[variant].start_fen
        if variant == "grundy":
            start = f"{rng.randrange(8, 40)} w 1"
        played = self_play(searcher, Position(variant, start), rng, plies=150 - total, max_plies=60)
        assert played > 0
        total += played
