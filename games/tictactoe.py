"""Tic-tac-toe on native bitboards, in the notation cutechess and Fairy-Stockfish use.

The position is two 9-bit masks, one per player, with bit ``rank * 3 + file`` (a1 = 0, b1 = 1,
c1 = 2, a2 = 3, ..., c3 = 8); a move is that square index.  X moves first and is *white*,
dropping ``P``; O is *black*, dropping ``p``.  The variant is ``tictactoe`` in both programs, so
the FEN dialect is theirs: ``3/3/3[PPPPPpppp] w - - 0 1`` (ranks 3..1, pockets in brackets
holding the marks still in hand, white's first), and moves are drops ``P@b2`` (UCI drop
notation writes the piece upper-case for both sides).

Why the masks are kept *side-relative* (``_own`` = side to move, ``_opp`` = the player who just
moved) rather than as X and O: every question the search asks (did my opponent just win, which
squares win for me, how good is this for me) is asked from the side to move's point of view, so
``push`` swaps the two masks and nothing on the hot path branches on the colour.

Everything that depends on a single 9-bit mask (does it hold a line, which squares would
complete one, how many lines does it leave open) is precomputed into 512-entry tables at import,
so move generation, the terminal test and the static evaluation are a few table look-ups.

Since every mark stays where it is dropped, the board alone determines the side to move (X has
as many marks as O, or one more), the ply (the number of marks) and both FEN counters (the
halfmove clock is always 0 because every move is a pawn drop).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from engine.eval import LinearEvaluator
from engine.game import GameError, IllegalMoveError, InvalidPositionError
from games.drop_fen import (
    FEN_FIELDS,
    MIN_FEN_FIELDS,
    board_text,
    check_pocket,
    check_trailing_fields,
    parse_board,
    split_placement,
)
from games.variant import Variant

if TYPE_CHECKING:
    from engine.game import Game

__all__ = [
    "DEFAULT_WEIGHTS",
    "LINES",
    "START_FEN",
    "VARIANT",
    "TicTacToe",
    "from_fen",
    "square_name",
]

START_FEN: Final = "3/3/3[PPPPPpppp] w - - 0 1"

DEFAULT_WEIGHTS: Final[dict[str, float]] = {
    "open_lines": 10,
    "threats": 30,
    "center": 5,
}
"""Feature weights (side to move's view).  A threat (two marks and a free third square) is
worth three open lines: it forces a reply.  The centre lies on four lines, hence the bonus."""

_X_MARKS: Final = 5
"""X moves first on a 9-square board, so it places at most five marks and O at most four."""
_O_MARKS: Final = 4
_FULL: Final = 0x1FF
_CENTER: Final = 4
_THREAT_MARKS: Final = 2
"""A line with this many of a player's marks and the other square empty is a threat."""

_FILES: Final = "abc"
_SQUARE_NAMES: Final = tuple(f"{_FILES[sq % 3]}{sq // 3 + 1}" for sq in range(9))
_SQUARE_OF: Final = {name: sq for sq, name in enumerate(_SQUARE_NAMES)}
_MOVE_TEXT: Final = tuple(f"P@{name}" for name in _SQUARE_NAMES)


def _mask(*squares: int) -> int:
    mask = 0
    for sq in squares:
        mask |= 1 << sq
    return mask


LINES: Final[tuple[int, ...]] = (
    _mask(0, 1, 2),
    _mask(3, 4, 5),
    _mask(6, 7, 8),
    _mask(0, 3, 6),
    _mask(1, 4, 7),
    _mask(2, 5, 8),
    _mask(0, 4, 8),
    _mask(2, 4, 6),
)
"""The eight winning lines as square masks: ranks, files, then the two diagonals."""

_MOVE_ORDER: Final = (4, 0, 2, 6, 8, 1, 3, 5, 7)
"""Centre, corners, edges: the order of how many lines a square lies on (4, 3, 2).  The move
lists come out in this order, so a search without further ordering tries the strong moves
first; perft and every set-based check are indifferent to it."""


def _build_tables() -> tuple[
    tuple[bool, ...],
    tuple[int, ...],
    tuple[int, ...],
    tuple[tuple[int, ...], ...],
    tuple[tuple[int, ...], ...],
]:
    """Per-mask tables, indexed by a 9-bit mask ``m``:

    * ``has_line[m]``: ``m`` contains a complete line;
    * ``open_for_other[m]``: lines with no square in ``m``, i.e. still open to the other player;
    * ``win_squares[m]``: squares outside ``m`` that would complete a line of ``m``;
    * ``threat_gaps[m]``: for each line with exactly two squares in ``m``, the bit of its third
      square (one entry per line, so a fork square appears twice); such a line is a threat
      unless the other player holds that square;
    * ``moves[m]``: the squares of ``m`` in move order, for turning an empty-square mask into
      a move list.
    """
    has_line: list[bool] = []
    open_for_other: list[int] = []
    win_squares: list[int] = []
    threat_gaps: list[tuple[int, ...]] = []
    moves: list[tuple[int, ...]] = []
    for m in range(512):
        has_line.append(any(m & line == line for line in LINES))
        open_for_other.append(sum(1 for line in LINES if not m & line))
        gaps = tuple(line & ~m for line in LINES if (m & line).bit_count() == _THREAT_MARKS)
        threat_gaps.append(gaps)
        wins = 0
        for gap in gaps:
            wins |= gap
        win_squares.append(wins)
        moves.append(tuple(sq for sq in _MOVE_ORDER if m >> sq & 1))
    return (
        tuple(has_line),
        tuple(open_for_other),
        tuple(win_squares),
        tuple(threat_gaps),
        tuple(moves),
    )


_HAS_LINE, _OPEN_FOR_OTHER, _WIN_SQUARES, _THREAT_GAPS, _MOVES = _build_tables()


def square_name(square: int) -> str:
    """``0`` → ``"a1"`` ... ``8`` → ``"c3"``."""
    return _SQUARE_NAMES[square]


def _position_problem(x: int, o: int) -> str | None:
    """Why the marks ``x`` (X) and ``o`` (O) cannot arise in a game, or None when they can.

    These conditions are exactly reachability: with alternating turns, X holding as many marks
    as O or one more, and at most the player who just moved holding a line, some move order
    reaches the position (its last move lies on the winner's line(s)).  The tests check this
    against the 5,478 positions of the game tree.
    """
    if x & ~_FULL or o & ~_FULL:
        return "marks outside the 3x3 board"
    if x & o:
        return "a square holds both X and O"
    nx = x.bit_count()
    no = o.bit_count()
    if nx not in (no, no + 1):
        return (
            f"X has {nx} marks and O has {no}: X moves first and the players alternate, "
            "so X must have as many marks as O or one more"
        )
    return _line_problem(_HAS_LINE[x], _HAS_LINE[o], x_moved_last=nx > no)


def _line_problem(x_line: bool, o_line: bool, *, x_moved_last: bool) -> str | None:
    """Why completed lines cannot stand with the given player having moved last, or None."""
    if x_line and o_line:
        return "both X and O have a completed line"
    if x_line and not x_moved_last:
        return "X has a completed line but O moved after it"
    if o_line and x_moved_last:
        return "O has a completed line but X moved after it"
    return None


class TicTacToe:
    """A tic-tac-toe position with make/unmake (``engine.game.Game[int]``)."""

    __slots__ = ("_evaluator", "_opp", "_own", "_side", "_stack")

    variant: str = "tictactoe"

    def __init__(self, x: int = 0, o: int = 0, *, evaluator: LinearEvaluator | None = None) -> None:
        """The position with X's marks ``x`` and O's marks ``o`` (9-bit masks); empty by
        default.  The side to move follows from the mark counts.  Raises
        InvalidPositionError for a position no game reaches."""
        problem = _position_problem(x, o)
        if problem is not None:
            raise InvalidPositionError(f"{problem} ({_board_text(x, o)})")
        side = x.bit_count() - o.bit_count()
        self._side = side
        self._own, self._opp = (o, x) if side else (x, o)
        self._stack: list[int] = []
        self._evaluator = _DEFAULT_EVALUATOR if evaluator is None else evaluator

    # -- moves ---------------------------------------------------------------------------
    def legal_moves(self) -> list[int]:
        own = self._own
        opp = self._opp
        if _HAS_LINE[opp]:
            return []
        return list(_MOVES[_FULL & ~(own | opp)])

    def noisy_moves(self) -> list[int]:
        """Immediate wins, then blocks of the opponent's immediate wins (a square that does
        both counts as a win)."""
        own = self._own
        opp = self._opp
        if _HAS_LINE[opp]:
            return []
        empty = _FULL & ~(own | opp)
        wins = _WIN_SQUARES[own] & empty
        blocks = _WIN_SQUARES[opp] & empty & ~wins
        if not wins | blocks:
            return []
        return list(_MOVES[wins] + _MOVES[blocks])

    def quiet_moves(self) -> list[int]:
        own = self._own
        opp = self._opp
        if _HAS_LINE[opp]:
            return []
        empty = _FULL & ~(own | opp)
        return list(_MOVES[empty & ~(_WIN_SQUARES[own] | _WIN_SQUARES[opp])])

    def is_noisy(self, move: int) -> bool:
        own = self._own
        opp = self._opp
        if _HAS_LINE[opp]:
            return False
        bit = 1 << move
        return bool(bit & (_WIN_SQUARES[own] | _WIN_SQUARES[opp]) and not bit & (own | opp))

    def push(self, move: int) -> None:
        # The mover's mask (with the new mark) becomes the "opponent" of the next side.
        self._own, self._opp = self._opp, self._own | 1 << move
        self._side ^= 1
        self._stack.append(move)

    def pop(self) -> None:
        """Undo the last push (IndexError, state unchanged, when there is none)."""
        move = self._stack.pop()
        self._own, self._opp = self._opp & ~(1 << move), self._own
        self._side ^= 1

    def can_null_move(self) -> bool:
        """Never: passing is not a move in tic-tac-toe, and a pass would corrupt the mark
        counts from which the side to move is derived."""
        return False

    def push_null(self) -> None:
        raise GameError("tic-tac-toe has no null move")

    # -- state ---------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        """The player who just moved has a line, or the board is full."""
        opp = self._opp
        return _HAS_LINE[opp] or self._own | opp == _FULL

    def terminal_value(self) -> int:
        """-1 when the opponent has just completed a line; 0 otherwise (a full board is a
        draw; for an unfinished game the value is meaningless and 0)."""
        return -1 if _HAS_LINE[self._opp] else 0

    def in_check(self) -> bool:
        return False

    def key(self) -> int:
        """``x | o << 9 | side << 18``: the whole position, so no two positions collide."""
        side = self._side
        if side:
            return self._opp | self._own << 9 | 1 << 18
        return self._own | self._opp << 9

    @property
    def side(self) -> int:
        return self._side

    @property
    def ply(self) -> int:
        """The number of marks: every ply adds one and none is ever removed."""
        return (self._own | self._opp).bit_count()

    @property
    def x(self) -> int:
        """X's marks as a 9-bit mask."""
        return self._opp if self._side else self._own

    @property
    def o(self) -> int:
        """O's marks as a 9-bit mask."""
        return self._own if self._side else self._opp

    @property
    def moves_played(self) -> tuple[int, ...]:
        """The moves pushed since this object was built from a position, oldest first."""
        return tuple(self._stack)

    # -- evaluation ----------------------------------------------------------------------
    @property
    def evaluator(self) -> LinearEvaluator:
        return self._evaluator

    def features(self) -> dict[str, float]:
        """The features by their definitions, line by line, side to move's view.

        * ``open_lines``: lines with no opposing mark, mine minus the opponent's;
        * ``threats``: lines with two of my marks and an empty third square, mine minus the
          opponent's (a fork counts twice);
        * ``center``: +1 when I hold b2, -1 when the opponent does, 0 when it is empty.

        Written plainly on purpose: :meth:`evaluate` computes the same numbers from tables,
        and the tests check the two against each other on every reachable position.
        """
        own = self._own
        opp = self._opp
        open_lines = 0
        threats = 0
        for line in LINES:
            mine = (own & line).bit_count()
            theirs = (opp & line).bit_count()
            if theirs == 0:
                open_lines += 1
                if mine == _THREAT_MARKS:
                    threats += 1
            if mine == 0:
                open_lines -= 1
                if theirs == _THREAT_MARKS:
                    threats -= 1
        center = 1 if own >> _CENTER & 1 else -1 if opp >> _CENTER & 1 else 0
        return {"open_lines": open_lines, "threats": threats, "center": center}

    def evaluate(self) -> int:
        """``evaluator.evaluate(features())`` from the per-mask tables.  The products are
        summed in the features' order so that float weights round identically."""
        own = self._own
        opp = self._opp
        open_lines = _OPEN_FOR_OTHER[opp] - _OPEN_FOR_OTHER[own]
        threats = 0
        for gap in _THREAT_GAPS[own]:
            if not gap & opp:
                threats += 1
        for gap in _THREAT_GAPS[opp]:
            if not gap & own:
                threats -= 1
        center = (own >> _CENTER & 1) - (opp >> _CENTER & 1)
        get = self._evaluator.weights.get
        return round(
            get("open_lines", 0.0) * open_lines
            + get("threats", 0.0) * threats
            + get("center", 0.0) * center
        )

    # -- notation ------------------------------------------------------------------------
    def parse_move(self, text: str) -> int:
        """``P@b2`` (UCI drop notation) or plain ``b2``; IllegalMoveError unless legal."""
        name = text[2:] if text.startswith("P@") else text
        square = _SQUARE_OF.get(name)
        if square is None:
            raise IllegalMoveError(
                f"not a tic-tac-toe move: expected a drop such as P@b2 or a square a1..c3 ({text})"
            )
        if _HAS_LINE[self._opp]:
            raise IllegalMoveError(f"the game is over: {_COLOUR[self._side ^ 1]} won ({text})")
        if (self._own | self._opp) >> square & 1:
            raise IllegalMoveError(f"square {name} is already taken ({text})")
        return square

    def move_code(self, move: int) -> int:
        """The square plus one (0 means "no move")."""
        return move + 1

    def code_move(self, code: int) -> int:
        return code - 1

    def format_move(self, move: int) -> str:
        return _MOVE_TEXT[move]

    def fen(self) -> str:
        x = self.x
        o = self.o
        pocket = "P" * (_X_MARKS - x.bit_count()) + "p" * (_O_MARKS - o.bit_count())
        side = "b" if self._side else "w"
        fullmove = 1 + self.ply // 2
        return f"{_board_text(x, o)}[{pocket}] {side} - - 0 {fullmove}"

    def display(self) -> str:
        x = self.x
        o = self.o
        rows = []
        for rank in (2, 1, 0):
            cells = []
            for file in range(3):
                sq = rank * 3 + file
                cells.append("X" if x >> sq & 1 else "O" if o >> sq & 1 else ".")
            rows.append(f"{rank + 1}  {' '.join(cells)}")
        rows.append(f"   {' '.join(_FILES)}")
        rows.append(f"Fen: {self.fen()}")
        return "\n".join(rows)

    def copy(self) -> TicTacToe:
        clone = object.__new__(TicTacToe)
        clone._own = self._own
        clone._opp = self._opp
        clone._side = self._side
        clone._stack = self._stack.copy()
        clone._evaluator = self._evaluator
        return clone

    def __repr__(self) -> str:
        return f"TicTacToe.from_fen({self.fen()!r})"

    @classmethod
    def from_fen(cls, fen: str, *, evaluator: LinearEvaluator | None = None) -> TicTacToe:
        """Parse and validate a FEN (see :func:`from_fen`)."""
        x, o = _parse_fen(fen)
        return cls(x, o, evaluator=evaluator)


_DEFAULT_EVALUATOR: Final = LinearEvaluator(DEFAULT_WEIGHTS)
_COLOUR: Final = ("X", "O")


def _square(file: int, rank: int) -> int:
    return 1 << (rank * 3 + file)


def _board_text(x: int, o: int) -> str:
    """The FEN board field (ranks 3..1, runs of empty squares as digits)."""
    return board_text(x, o, 3, 3, _square)


def _parse_fen(fen: str) -> tuple[int, int]:
    """X's and O's marks from a FEN, after checking every field; InvalidPositionError
    names the offending text.

    Trailing fields may be omitted as Fairy-Stockfish allows (castling and en passant default
    to ``-``, the counters to ``0 1``).  The counters must be numbers, but their values are
    not checked: the board implies them, and clients commonly send ``0 1`` for any position.
    """
    fields = fen.split()
    if not MIN_FEN_FIELDS <= len(fields) <= FEN_FIELDS:
        raise InvalidPositionError(f"a tic-tac-toe FEN has 2 to 6 fields, e.g. {START_FEN} ({fen})")
    placement, side_text, *rest = fields
    board, pocket = split_placement(placement, "3/3/3[PPPPPpppp]")
    x, o = parse_board(board, 3, 3, _square, "squares")
    problem = _position_problem(x, o)
    if problem is not None:
        raise InvalidPositionError(f"{problem} ({board})")
    if side_text not in ("w", "b"):
        raise InvalidPositionError(f"side to move must be 'w' or 'b' ({side_text})")
    side = x.bit_count() - o.bit_count()
    if side_text != "wb"[side]:
        mover = "X (w)" if side == 0 else "O (b)"
        raise InvalidPositionError(
            f"X has {x.bit_count()} marks and O has {o.bit_count()}, so {mover} is to move "
            f"({side_text})"
        )
    check_pocket(pocket, _X_MARKS - x.bit_count(), _O_MARKS - o.bit_count(), "marks")
    check_trailing_fields(rest, "tic-tac-toe")
    return x, o


def from_fen(fen: str, chess960: bool = False) -> TicTacToe:
    """Build a position from a FEN in the cutechess / Fairy-Stockfish ``tictactoe`` dialect.

    Raises InvalidPositionError, naming the offending text, for a malformed FEN, pockets that
    do not match the board, a side to move that does not match the mark counts, both players
    holding a line, or the side to move holding one (the player who just moved may).
    ``chess960`` is the registry's UCI_Chess960 flag and means nothing here.
    """
    return TicTacToe.from_fen(fen)


def _variant_from_fen(fen: str, chess960: bool) -> TicTacToe:
    return from_fen(fen, chess960)


if TYPE_CHECKING:
    # Static proof that the adapter satisfies the contract.
    _contract_check: Game[int] = TicTacToe()


VARIANT: Final = Variant(
    "tictactoe", START_FEN, _variant_from_fen, "Tic-tac-toe (noughts and crosses)"
)
