"""Connect Four adapter: move generation and terminal rules against an independent reference
board, FEN and column-string notation (Fairy-Stockfish's ``cfour`` dialect), exact
reachability, features against their definitions, and the engine's search on the adapter.

The reference here is a plain 7x6 grid with a four-in-a-row scan around the last stone; it
shares no code or bit layout with the module, so agreement means something.  Test positions
come from Pascal Pons' sets in ``shared/data/connect4/pons`` (SOURCES.md section 6).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from engine.eval import LinearEvaluator
from engine.game import Game, GameError, IllegalMoveError, InvalidPositionError
from engine.limits import Limits
from engine.perft import divide, perft
from engine.score import Cp, Mate
from engine.search import Searcher
from games.connect4.board import (
    DEFAULT_WEIGHTS,
    START_FEN,
    WINDOWS,
    Connect4,
    column_of,
    column_string,
    from_fen,
)
from games.registry import GAMES, get_variant
from tests.support.pons import pons_cases

ISSUE_START_FEN = "7/7/7/7/7/7[PPPPPPPPPPPPPPPPPPPPPppppppppppppppppppppp] w - - 0 1"


class Grid:
    """The reference board: ``cols[c]`` lists the players (0 first, 1 second) bottom up."""

    def __init__(self, moves: str = "") -> None:
        self.cols: list[list[int]] = [[] for _ in range(7)]
        self.history: list[int] = []
        self.winner: int | None = None
        for char in moves:
            self.play(int(char) - 1)

    @property
    def side(self) -> int:
        return len(self.history) % 2

    def at(self, col: int, row: int) -> int | None:
        if 0 <= col < 7 and 0 <= row < len(self.cols[col]):
            return self.cols[col][row]
        return None

    def legal(self) -> set[int]:
        if self.winner is not None:
            return set()
        return {c for c in range(7) if len(self.cols[c]) < 6}

    def play(self, col: int) -> None:
        player = self.side
        row = len(self.cols[col])
        self.cols[col].append(player)
        self.history.append(col)
        for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
            run = 1
            for sign in (1, -1):
                c, r = col + sign * dc, row + sign * dr
                while self.at(c, r) == player:
                    run += 1
                    c, r = c + sign * dc, r + sign * dr
            if run >= 4:
                self.winner = player

    def undo(self) -> None:
        col = self.history.pop()
        self.cols[col].pop()
        self.winner = None

    def cell_bit(self, col: int, row: int) -> int:
        """Bit of (col, row) in the reference's own window enumeration below."""
        return 1 << (col * 6 + row)

    def occupancy(self) -> tuple[int, int]:
        own = opp = 0
        for c in range(7):
            for r, player in enumerate(self.cols[c]):
                if player == self.side:
                    own |= self.cell_bit(c, r)
                else:
                    opp |= self.cell_bit(c, r)
        return own, opp

    def windows(self) -> list[list[tuple[int, int]]]:
        lines = []
        for c in range(7):
            for r in range(6):
                for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
                    cells = [(c + i * dc, r + i * dr) for i in range(4)]
                    if all(0 <= x < 7 and 0 <= y < 6 for x, y in cells):
                        lines.append(cells)
        return lines

    def features(self) -> dict[str, int]:
        """The module docstring's definitions, computed cell by cell."""
        me = self.side
        open2 = open3 = 0
        threat_cells: list[set[tuple[int, int]]] = [set(), set()]
        for cells in self.windows():
            owners = [self.at(c, r) for c, r in cells]
            for player in (0, 1):
                if (1 - player) in owners:
                    continue
                count = owners.count(player)
                sign = 1 if player == me else -1
                if count == 2:
                    open2 += sign
                elif count == 3:
                    open3 += sign
                    empty = cells[owners.index(None)]
                    threat_cells[player].add(empty)
        good_rows = ({0, 2, 4}, {1, 3, 5})  # rows 1, 3, 5 for the first player
        threats = len(threat_cells[me]) - len(threat_cells[1 - me])
        parity = len([1 for _, r in threat_cells[me] if r in good_rows[me]]) - len(
            [1 for _, r in threat_cells[1 - me] if r in good_rows[1 - me]]
        )
        centre = sum(1 if p == me else -1 for p in self.cols[3])
        return {
            "open2": open2,
            "open3": open3,
            "threats": threats,
            "parity_threats": parity,
            "center": centre,
        }


def random_games(count: int, seed: int) -> Iterator[tuple[Connect4, Grid]]:
    """Random complete games, yielding the adapter and the reference after every move."""
    rng = random.Random(seed)
    for _ in range(count):
        game = Connect4()
        grid = Grid()
        yield game, grid
        while grid.legal():
            col = rng.choice(sorted(grid.legal()))
            cell = game.drop_cell(col)
            assert cell is not None
            game.push(cell)
            grid.play(col)
            yield game, grid


# -- notation ---------------------------------------------------------------------------------
def test_start_fen_is_fairy_stockfish_cfour() -> None:
    assert START_FEN == ISSUE_START_FEN
    assert get_variant("cfour").start_fen == ISSUE_START_FEN
    game = get_variant("cfour").new()
    assert isinstance(game, Connect4)
    assert game.fen() == ISSUE_START_FEN
    assert game.format_move(21) == "P@d1"
    assert game.drop_cell(3) == 21
    game.push(21)
    assert game.fen() == "7/7/7/7/7/3P3[PPPPPPPPPPPPPPPPPPPPppppppppppppppppppppp] b - - 0 1"
    assert game.format_move(22) == "P@d2"
    assert game.drop_cell(3) == 22


def test_cfour_is_registered_with_a_solver_hook() -> None:
    assert "cfour" in GAMES
    assert GAMES["cfour"].solve is not None
    assert isinstance(get_variant("cfour").new(), Game)


def test_column_string_and_fen_describe_the_same_position() -> None:
    """Position 4453 (Pons' notation page): X on d1 e1, O on d2 c1, X to move."""
    game = get_variant("cfour").new("4453")
    assert game.fen() == "7/7/7/7/3p3/2pPP2[PPPPPPPPPPPPPPPPPPPppppppppppppppppppp] w - - 0 3"
    assert from_fen(game.fen()).key() == game.key()
    assert game.display().splitlines() == [
        "6  . . . . . . .",
        "5  . . . . . . .",
        "4  . . . . . . .",
        "3  . . . . . . .",
        "2  . . . O . . .",
        "1  . . O X X . .",
        "   a b c d e f g",
        f"Fen: {game.fen()}",
    ]


@pytest.mark.parametrize(
    ("text", "cell"),
    [("P@d1", 21), ("p@d1", 21), ("d1", 21), ("d", 21), ("4", 21), ("P@a1", 0), ("g", 42)],
)
def test_parse_move_accepts_drops_files_and_column_digits(text: str, cell: int) -> None:
    assert Connect4().parse_move(text) == cell


def test_parse_move_finds_the_landing_square() -> None:
    game = Connect4.from_moves("44")
    assert game.parse_move("P@d3") == game.parse_move("d") == game.parse_move("4") == 23
    assert game.parse_move("a") == 0


@pytest.mark.parametrize(
    ("moves", "text", "complaint"),
    [
        ("", "P@d2", "lands on d1"),
        ("4", "d1", "lands on d2"),
        ("444444", "4", "column d is full"),
        ("", "8", "not a connect-four move"),
        ("", "h", "not a connect-four move"),
        ("", "P@d7", "not a connect-four move"),
        ("", "Q@d1", "not a connect-four move"),
        ("", "", "not a connect-four move"),
        ("1212121", "3", "the game is over"),
    ],
)
def test_parse_move_rejects_with_reason(moves: str, text: str, complaint: str) -> None:
    with pytest.raises(IllegalMoveError, match=complaint):
        Connect4.from_moves(moves).parse_move(text)


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("4444444", "move 7 drops into full column 4"),
        ("12121212", r"move 8 comes after the first player \(P\) connected four"),
        ("4480", "move 3 of a column string must be a digit"),
    ],
)
def test_column_string_errors_name_the_move(text: str, complaint: str) -> None:
    with pytest.raises(InvalidPositionError, match=complaint):
        Connect4.from_moves(text)


PAWNS_21 = "P" * 21 + "p" * 21


@pytest.mark.parametrize(
    ("fen", "complaint"),
    [
        ("7/7/7/7/7/7 w", "pocket in brackets"),
        (f"7/7/7/7/7[{PAWNS_21}] w", "6 ranks"),
        (f"7/7/7/7/7/6[{PAWNS_21}] w", "not 7 cells wide"),
        (f"7/7/7/7/7/7X[{PAWNS_21}] w", "unexpected 'X'"),
        (f"7/7/7/7/P6/7[{PAWNS_21}] w", "floats above an empty cell in column a"),
        ("7/7/7/7/7/PP5[" + "P" * 19 + "p" * 21 + "] b", "as many or one more"),
        ("7/7/7/7/P6/p6[" + "P" * 20 + "p" * 20 + "] w", "no alternating order"),
        (f"7/7/7/7/7/7[{PAWNS_21}] b", r"so the first player \(w\) is to move"),
        (f"7/7/7/7/7/7[{PAWNS_21}p] w", "pocket must hold"),
        (f"7/7/7/7/7/7[{PAWNS_21}] w KQ", "no castling"),
        (f"7/7/7/7/7/7[{PAWNS_21}] w - e3", "no en passant"),
        (f"7/7/7/7/7/7[{PAWNS_21}] w - - x 1", "halfmove clock"),
        (f"7/7/7/7/7/7[{PAWNS_21}] w - - 0 0", "fullmove"),
        (f"7/7/7/7/7/7[{PAWNS_21}] x", "'w' or 'b'"),
        # the first player has d1-d4, yet the counts say the second player moved since
        ("7/7/3P3/3P3/pp1P3/pp1P3[" + "P" * 17 + "p" * 17 + "] w", "second player moved after"),
        ("7/7/P5p/P5p/P5p/P5p[" + "P" * 17 + "p" * 17 + "] w", "both players have four"),
        # two separate fours of the first player: no single last drop made both
        (
            "7/7/P5P/P5P/Ppp1p1P/Ppp1ppP[" + "P" * 13 + "p" * 14 + "] b",
            "no single last drop completes every four",
        ),
    ],
)
def test_fen_errors_name_the_problem(fen: str, complaint: str) -> None:
    with pytest.raises(InvalidPositionError, match=complaint):
        from_fen(fen)


def test_finished_game_fen_is_accepted_as_terminal() -> None:
    game = Connect4.from_moves("1212121")
    again = from_fen(game.fen())
    assert again.is_terminal()
    assert again.terminal_value() == -1
    assert again.winner == 0
    assert again.legal_moves() == []


def test_reachability_is_exact_on_small_boards() -> None:
    """Every FEN the adapter accepts with at most 6 stones is reached by some column string,
    and every board with legal counts, gravity and no four that no game reaches is refused.

    Enumerates all boards of up to 6 stones over the first 4 columns (heights 0..3) with both
    colourings, and compares with the positions reachable by playing (breadth first)."""
    reachable: set[tuple[int, int]] = set()
    frontier = [Connect4()]
    for _ in range(6):
        nxt = []
        for game in frontier:
            for move in game.legal_moves():
                col = column_of(move)
                if col > 3 or game.heights[col] >= 3:
                    continue
                child = game.copy()
                child.push(move)
                if (child.first, child.second) not in reachable:
                    reachable.add((child.first, child.second))
                    nxt.append(child)
        frontier = nxt
    accepted = set()
    for heights in _heights(4, 3, 6):
        column_cells = [(c, r) for c in range(4) for r in range(heights[c])]
        n = len(column_cells)
        if n == 0:
            continue
        for colouring in range(1 << n):
            first = second = 0
            for i, (c, r) in enumerate(column_cells):
                bit = 1 << (c * 7 + r)
                if colouring >> i & 1:
                    second |= bit
                else:
                    first |= bit
            try:
                Connect4(first, second)
            except InvalidPositionError:
                continue
            accepted.add((first, second))
    assert len(reachable) > 1000
    assert accepted == reachable


def _heights(columns: int, height: int, total: int) -> Iterator[tuple[int, ...]]:
    if columns == 0:
        yield ()
        return
    for h in range(min(height, total) + 1):
        for rest in _heights(columns - 1, height, total - h):
            yield (h, *rest)


# -- moves and terminal rules against the reference -----------------------------------------
def test_perft_from_the_start() -> None:
    """Known counts: 7^n until the first possible win at ply 7 (7 games end there)."""
    game = Connect4()
    assert [perft(game, d) for d in range(1, 7)] == [7, 49, 343, 2401, 16807, 117649]
    assert perft(game, 7) == 823536
    assert divide(game, 2) == [(f"P@{f}1", 7) for f in "abcdefg"]


def reference_perft(grid: Grid, depth: int) -> int:
    if depth == 0:
        return 1
    total = 0
    for col in sorted(grid.legal()):
        grid.play(col)
        total += reference_perft(grid, depth - 1)
        grid.undo()
    return total


@pytest.mark.parametrize("index", [0, 37, 250, 511])
def test_perft_matches_the_reference_in_middle_games(index: int) -> None:
    moves, _ = pons_cases("Test_L2_R1")[index]
    assert perft(Connect4.from_moves(moves), 4) == reference_perft(Grid(moves), 4)


def test_random_games_agree_with_the_reference() -> None:
    """Legal moves, terminal state, winner, side, ply, keys, FEN round trips and push/pop
    along 120 random games, plus the noisy/quiet split."""
    keys: dict[int, str] = {}
    for game, grid in random_games(120, seed=7):
        assert {column_of(m) for m in game.legal_moves()} == grid.legal()
        assert game.side == grid.side
        assert game.ply == len(grid.history)
        finished = grid.winner is not None or len(grid.history) == 42
        assert game.is_terminal() == finished
        if finished or not grid.legal():
            assert game.terminal_value() == (-1 if grid.winner is not None else 0)
        assert game.winner == grid.winner
        fen = game.fen()
        assert keys.setdefault(game.key(), fen) == fen  # no two positions share a key
        assert from_fen(fen).key() == game.key()
        noisy = game.noisy_moves()
        quiet = game.quiet_moves()
        assert sorted(noisy + quiet) == sorted(game.legal_moves())
        assert all(game.is_noisy(m) for m in noisy)
        assert not any(game.is_noisy(m) for m in quiet)
        for move in game.legal_moves():
            assert game.parse_move(game.format_move(move)) == move
            game.push(move)
            game.pop()
            assert game.fen() == fen
    assert len(keys) > 2000


def test_noisy_moves_are_wins_then_blocks() -> None:
    """X (to move) has c1 d1 e1 and wins on b1 or f1; O threatens a4 over a1-a3.

    4  . . . . . . .
    3  O . . . . . .
    2  O . . . . . .
    1  O . X X X . .
       a b c d e f g
    """
    game = Connect4.from_moves("314151")
    assert game.side == 0
    assert game.noisy_moves() == [7, 35, 3]  # b1, f1 (wins), a4 (block)
    assert game.quiet_moves() == [22, 15, 29, 42]  # d2, c2, e2, g1


def test_push_pop_restores_everything_and_pop_on_empty_raises() -> None:
    game = Connect4.from_moves("4453")
    before = (game.fen(), game.key(), game.evaluate())
    for col in (0, 6, 3):
        cell = game.drop_cell(col)
        assert cell is not None
        game.push(cell)
    for _ in range(3):
        game.pop()
    assert (game.fen(), game.key(), game.evaluate()) == before
    with pytest.raises(IndexError):
        game.pop()
    assert game.fen() == before[0]


def test_no_null_move() -> None:
    game = Connect4()
    assert not game.can_null_move()
    assert not game.in_check()
    with pytest.raises(GameError):
        game.push_null()


def test_copy_is_independent() -> None:
    game = Connect4.from_moves("44")
    clone = game.copy()
    clone.push(0)
    assert game.fen() != clone.fen()
    assert clone.moves_played == (0,)
    assert clone.format_move(0) == "P@a1"
    assert game.moves_played == ()


# -- evaluation -------------------------------------------------------------------------------
def test_there_are_69_windows() -> None:
    assert len(WINDOWS) == len(set(WINDOWS)) == 69
    assert all(w.bit_count() == 4 for w in WINDOWS)


def test_features_match_their_definitions_and_evaluate_agrees() -> None:
    seen = 0
    for game, grid in random_games(30, seed=11):
        assert game.features() == grid.features()
        assert game.evaluate() == game.evaluator.evaluate(game.features())
        seen += 1
    assert seen > 500


def test_features_of_a_position_with_threats() -> None:
    """Position 44335, O to move.  X threatens b1 and f1 (two windows with three X each, both
    on row 1, which is odd: X's parity); O has no threat; the d-file holds one stone each.

        2  . . O O . . .
        1  . . X X X . .
           a b c d e f g
    """
    game = Connect4.from_moves("44335")
    assert game.side == 1
    assert game.features() == Grid("44335").features()
    features = game.features()
    assert features["open3"] == -2
    assert features["threats"] == -2
    assert features["parity_threats"] == -2
    assert features["center"] == 0
    assert game.evaluate() == round(sum(DEFAULT_WEIGHTS[k] * v for k, v in features.items()))


def test_evaluate_uses_custom_weights() -> None:
    weights = {name: 0.5 for name in DEFAULT_WEIGHTS}
    game = Connect4.from_fen(Connect4.from_moves("44445").fen(), evaluator=LinearEvaluator(weights))
    assert game.evaluate() == round(sum(0.5 * v for v in game.features().values()))


def test_column_string_helper() -> None:
    assert column_string((3, 3, 4, 2)) == "4453"


# -- the engine's search on the adapter --------------------------------------------------------
@pytest.mark.parametrize("index", range(0, 1000, 50))
def test_search_reports_exact_mates_near_the_end(index: int) -> None:
    """The normal search, to the end of the game, reports the test set's result: a mate whose
    distance follows from Pons' score (22 - winner's stones), or 0 for a draw."""
    moves, score = pons_cases("Test_L3_R1")[index]
    game = Connect4.from_moves(moves)
    result = Searcher(4).search(game.copy(), Limits(depth=42 - game.ply))
    n = game.ply
    if score > 0:
        expected: Mate | Cp = Mate(22 - score - n // 2)
    elif score < 0:
        expected = Mate(-(22 + score - (n - n // 2)))
    else:
        expected = Cp(0)
    assert result.score == expected
    assert result.best is not None
    assert game.parse_move(result.best) in game.legal_moves()
