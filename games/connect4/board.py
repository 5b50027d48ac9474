"""Connect Four (7 columns by 6 rows) on native bitboards, as cutechess and Fairy-Stockfish play it.

**Notation.**  The variant is ``cfour``.  FENs follow Fairy-Stockfish's connect-four dialect
(ranks 6..1, files a..g, ``P`` first player, ``p`` second, stones in hand in brackets)::

    7/7/7/7/7/7[PPPPPPPPPPPPPPPPPPPPPppppppppppppppppppppp] w - - 0 1

Moves are drops onto the landing square, ``P@d1``; as input the file (``d``), the landing
square (``d1``) and the solver literature's column digit (``4``, columns 1..7) are accepted
too, and a column string (``4453``, the moves played) wherever a FEN is
(:meth:`Connect4.from_text`).

**Terminal rules.**  The game ends when the player who just moved has four in a row
(``terminal_value() == -1`` for the side to move) or the board is full (a draw); either way
``legal_moves()`` is empty.

**Evaluation.**  Five "mine minus the opponent's" features: ``open2``, ``open3``,
``threats``, ``parity_threats`` and ``center``; :meth:`Connect4.evaluate` agrees with
:meth:`Connect4.features`.

The encoding and the features explained: docs/playing.md, *Connect Four's board*.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
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

if TYPE_CHECKING:
    from engine.game import Game

__all__ = [
    "BOARD",
    "BOTTOM",
    "COLUMN_ORDER",
    "DEFAULT_WEIGHTS",
    "HEIGHT",
    "START_FEN",
    "WIDTH",
    "WINDOWS",
    "Connect4",
    "can_win_next",
    "column_of",
    "column_string",
    "drops",
    "from_fen",
    "has_four",
    "winning_cells",
]

WIDTH: Final = 7
HEIGHT: Final = 6
_H1: Final = HEIGHT + 1
"""Bits per column: six cells and the sentinel."""
CELLS: Final = WIDTH * HEIGHT
STONES_EACH: Final = CELLS // 2
"""21 stones per player: every cell gets filled in a drawn game."""

START_FEN: Final = f"7/7/7/7/7/7[{'P' * STONES_EACH}{'p' * STONES_EACH}] w - - 0 1"

BOTTOM: Final = sum(1 << (col * _H1) for col in range(WIDTH))
"""The bottom cell of every column."""
BOARD: Final = BOTTOM * ((1 << HEIGHT) - 1)
"""Every playable cell (sentinels excluded)."""
_TOP_ROW: Final = BOTTOM << (HEIGHT - 1)
_COLUMN: Final = tuple(((1 << HEIGHT) - 1) << (col * _H1) for col in range(WIDTH))
_BOTTOM_OF: Final = tuple(1 << (col * _H1) for col in range(WIDTH))
_ODD_ROWS: Final = BOTTOM * 0b010101
"""Rows 1, 3 and 5 (counted from 1 at the bottom): where the first player's threats count."""
_EVEN_ROWS: Final = BOTTOM * 0b101010
_CENTER_COLUMN: Final = _COLUMN[3]

COLUMN_ORDER: Final = (3, 2, 4, 1, 5, 0, 6)
"""Centre first: central columns lie on more windows, so they are more often the best move."""

DEFAULT_WEIGHTS: Final[dict[str, float]] = {
    "open2": 2,
    "open3": 6,
    "threats": 10,
    "parity_threats": 8,
    "center": 4,
}
"""Feature weights (side to move's view).  A threat (a completable four) outweighs the open
windows it grew from; a threat on its owner's parity row is worth nearly double, because in a
filled-up endgame zugzwang forces the opponent to let it be played."""

_FILES: Final = "abcdefg"
_DIRECTIONS: Final = (1, _H1, _H1 - 1, _H1 + 1)
"""Bit steps of the four line directions: vertical, horizontal, and the two diagonals."""


def _cell(col: int, row: int) -> int:
    return 1 << (col * _H1 + row)


def _build_windows() -> tuple[int, ...]:
    """The 69 four-cell lines, enumerated by coordinates (not by shifting bitboards), so the
    plain :meth:`Connect4.features` does not share its arithmetic with the fast path."""
    windows: list[int] = []
    for dc, dr in ((0, 1), (1, 0), (1, 1), (1, -1)):
        for col in range(WIDTH):
            for row in range(HEIGHT):
                cells = [(col + i * dc, row + i * dr) for i in range(4)]
                if all(0 <= c < WIDTH and 0 <= r < HEIGHT for c, r in cells):
                    mask = 0
                    for c, r in cells:
                        mask |= _cell(c, r)
                    windows.append(mask)
    return tuple(windows)


WINDOWS: Final = _build_windows()
"""All 69 winning lines as cell masks (21 vertical, 24 horizontal, 24 diagonal)."""

_WINDOW_STARTS: Final = tuple(
    BOARD & (BOARD >> d) & (BOARD >> (2 * d)) & (BOARD >> (3 * d)) for d in _DIRECTIONS
)
"""Per direction, the cells where a window (cell, cell+d, cell+2d, cell+3d) starts."""


def has_four(stones: int) -> bool:
    """True when ``stones`` (one player's bitboard) contains four in a row."""
    m = stones & (stones >> 1)
    if m & (m >> 2):
        return True
    m = stones & (stones >> 7)
    if m & (m >> 14):
        return True
    m = stones & (stones >> 6)
    if m & (m >> 12):
        return True
    m = stones & (stones >> 8)
    return bool(m & (m >> 16))


def winning_cells(stones: int, mask: int) -> int:
    """Empty cells (free in ``mask``) where one more stone would give ``stones`` a four.

    Not only playable cells: a threat higher up a column counts too (that is what makes
    parity matter).  For each direction, a cell completes a line when the three others of some
    window through it are ``stones``; the shifts below test the four positions the empty cell
    can take in a window.
    """
    p = stones
    # vertical: only the cell above three stacked stones
    r = (p << 1) & (p << 2) & (p << 3)
    # horizontal
    t = (p << 7) & (p << 14)
    r |= t & (p << 21)
    r |= t & (p >> 7)
    t = (p >> 7) & (p >> 14)
    r |= t & (p << 7)
    r |= t & (p >> 21)
    # diagonal, down to the right
    t = (p << 6) & (p << 12)
    r |= t & (p << 18)
    r |= t & (p >> 6)
    t = (p >> 6) & (p >> 12)
    r |= t & (p << 6)
    r |= t & (p >> 18)
    # diagonal, up to the right
    t = (p << 8) & (p << 16)
    r |= t & (p << 24)
    r |= t & (p >> 8)
    t = (p >> 8) & (p >> 16)
    r |= t & (p << 8)
    r |= t & (p >> 24)
    return r & (BOARD ^ mask)


def can_win_next(current: int, mask: int) -> bool:
    """True when the side to move (stones ``current``) has a winning drop right now."""
    return bool(winning_cells(current, mask) & (mask + BOTTOM) & BOARD)


def drops(current: int, mask: int) -> Iterator[tuple[int, int, int]]:
    """``(column, the mover's stones after the drop, every stone after it)`` for each legal
    drop of the side to move (stones ``current``, all stones ``mask``), centre first."""
    playable = (mask + BOTTOM) & BOARD
    for col in COLUMN_ORDER:
        drop = playable & _COLUMN[col]
        if drop:
            yield col, current | drop, mask | drop


def _build_move_lists() -> dict[int, tuple[int, ...]]:
    """For each set of open columns (as the bits of their top cells), the columns in
    centre-first order: move generation looks the open columns up instead of testing seven."""
    table: dict[int, tuple[int, ...]] = {}
    for pattern in range(1 << WIDTH):
        top = 0
        for col in range(WIDTH):
            if pattern >> col & 1:
                top |= _cell(col, HEIGHT - 1)
        table[top] = tuple(col for col in COLUMN_ORDER if pattern >> col & 1)
    return table


_MOVES_BY_OPEN_TOP: Final = _build_move_lists()
_MAX_CELL: Final = WIDTH * _H1
_BASE: Final = tuple(col * _H1 for col in range(WIDTH))
"""The cell index of each column's bottom cell."""
_SQUARE_NAMES: Final = tuple(f"{_FILES[i // _H1]}{i % _H1 + 1}" for i in range(_MAX_CELL))
_MOVE_TEXT: Final = tuple(f"P@{name}" for name in _SQUARE_NAMES)
"""Per cell index; sentinel indices get a name too but are never moves."""
_INDEX: Final = {1 << i: i for i in range(_MAX_CELL)}
"""One-cell bitboard → cell index."""
_COLOUR: Final = ("the first player (P)", "the second player (p)")


def column_of(move: int) -> int:
    """The column (0..6) of a move (a landing cell index)."""
    return move // _H1


def column_string(moves: list[int] | tuple[int, ...]) -> str:
    """Columns (0..6) as the solver literature writes a game: digits 1..7."""
    return "".join(str(col + 1) for col in moves)


class Connect4:
    """A Connect Four position with make/unmake (``engine.game.Game[int]``).

    A move is the index of its landing cell, ``column * 7 + row`` (``a1`` = 0, ``d1`` = 21),
    so a move means the same in every position and formats without the board (perft's
    ``divide`` formats after pushing); :meth:`drop_cell` gives a column's landing cell.
    """

    __slots__ = ("_cur", "_done", "_evaluator", "_mask", "_stack")

    variant: str = "cfour"

    def __init__(
        self, first: int = 0, second: int = 0, *, evaluator: LinearEvaluator | None = None
    ) -> None:
        """The position with the first player's stones ``first`` and the second player's
        ``second`` (bitboards in this module's layout); empty by default.  The side to move
        follows from the stone counts.  Raises InvalidPositionError for a position that no
        game reaches (floating stones, wrong counts, a finished game continued, ...)."""
        problem = _position_problem(first, second)
        if problem is not None:
            raise InvalidPositionError(f"{problem} ({_board_text(first, second)})")
        mask = first | second
        self._mask = mask
        self._cur = second if mask.bit_count() & 1 else first
        self._done = has_four(mask ^ self._cur)
        self._stack: list[int] = []
        self._evaluator = _DEFAULT_EVALUATOR if evaluator is None else evaluator

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def from_fen(cls, fen: str, *, evaluator: LinearEvaluator | None = None) -> Connect4:
        """Parse and validate a FEN in the ``cfour`` dialect (see the module docstring)."""
        first, second = _parse_fen(fen)
        return cls(first, second, evaluator=evaluator)

    @classmethod
    def from_moves(cls, text: str, *, evaluator: LinearEvaluator | None = None) -> Connect4:
        """The position after a column string such as ``4453`` (columns 1..7, first player
        first; the empty string is the start).  InvalidPositionError names the first move
        that is not a column digit, drops into a full column, or comes after the game ended.
        """
        game = cls(evaluator=evaluator)
        for index, char in enumerate(text, 1):
            if char not in "1234567":
                raise InvalidPositionError(
                    f"move {index} of a column string must be a digit 1..7, not {char!r} ({text})"
                )
            if game._done:
                raise InvalidPositionError(
                    f"move {index} comes after {_COLOUR[game.side ^ 1]} connected four ({text})"
                )
            cell = game.drop_cell(int(char) - 1)
            if cell is None:
                raise InvalidPositionError(f"move {index} drops into full column {char} ({text})")
            game.push(cell)
        game._stack.clear()
        return game

    @classmethod
    def from_text(cls, text: str, *, evaluator: LinearEvaluator | None = None) -> Connect4:
        """A FEN, or a column string (digits 1..7 only, surrounding blanks ignored)."""
        stripped = text.strip()
        if _COLUMN_STRING_RE.fullmatch(stripped):
            return cls.from_moves(stripped, evaluator=evaluator)
        return cls.from_fen(stripped, evaluator=evaluator)

    # -- moves -----------------------------------------------------------------------------
    def legal_moves(self) -> list[int]:
        """The landing cells of the open columns, centre column first."""
        if self._done:
            return []
        mask = self._mask
        return [
            (mask & _COLUMN[col]).bit_count() + _BASE[col]
            for col in _MOVES_BY_OPEN_TOP[_TOP_ROW & ~mask]
        ]

    def noisy_moves(self) -> list[int]:
        """Immediate wins, then drops that block an immediate win of the opponent."""
        if self._done:
            return []
        cur = self._cur
        mask = self._mask
        playable = (mask + BOTTOM) & BOARD
        wins = winning_cells(cur, mask) & playable
        blocks = winning_cells(cur ^ mask, mask) & playable & ~wins
        if not wins | blocks:
            return []
        moves = [_INDEX[wins & _COLUMN[col]] for col in COLUMN_ORDER if wins & _COLUMN[col]]
        moves += [_INDEX[blocks & _COLUMN[col]] for col in COLUMN_ORDER if blocks & _COLUMN[col]]
        return moves

    def quiet_moves(self) -> list[int]:
        if self._done:
            return []
        cur = self._cur
        mask = self._mask
        playable = (mask + BOTTOM) & BOARD
        quiet = playable & ~(winning_cells(cur, mask) | winning_cells(cur ^ mask, mask))
        return [_INDEX[quiet & _COLUMN[col]] for col in COLUMN_ORDER if quiet & _COLUMN[col]]

    def is_noisy(self, move: int) -> bool:
        if self._done or not 0 <= move < _MAX_CELL:
            return False
        mask = self._mask
        drop = (mask + BOTTOM) & BOARD & (1 << move)
        if not drop:
            return False
        cur = self._cur
        return bool(drop & (winning_cells(cur, mask) | winning_cells(cur ^ mask, mask)))

    def drop_cell(self, column: int) -> int | None:
        """The move that drops a stone in ``column`` (0..6), None when the column is full."""
        height = (self._mask & _COLUMN[column]).bit_count()
        return None if height == HEIGHT else _BASE[column] + height

    def push(self, move: int) -> None:
        mask = self._mask
        new_mask = mask | 1 << move
        # The mover's stones become the opponent's from the next side's point of view.
        cur = self._cur ^ mask
        self._cur = cur
        self._mask = new_mask
        self._done = has_four(cur ^ new_mask)
        self._stack.append(move)

    def pop(self) -> None:
        """Undo the last push (IndexError, state unchanged, when there is none)."""
        old_mask = self._mask ^ 1 << self._stack.pop()
        self._cur ^= old_mask
        self._mask = old_mask
        self._done = False  # moves are only pushed from unfinished positions

    def can_null_move(self) -> bool:
        """Never: zugzwang decides Connect Four endgames, so passing is no sound bound."""
        return False

    def push_null(self) -> None:
        raise GameError("connect four has no null move")

    # -- state -----------------------------------------------------------------------------
    def is_terminal(self) -> bool:
        """The player who just moved connected four, or the board is full."""
        return self._done or self._mask == BOARD

    def terminal_value(self) -> int:
        """-1 when the opponent has just connected four, else 0 (a full board is a draw)."""
        return -1 if self._done else 0

    def in_check(self) -> bool:
        return False

    def key(self) -> int:
        """Pons' key ``current + mask``: per column, a 1 just above the top stone marks the
        height and the bits below it are the side to move's stones, so it is unique (49
        bits); the stone count, hence the side to move, is implied by the board."""
        return self._cur + self._mask

    @property
    def side(self) -> int:
        return self._mask.bit_count() & 1

    @property
    def ply(self) -> int:
        """The number of stones: every ply adds one and none is ever removed."""
        return self._mask.bit_count()

    @property
    def current(self) -> int:
        """The side to move's stones as a bitboard."""
        return self._cur

    @property
    def mask(self) -> int:
        """Every stone on the board as a bitboard."""
        return self._mask

    @property
    def first(self) -> int:
        """The first player's stones as a bitboard."""
        return self._cur ^ self._mask if self.side else self._cur

    @property
    def second(self) -> int:
        """The second player's stones as a bitboard."""
        return self._cur if self.side else self._cur ^ self._mask

    @property
    def heights(self) -> tuple[int, ...]:
        """Stones per column, a..g."""
        mask = self._mask
        return tuple((mask & _COLUMN[col]).bit_count() for col in range(WIDTH))

    @property
    def winner(self) -> int | None:
        """0 or 1 when that player has connected four, else None."""
        return self.side ^ 1 if self._done else None

    @property
    def moves_played(self) -> tuple[int, ...]:
        """The moves (landing cells) pushed since this object was built, oldest first."""
        return tuple(self._stack)

    # -- evaluation ------------------------------------------------------------------------
    @property
    def evaluator(self) -> LinearEvaluator:
        return self._evaluator

    def features(self) -> dict[str, float]:
        """The features by their definitions, window by window, side to move's view (see the
        module docstring).  Written plainly on purpose: :meth:`evaluate` computes the same
        numbers with bit-parallel arithmetic, and the tests hold the two against each other.
        """
        own = self._cur
        opp = own ^ self._mask
        open_windows = {2: 0, 3: 0}  # by the stones in them: +1 the side to move's, -1 the other's
        for window in WINDOWS:
            mine = (own & window).bit_count()
            theirs = (opp & window).bit_count()
            if theirs == 0 and mine in open_windows:
                open_windows[mine] += 1
            if mine == 0 and theirs in open_windows:
                open_windows[theirs] -= 1
        open2, open3 = open_windows[2], open_windows[3]
        mask = self._mask
        own_threats = winning_cells(own, mask)
        opp_threats = winning_cells(opp, mask)
        own_rows, opp_rows = (_EVEN_ROWS, _ODD_ROWS) if self.side else (_ODD_ROWS, _EVEN_ROWS)
        return {
            "open2": open2,
            "open3": open3,
            "threats": own_threats.bit_count() - opp_threats.bit_count(),
            "parity_threats": (own_threats & own_rows).bit_count()
            - (opp_threats & opp_rows).bit_count(),
            "center": (own & _CENTER_COLUMN).bit_count() - (opp & _CENTER_COLUMN).bit_count(),
        }

    def evaluate(self) -> int:
        """``evaluator.evaluate(features())`` without the per-window loop: for each direction
        a bit-sliced adder counts the stones of all windows at once.  Products are summed in
        the features' order so float weights round identically."""
        own = self._cur
        mask = self._mask
        opp = own ^ mask
        open2, open3 = _window_counts(own, opp)
        opp2, opp3 = _window_counts(opp, own)
        own_threats = winning_cells(own, mask)
        opp_threats = winning_cells(opp, mask)
        if mask.bit_count() & 1:
            parity = (own_threats & _EVEN_ROWS).bit_count() - (opp_threats & _ODD_ROWS).bit_count()
        else:
            parity = (own_threats & _ODD_ROWS).bit_count() - (opp_threats & _EVEN_ROWS).bit_count()
        get = self._evaluator.weights.get
        return round(
            get("open2", 0.0) * (open2 - opp2)
            + get("open3", 0.0) * (open3 - opp3)
            + get("threats", 0.0) * (own_threats.bit_count() - opp_threats.bit_count())
            + get("parity_threats", 0.0) * parity
            + get("center", 0.0)
            * ((own & _CENTER_COLUMN).bit_count() - (opp & _CENTER_COLUMN).bit_count())
        )

    # -- notation --------------------------------------------------------------------------
    def parse_move(self, text: str) -> int:
        """``P@d1`` (the landing square), ``d1``, ``d`` or the column digit ``4``;
        IllegalMoveError unless legal here."""
        match = _MOVE_RE.fullmatch(text)
        if match is None:
            raise IllegalMoveError(
                "not a connect-four move: expected a drop such as P@d1, a file a..g or a "
                f"column 1..7 ({text})"
            )
        file_text, rank_text, digit = match.group("file", "rank", "digit")
        col = int(digit) - 1 if digit else _FILES.index(file_text)
        if self._done:
            raise IllegalMoveError(f"the game is over: {_COLOUR[self.side ^ 1]} won ({text})")
        cell = self.drop_cell(col)
        if cell is None:
            raise IllegalMoveError(f"column {_FILES[col]} is full ({text})")
        if rank_text is not None and int(rank_text) != cell - _BASE[col] + 1:
            raise IllegalMoveError(
                f"a stone dropped in column {_FILES[col]} lands on {_SQUARE_NAMES[cell]} ({text})"
            )
        return cell

    def move_code(self, move: int) -> int:
        """The move plus one (0 means "no move")."""
        return move + 1

    def code_move(self, code: int) -> int:
        return code - 1

    def format_move(self, move: int) -> str:
        """The drop onto the move's landing square, e.g. ``P@d1``."""
        return _MOVE_TEXT[move]

    def fen(self) -> str:
        first = self.first
        second = self.second
        pocket = "P" * (STONES_EACH - first.bit_count()) + "p" * (STONES_EACH - second.bit_count())
        side = "b" if self.side else "w"
        fullmove = 1 + self.ply // 2
        return f"{_board_text(first, second)}[{pocket}] {side} - - 0 {fullmove}"

    def display(self) -> str:
        first = self.first
        second = self.second
        rows = []
        for row in range(HEIGHT - 1, -1, -1):
            cells = []
            for col in range(WIDTH):
                bit = _cell(col, row)
                cells.append("X" if first & bit else "O" if second & bit else ".")
            rows.append(f"{row + 1}  {' '.join(cells)}")
        rows.append(f"   {' '.join(_FILES)}")
        rows.append(f"Fen: {self.fen()}")
        return "\n".join(rows)

    def copy(self) -> Connect4:
        clone = object.__new__(Connect4)
        clone._cur = self._cur
        clone._mask = self._mask
        clone._done = self._done
        clone._stack = self._stack.copy()
        clone._evaluator = self._evaluator
        return clone

    def __repr__(self) -> str:
        return f"Connect4.from_fen({self.fen()!r})"


_DEFAULT_EVALUATOR: Final = LinearEvaluator(DEFAULT_WEIGHTS)
_MOVE_RE: Final = re.compile(r"(?:[Pp]@)?(?P<file>[a-g])(?P<rank>[1-6])?|(?P<digit>[1-7])")
_COLUMN_STRING_RE: Final = re.compile(r"[1-7]+")


def _window_counts(own: int, opp: int) -> tuple[int, int]:
    """How many windows hold exactly two / exactly three of ``own`` and none of ``opp``.

    Per direction ``d``, bit ``b`` of ``x_i = own >> i·d`` is the i-th cell of the window
    starting at ``b``; two half adders and a carry give the count's bits (``ones``, ``twos``)
    for every window at once.  A count of 2 is ``twos`` without ``ones``, 3 is both (a count of
    4 has neither: it sets only the fours bit, never computed).
    """
    free = BOARD & ~opp
    n2 = n3 = 0
    for d, starts in zip(_DIRECTIONS, _WINDOW_STARTS, strict=True):
        d2 = d + d
        d3 = d2 + d
        open_windows = starts & free & (free >> d) & (free >> d2) & (free >> d3)
        if not open_windows:
            continue
        x1 = own >> d
        x2 = own >> d2
        x3 = own >> d3
        low = own ^ x1
        high = x2 ^ x3
        ones = low ^ high
        twos = (own & x1) ^ (x2 & x3) ^ (low & high)
        n2 += (open_windows & twos & ~ones).bit_count()
        n3 += (open_windows & twos & ones).bit_count()
    return n2, n3


def _position_problem(first: int, second: int) -> str | None:
    """Why the stones cannot arise in a game, or None when they can.

    Checked in order of cost: cells on the board, no cell twice, no floating stone, the stone
    counts (the first player has as many stones as the second or one more), at most the player
    who just moved has four, and finally that some alternating order of drops reaches the
    position without a four appearing before the last drop (:func:`_reachable`).
    """
    if first & ~BOARD or second & ~BOARD:
        return "stones outside the 7x6 board"
    if first & second:
        return "a cell holds stones of both players"
    mask = first | second
    for col in range(WIDTH):
        column = mask & _COLUMN[col]
        if column & (column + _BOTTOM_OF[col]):
            return f"a stone floats above an empty cell in column {_FILES[col]}"
    n1 = first.bit_count()
    n2 = second.bit_count()
    if n1 not in (n2, n2 + 1):
        return (
            f"the first player has {n1} stones and the second {n2}: the first player moves "
            "first and the players alternate, so it must have as many or one more"
        )
    return _four_problem(first, second, first_moved_last=n1 > n2)


def _four_problem(first: int, second: int, *, first_moved_last: bool) -> str | None:
    """Why the fours on the board, or the drops, cannot have come about with the given player
    having moved last (stone counts already checked), or None when they can."""
    first_four = has_four(first)
    second_four = has_four(second)
    if first_four and second_four:
        return "both players have four in a row"
    if first_four and not first_moved_last:
        return "the first player has four in a row but the second player moved after it"
    if second_four and first_moved_last:
        return "the second player has four in a row but the first player moved after it"
    if not _reachable(first, second):
        if first_four or second_four:
            return "no single last drop completes every four in a row on the board"
        return "no alternating order of drops builds these columns"
    return None


def _reachable(first: int, second: int) -> bool:
    """True when some game reaches the position: undo drops from the column tops, always
    the colour of the player who moved last, never leaving a four on the board (a four may
    only appear with the very last drop).

    A depth-first search over the positions below this one, remembering the ones that failed;
    real positions need no backtracking in practice, and the failures cap the work for
    impossible ones.
    """
    failed: set[int] = set()

    def undo(first: int, second: int, stones: int) -> bool:
        if stones == 0:
            return True
        mask = first | second
        last_is_first = stones & 1
        mover = first if last_is_first else second
        for col in COLUMN_ORDER:
            column = mask & _COLUMN[col]
            if not column:
                continue
            top = (column + _BOTTOM_OF[col]) >> 1
            if not top & mover:
                continue
            before = mover ^ top
            if has_four(before):
                continue
            if last_is_first:
                f, s = before, second
            else:
                f, s = first, before
            key = f | s << CELLS + WIDTH
            if key in failed:
                continue
            if undo(f, s, stones - 1):
                return True
            failed.add(key)
        return False

    return undo(first, second, (first | second).bit_count())


def _board_text(first: int, second: int) -> str:
    """The FEN board field: ranks 6..1, runs of empty cells as digits."""
    return board_text(first, second, WIDTH, HEIGHT, _cell)


def _parse_fen(fen: str) -> tuple[int, int]:
    """Both players' stones from a FEN, after checking every field; InvalidPositionError
    names the offending text.

    Trailing fields may be omitted as Fairy-Stockfish allows (castling and en passant default
    to ``-``, the counters to ``0 1``).  The counters must be numbers, but their values are
    not checked: the board implies them, and clients commonly send ``0 1`` for any position.
    """
    fields = fen.split()
    if not MIN_FEN_FIELDS <= len(fields) <= FEN_FIELDS:
        raise InvalidPositionError(
            f"a connect-four FEN has 2 to 6 fields, e.g. {START_FEN}, or give a column "
            f"string such as 4453 ({fen})"
        )
    placement, side_text, *rest = fields
    board, pocket = split_placement(placement, "7/7/7/7/7/7[PP...pp]")
    first, second = parse_board(board, WIDTH, HEIGHT, _cell, "cells")
    problem = _position_problem(first, second)
    if problem is not None:
        raise InvalidPositionError(f"{problem} ({board})")
    if side_text not in ("w", "b"):
        raise InvalidPositionError(f"side to move must be 'w' or 'b' ({side_text})")
    side = first.bit_count() - second.bit_count()
    if side_text != "wb"[side]:
        mover = "the first player (w)" if side == 0 else "the second player (b)"
        raise InvalidPositionError(
            f"the first player has {first.bit_count()} stones and the second "
            f"{second.bit_count()}, so {mover} is to move ({side_text})"
        )
    check_pocket(
        pocket, STONES_EACH - first.bit_count(), STONES_EACH - second.bit_count(), "stones"
    )
    check_trailing_fields(rest, "connect four")
    return first, second


def from_fen(fen: str, chess960: bool = False) -> Connect4:
    """Build a position from a ``cfour`` FEN or a column string such as ``4453``.

    Raises InvalidPositionError, naming the offending text, for a malformed FEN, pockets that
    do not match the board, a side to move that does not match the stone counts, floating
    stones, a four for the side to move, a position no game reaches, or a column string that
    overfills a column or continues a finished game.  ``chess960`` is the registry's
    UCI_Chess960 flag and means nothing here.
    """
    del chess960
    return Connect4.from_text(fen)


if TYPE_CHECKING:
    # Static proof that the adapter satisfies the contract.
    _contract_check: Game[int] = Connect4()
