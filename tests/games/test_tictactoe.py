"""Tic-tac-toe adapter: move generation against the known game-tree counts, FEN validation
against exact reachability, terminal rules, features and the noisy/quiet split.

The reference numbers (549,946 nodes, 255,168 games, 5,478 positions, the per-depth perft
counts and the win/draw split) are cited in ``shared/data/SOURCES.md`` section 7.  Lines and
board symmetries are defined here independently of the module, so the checks do not reuse
the code they check.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest

from engine.eval import LinearEvaluator
from engine.game import Game, GameError, IllegalMoveError, InvalidPositionError
from engine.perft import count_tree, divide, perft
from games.registry import get_variant
from games.tictactoe import DEFAULT_WEIGHTS, START_FEN, TicTacToe, from_fen

# Squares by (rank, file), both 0-based: a1 = (0, 0) = 0, c3 = (2, 2) = 8.
REF_LINES = [
    *[[(r, f) for f in range(3)] for r in range(3)],
    *[[(r, f) for r in range(3)] for f in range(3)],
    [(i, i) for i in range(3)],
    [(i, 2 - i) for i in range(3)],
]
REF_MASKS = [sum(1 << (r * 3 + f) for r, f in line) for line in REF_LINES]


def has_line(marks: int) -> bool:
    return any(marks & m == m for m in REF_MASKS)


def walk_positions() -> Iterator[TicTacToe]:
    """Every distinct reachable position once (a copy each), found by key."""
    seen: set[int] = set()
    game = from_fen(START_FEN)

    def visit() -> Iterator[TicTacToe]:
        if game.key() in seen:
            return
        seen.add(game.key())
        yield game.copy()
        for move in game.legal_moves():
            game.push(move)
            yield from visit()
            game.pop()

    yield from visit()


def start() -> TicTacToe:
    return from_fen(START_FEN)


@pytest.fixture(scope="module")
def positions() -> list[TicTacToe]:
    return list(walk_positions())


# -- the game tree ---------------------------------------------------------------------------


def test_count_tree_from_the_empty_board() -> None:
    tree = count_tree(start())
    assert tree.nodes == 549_946
    assert tree.games == 255_168


@pytest.mark.parametrize(
    ("depth", "nodes"),
    [(1, 9), (2, 72), (3, 504), (4, 3024), (5, 15120), (6, 54720), (7, 148176),
     (8, 200448), (9, 127872)],
)  # fmt: skip
def test_perft_by_depth(depth: int, nodes: int) -> None:
    assert perft(start(), depth) == nodes


def test_divide_names_the_drops() -> None:
    counts = divide(start(), 2)
    assert [text for text, _ in counts] == [
        "P@a1", "P@a2", "P@a3", "P@b1", "P@b2", "P@b3", "P@c1", "P@c2", "P@c3",
    ]  # fmt: skip
    assert all(n == 8 for _, n in counts)


def test_outcomes_of_all_games() -> None:
    """131,184 X wins, 77,904 O wins, 46,080 draws: checks terminal_value at every leaf."""
    game = from_fen(START_FEN)
    results = {"X": 0, "O": 0, "draw": 0}

    def play() -> None:
        moves = game.legal_moves()
        if not moves:
            assert game.is_terminal()
            value = game.terminal_value()
            if value == 0:
                results["draw"] += 1
            else:
                assert value == -1
                results["XO"[game.side ^ 1]] += 1
            return
        for move in moves:
            game.push(move)
            play()
            game.pop()

    play()
    assert results == {"X": 131_184, "O": 77_904, "draw": 46_080}
    assert game.fen() == START_FEN


def test_reachable_positions_and_fen_round_trips(positions: list[TicTacToe]) -> None:
    assert len(positions) == 5_478
    for game in positions:
        fen = game.fen()
        again = from_fen(fen)
        assert again.fen() == fen
        assert again.key() == game.key()
        assert again.side == game.side
        assert again.ply == game.ply == (game.x | game.o).bit_count()
        assert game.key() == game.x | game.o << 9 | game.side << 18


def test_fen_accepts_exactly_the_reachable_positions(positions: list[TicTacToe]) -> None:
    """Every 3^9 board with either side to move and the pocket it implies: the validator
    accepts exactly the 5,478 positions of the game tree."""
    reachable = {game.key() for game in positions}
    accepted: set[int] = set()
    for cells in itertools.product(".Pp", repeat=9):
        ranks = ["".join(cells[r * 3 : r * 3 + 3]) for r in (2, 1, 0)]
        board = "/".join(ranks).replace("...", "3").replace("..", "2").replace(".", "1")
        pocket = "P" * max(0, 5 - cells.count("P")) + "p" * max(0, 4 - cells.count("p"))
        for side in "wb":
            try:
                game = from_fen(f"{board}[{pocket}] {side} - - 0 1")
            except InvalidPositionError:
                continue
            accepted.add(game.key())
    assert accepted == reachable


# -- FEN -------------------------------------------------------------------------------------


def test_fen_examples() -> None:
    game = from_fen(START_FEN)
    assert (game.side, game.ply, game.x, game.o) == (0, 0, 0, 0)
    game.push(game.parse_move("P@b2"))
    assert game.fen() == "3/1P1/3[PPPPpppp] b - - 0 1"
    game.push(game.parse_move("a1"))
    assert game.fen() == "3/1P1/p2[PPPPppp] w - - 0 2"
    game.push(game.parse_move("P@c3"))
    assert game.fen() == "2P/1P1/p2[PPPppp] b - - 0 2"
    assert (game.side, game.ply, game.moves_played) == (1, 3, (4, 0, 8))


def test_fen_with_omitted_trailing_fields() -> None:
    assert from_fen("3/1P1/3[PPPPpppp] b").fen() == "3/1P1/3[PPPPpppp] b - - 0 1"
    assert from_fen("3/1P1/3[pPpPpPpP] b - -").fen() == "3/1P1/3[PPPPpppp] b - - 0 1"


def test_fen_counters_are_recomputed_from_the_board() -> None:
    assert from_fen("3/1P1/p2[PPPPppp] w - - 7 1").fen() == "3/1P1/p2[PPPPppp] w - - 0 2"


INVALID_FENS = [
    # (fen, reason fragment, offending text named in the message)
    ("", "2 to 6 fields", ""),
    ("3/3/3[PPPPPpppp]", "2 to 6 fields", "3/3/3[PPPPPpppp]"),
    ("3/3/3[PPPPPpppp] w - - 0 1 x", "2 to 6 fields", "3/3/3[PPPPPpppp] w - - 0 1 x"),
    ("3/3/3 w - - 0 1", "pocket in brackets", "3/3/3"),
    ("3/3/3[PPPPPpppp]] w - - 0 1", "pocket in brackets", "3/3/3[PPPPPpppp]]"),
    ("3/3[PPPPPpppp] w - - 0 1", "3 ranks", "3/3"),
    ("3/3/3/3[PPPPPpppp] w - - 0 1", "3 ranks", "3/3/3/3"),
    ("4/3/3[PPPPPpppp] w - - 0 1", "only P, p and 1-3", "4"),
    ("0/3/3[PPPPPpppp] w - - 0 1", "only P, p and 1-3", "0"),
    ("3/X2/3[PPPPPpppp] w - - 0 1", "unexpected 'X' in rank 2", "X2"),
    ("2/3/3[PPPPPpppp] w - - 0 1", "rank 3 is not 3 squares wide", "2"),
    ("3/3/PPPP[Pppp] b - - 0 1", "rank 1 is not 3 squares wide", "PPPP"),
    ("3/3/1P2[PPPPpppp] b - - 0 1", "rank 1 is not 3 squares wide", "1P2"),
    ("PP1/3/3[PPPpppp] b - - 0 1", "X has 2 marks and O has 0", "PP1/3/3"),
    ("3/1p1/3[PPPPPppp] b - - 0 1", "X has 0 marks and O has 1", "3/1p1/3"),
    ("PPP/ppp/3[PPp] b - - 0 1", "both X and O have a completed line", "PPP/ppp/3"),
    ("PPP/pp1/p2[PPp] w - - 0 1", "X has a completed line but O moved after it", "PPP/pp1/p2"),
    ("ppp/PP1/P1P[Pp] w - - 0 1", "O has a completed line but X moved after it", "ppp/PP1/P1P"),
    ("3/3/3[PPPPPpppp] x - - 0 1", "side to move must be 'w' or 'b'", "x"),
    ("3/3/3[PPPPPpppp] b - - 0 1", "so X (w) is to move", "b"),
    ("3/1P1/3[PPPPpppp] w - - 0 1", "so O (b) is to move", "w"),
    ("3/3/3[PPPPPppppx] w - - 0 1", "only P and p", "PPPPPppppx"),
    ("3/1P1/3[PPPPPpppp] b - - 0 1", "4 P and 4 p", "PPPPPpppp"),
    ("3/3/3[PPPPPppp] w - - 0 1", "5 P and 4 p", "PPPPPppp"),
    ("3/3/3[] w - - 0 1", "5 P and 4 p", ""),
    ("3/3/3[PPPPPpppp] w KQkq - 0 1", "no castling", "KQkq"),
    ("3/3/3[PPPPPpppp] w - b2 0 1", "no en passant", "b2"),
    ("3/3/3[PPPPPpppp] w - - x 1", "halfmove clock must be a number", "x"),
    ("3/3/3[PPPPPpppp] w - - 0 0", "fullmove number must be at least 1", "0"),
    ("3/3/3[PPPPPpppp] w - - 0 -1", "fullmove number must be at least 1", "-1"),
]


@pytest.mark.parametrize(("fen", "reason", "offending"), INVALID_FENS)
def test_invalid_fens(fen: str, reason: str, offending: str) -> None:
    with pytest.raises(InvalidPositionError) as caught:
        from_fen(fen)
    message = str(caught.value)
    assert reason in message
    assert message.endswith(f"({offending})")


def test_constructor_validates_bitboards() -> None:
    assert TicTacToe(1 << 4, 1 << 0).fen() == "3/1P1/p2[PPPPppp] w - - 0 2"
    with pytest.raises(InvalidPositionError, match="X has 0 marks and O has 1") as caught:
        TicTacToe(0, 1 << 4)
    assert str(caught.value).endswith("(3/1p1/3)")
    with pytest.raises(InvalidPositionError, match="a square holds both X and O"):
        TicTacToe(1 << 4, 1 << 4)
    with pytest.raises(InvalidPositionError, match="outside the 3x3 board"):
        TicTacToe(1 << 9, 0)


# -- moves -----------------------------------------------------------------------------------


def test_parse_and_format_every_square() -> None:
    game = from_fen(START_FEN)
    names = ["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]
    for square, name in enumerate(names):
        assert game.format_move(square) == f"P@{name}"
        assert game.parse_move(f"P@{name}") == square
        assert game.parse_move(name) == square
    assert sorted(game.legal_moves()) == list(range(9))


@pytest.mark.parametrize(
    ("moves", "text", "reason"),
    [
        ([], "P@d4", "not a tic-tac-toe move"),
        ([], "d4", "not a tic-tac-toe move"),
        ([], "x", "not a tic-tac-toe move"),
        ([], "0000", "not a tic-tac-toe move"),
        ([], "", "not a tic-tac-toe move"),
        ([], "P@", "not a tic-tac-toe move"),
        ([], "p@b2", "not a tic-tac-toe move"),
        ([], "N@b2", "not a tic-tac-toe move"),
        ([], "B2", "not a tic-tac-toe move"),
        (["b2"], "b2", "square b2 is already taken"),
        (["b2"], "P@b2", "square b2 is already taken"),
        (["a1", "a2", "b1", "b2", "c1"], "c3", "the game is over: X won"),
    ],
)
def test_parse_move_rejects(moves: list[str], text: str, reason: str) -> None:
    game = from_fen(START_FEN)
    for move in moves:
        game.push(game.parse_move(move))
    with pytest.raises(IllegalMoveError) as caught:
        game.parse_move(text)
    assert reason in str(caught.value)
    assert str(caught.value).endswith(f"({text})")


def test_push_pop_restore_and_copy_is_independent() -> None:
    game = from_fen("3/1P1/p2[PPPPppp] w - - 0 2")
    before = (game.fen(), game.key(), game.side, game.ply)
    clone = game.copy()
    for move in game.legal_moves():
        game.push(move)
        assert game.ply == before[3] + 1
        assert game.side == 1
        game.pop()
        assert (game.fen(), game.key(), game.side, game.ply) == before
    clone.push(clone.parse_move("c3"))
    assert game.fen() == before[0]
    assert clone.moves_played == (8,)
    assert clone.copy().moves_played == (8,)
    with pytest.raises(IndexError):
        game.pop()
    assert game.fen() == before[0]


def test_no_checks_and_no_null_move() -> None:
    game = from_fen(START_FEN)
    assert not game.in_check()
    assert not game.can_null_move()
    with pytest.raises(GameError, match="no null move"):
        game.push_null()
    assert game.fen() == START_FEN


def test_legal_moves_follow_the_ordering_hint() -> None:
    """Centre, corners, edges: the strong squares first for a search without ordering."""
    game = from_fen("3/3/3[PPPPPpppp] w - - 0 1")
    assert game.legal_moves() == [4, 0, 2, 6, 8, 1, 3, 5, 7]


# -- terminal rules --------------------------------------------------------------------------


def test_completed_line_ends_the_game() -> None:
    """X completed rank 3; O to move has lost.

    3  X X X
    2  O O .
    1  . . .
       a b c
    """
    game = from_fen("PPP/pp1/3[PPpp] b - - 0 3")
    assert game.is_terminal()
    assert game.terminal_value() == -1
    assert game.legal_moves() == []
    assert game.noisy_moves() == []
    assert game.quiet_moves() == []
    assert not any(game.is_noisy(square) for square in range(9))


def test_full_board_without_line_is_a_draw() -> None:
    """Nine marks, no line: nobody can move and nobody won.

    3  X O X
    2  X O O
    1  O X X
       a b c
    """
    game = from_fen("PpP/Ppp/pPP[] b - - 0 5")
    assert game.is_terminal()
    assert game.terminal_value() == 0
    assert game.legal_moves() == []


def test_winning_with_the_last_mark_is_a_win_not_a_draw() -> None:
    """X fills the board with c1, completing rank 1.

    3  X O O
    2  O O X
    1  X X .      X to move, c1 wins
       a b c
    """
    game = from_fen("Ppp/ppP/PP1[P] w - - 0 5")
    assert not game.is_terminal()
    assert game.noisy_moves() == [2]
    game.push(2)
    assert game.is_terminal()
    assert game.terminal_value() == -1
    assert game.legal_moves() == []


def test_terminal_rules_on_every_position(positions: list[TicTacToe]) -> None:
    for game in positions:
        mover_has_line = has_line(game.o if game.side == 0 else game.x)
        full = game.x | game.o == 0x1FF
        assert not has_line(game.x if game.side == 0 else game.o)
        assert game.is_terminal() == (mover_has_line or full)
        assert (game.legal_moves() == []) == game.is_terminal()
        if game.is_terminal():
            assert game.terminal_value() == (-1 if mover_has_line else 0)


# -- noisy / quiet ---------------------------------------------------------------------------


def test_noisy_and_quiet_partition_the_legal_moves(positions: list[TicTacToe]) -> None:
    for game in positions:
        legal = game.legal_moves()
        noisy = game.noisy_moves()
        quiet = game.quiet_moves()
        assert len(set(legal)) == len(legal)
        assert sorted(noisy + quiet) == sorted(legal)
        own, opp = (game.x, game.o) if game.side == 0 else (game.o, game.x)
        wins = sorted(m for m in legal if has_line(own | 1 << m))
        blocks = sorted(m for m in legal if has_line(opp | 1 << m) and m not in wins)
        assert sorted(noisy[: len(wins)]) == wins
        assert sorted(noisy[len(wins) :]) == blocks
        for square in range(9):
            assert game.is_noisy(square) == (square in noisy)


def test_block_is_the_only_noisy_move() -> None:
    """O to move must block a2.

    3  X . .
    2  . O .
    1  X . .
       a b c
    """
    game = from_fen("P2/1p1/P2[PPPppp] b - - 0 2")
    assert game.noisy_moves() == [3]
    assert game.is_noisy(3)
    assert sorted(game.quiet_moves()) == [1, 2, 5, 7, 8]


def test_wins_come_before_blocks() -> None:
    """X to move can win at b1 or block O's rank 2 at a2: the win comes first.

    3  . . .
    2  . O O
    1  X . X      X to move
       a b c
    """
    game = from_fen("3/1pp/P1P[PPPpp] w - - 0 3")
    assert game.noisy_moves() == [1, 3]


# -- evaluation ------------------------------------------------------------------------------


def test_features_and_evaluation_of_a_known_position() -> None:
    """From O's point of view (O to move):

    3  X . .      lines open to O: rank 2, file b, file c           = 3
    2  . O .      lines open to X: rank 3, rank 1, file a, file c  = 4
    1  X . .      X threatens a2 (file a); O has no threat
       a b c      O holds the centre
    """
    game = from_fen("P2/1p1/P2[PPPppp] b - - 0 2")
    assert game.features() == {"open_lines": -1, "threats": -1, "center": 1}
    assert game.evaluate() == 10 * -1 + 30 * -1 + 5 * 1
    assert game.evaluator.evaluate(game.features()) == -35


def test_default_weights_and_start_position() -> None:
    assert DEFAULT_WEIGHTS == {"open_lines": 10, "threats": 30, "center": 5}
    game = from_fen(START_FEN)
    assert game.features() == {"open_lines": 0, "threats": 0, "center": 0}
    assert game.evaluate() == 0
    game.push(4)  # X takes the centre: O has 4 lines left, X all 8
    assert game.features() == {"open_lines": -4, "threats": 0, "center": -1}
    assert game.evaluate() == -45


@pytest.mark.parametrize(
    "weights",
    [
        DEFAULT_WEIGHTS,
        {"open_lines": 0.7, "threats": -1.3, "center": 2.55},
        {"open_lines": 1.5, "threats": 0.5},
        {},
    ],
)
def test_evaluate_agrees_with_the_features(
    positions: list[TicTacToe], weights: dict[str, float]
) -> None:
    evaluator = LinearEvaluator(weights)
    for game in positions:
        position = TicTacToe.from_fen(game.fen(), evaluator=evaluator)
        assert position.evaluate() == evaluator.evaluate(position.features())


def swap_colours(game: TicTacToe) -> TicTacToe:
    return TicTacToe(game.o, game.x)


def test_features_change_sign_when_colours_swap(positions: list[TicTacToe]) -> None:
    checked = 0
    for game in positions:
        if game.side != 0 or game.is_terminal():
            continue
        swapped = swap_colours(game)
        assert swapped.side == 0
        features = game.features()
        assert swapped.features() == {name: -value for name, value in features.items()}
        assert swapped.evaluate() == -game.evaluate()
        checked += 1
    assert checked > 1000


def symmetries() -> list[Callable[[int], int]]:
    """The 8 symmetries of the square as maps of 9-bit masks."""

    def remap(perm: list[int]) -> Callable[[int], int]:
        return lambda mask: sum(1 << perm[s] for s in range(9) if mask >> s & 1)

    def rotate(s: int) -> int:
        r, f = divmod(s, 3)
        return f * 3 + (2 - r)

    def mirror(s: int) -> int:
        r, f = divmod(s, 3)
        return r * 3 + (2 - f)

    maps = []
    for turns in range(4):
        for flip in (False, True):
            perm = []
            for s in range(9):
                t = mirror(s) if flip else s
                for _ in range(turns):
                    t = rotate(t)
                perm.append(t)
            maps.append(remap(perm))
    return maps


def test_features_are_invariant_under_board_symmetries(positions: list[TicTacToe]) -> None:
    maps = symmetries()
    classes = set()
    for game in positions:
        features = game.features()
        images = [TicTacToe(f(game.x), f(game.o)) for f in maps]
        assert all(image.features() == features for image in images)
        classes.add(min(image.key() for image in images))
    assert len(classes) == 765


# -- contract, registry, display -------------------------------------------------------------


def test_registry_and_contract() -> None:
    variant = get_variant("tictactoe")
    assert variant.start_fen == START_FEN
    assert variant.description == "Tic-tac-toe (noughts and crosses)"
    game = variant.new()
    assert isinstance(game, TicTacToe)
    assert isinstance(game, Game)
    assert game.variant == "tictactoe"
    assert variant.new("3/1P1/3[PPPPpppp] b - - 0 1", chess960=True).key() == 1 << 4 | 1 << 18
    with pytest.raises(InvalidPositionError):
        variant.new("8/8/8/8/8/8/8/8 w - - 0 1")


def test_display() -> None:
    game = from_fen("2P/1p1/P2[PPPppp] b - - 0 2")
    assert game.display().splitlines() == [
        "3  . . X",
        "2  . O .",
        "1  X . .",
        "   a b c",
        "Fen: 2P/1p1/P2[PPPppp] b - - 0 2",
    ]
    assert repr(game) == "TicTacToe.from_fen('2P/1p1/P2[PPPppp] b - - 0 2')"
