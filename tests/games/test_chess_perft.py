"""Perft through the adapter on the shared suites, and the noisy/quiet partition on them.

Depths are chosen by node count so the whole file stays within about half a minute here:
every position to its deepest depth of at most ``SHALLOW`` leaves, a few deeper ones marked
slow.  ``tricky.perft`` and ``chess960.perft`` are read in Chess960 mode (X-FEN / Shredder-FEN
castling), as python-chess's own harness reads them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

import chess
import pytest

from engine.perft import divide, perft
from games.chess_game import ChessGame
from tests.support.paths import DATA

PERFT_DIR = DATA / "chess" / "perft"
SHALLOW = 10_000
"""Largest leaf count run for every position of a suite."""


class Case(NamedTuple):
    name: str
    fen: str
    chess960: bool
    counts: dict[int, int]

    def deepest(self, limit: int) -> tuple[int, int]:
        """The deepest (depth, count) with at most ``limit`` leaves."""
        return max((d, n) for d, n in self.counts.items() if n <= limit)

    def game(self) -> ChessGame:
        # The constructor, not the registry: perft.epd holds unreachable positions.
        return ChessGame(chess.Board(self.fen, chess960=self.chess960))


def read_epd_suite() -> list[Case]:
    """``FEN ;D1 n ;D2 n ...``, one position per line."""
    cases = []
    lines = (PERFT_DIR / "perft.epd").read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        fen, *fields = line.split(";")
        counts = {}
        for field in fields:
            label, value = field.split()
            counts[int(label.removeprefix("D"))] = int(value)
        cases.append(Case(f"perft.epd:{number}", fen.strip(), False, counts))
    return cases


def read_blocks(file_name: str) -> list[Case]:
    """Blocks of ``id <name>`` / ``epd <EPD>`` / ``perft <depth> <nodes>``; ``#`` comments."""
    cases: list[Case] = []
    name = fen = None
    counts: dict[int, int] = {}

    def flush() -> Iterator[Case]:
        if name is not None and fen is not None:
            yield Case(f"{file_name}:{name}", fen, True, counts)

    for raw in (PERFT_DIR / file_name).read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ")
        if keyword == "id":
            cases.extend(flush())
            name, fen, counts = rest, None, {}
        elif keyword == "epd":
            fen = rest
        elif keyword == "perft":
            depth, nodes = rest.split()
            counts[int(depth)] = int(nodes)
        else:
            raise ValueError(f"{file_name}: unexpected line {raw!r}")
    cases.extend(flush())
    return cases


EPD_SUITE = read_epd_suite()
TRICKY = read_blocks("tricky.perft")
CHESS960 = read_blocks("chess960.perft")


def test_the_suites_are_complete() -> None:
    assert (len(EPD_SUITE), len(TRICKY), len(CHESS960)) == (127, 19, 960)
    assert EPD_SUITE[0].counts[1] == 20
    assert CHESS960[0].counts[1] == 21


@pytest.mark.parametrize("case", EPD_SUITE, ids=lambda c: c.name)
def test_perft_suite(case: Case) -> None:
    depth, expected = case.deepest(SHALLOW)
    assert perft(case.game(), depth) == expected


@pytest.mark.parametrize("case", TRICKY, ids=lambda c: c.name)
def test_tricky_positions(case: Case) -> None:
    depth, expected = case.deepest(100_000)
    assert perft(case.game(), depth) == expected


@pytest.mark.parametrize("first", range(0, 960, 120), ids=lambda i: f"chess960-{i}-{i + 119}")
def test_chess960_positions(first: int) -> None:
    failures = []
    for case in CHESS960[first : first + 120]:
        depth, expected = case.deepest(SHALLOW)
        found = perft(case.game(), depth)
        if found != expected:
            failures.append((case.name, depth, expected, found))
    assert failures == []


@pytest.mark.slow
@pytest.mark.parametrize("line", [1, 8, 40, 120], ids=lambda n: f"perft.epd:{n}")
def test_deeper_perft(line: int) -> None:
    """A few suite positions a level deeper (start, castling, knights, promotions), up to
    200,000 leaves."""
    case = EPD_SUITE[line - 1]
    depth, expected = case.deepest(200_000)
    assert depth > case.deepest(SHALLOW)[0]
    assert perft(case.game(), depth) == expected


@pytest.mark.slow
def test_deeper_chess960_sample() -> None:
    """Every 120th Chess960 position to its deepest count of at most 100,000 leaves."""
    for case in CHESS960[::120]:
        depth, expected = case.deepest(100_000)
        assert (case.name, perft(case.game(), depth)) == (case.name, expected)


def test_divide_on_kiwipete_sums_to_perft() -> None:
    game = next(c for c in TRICKY if c.name.endswith("pos-2")).game()
    counts = divide(game, 2)
    assert len(counts) == 48
    assert sum(n for _, n in counts) == 2039
    # Read in Chess960 mode, castling prints as king takes rook.
    assert ("e1h1", 43) in counts and ("e1a1", 43) in counts


def partition_walk(game: ChessGame, depth: int) -> int:
    """Check noisy + quiet = legal (disjoint, ``is_noisy`` agreeing) at every node of the
    tree to ``depth``; returns the number of nodes checked."""
    legal = game.legal_moves()
    noisy = game.noisy_moves()
    quiet = game.quiet_moves()
    assert len(noisy) + len(quiet) == len(legal), game.fen()
    assert set(noisy) | set(quiet) == set(legal), game.fen()
    noisy_set = set(noisy)
    assert all(game.is_noisy(m) == (m in noisy_set) for m in legal), game.fen()
    nodes = 1
    if depth > 0:
        for move in legal:
            game.push(move)
            nodes += partition_walk(game, depth - 1)
            game.pop()
    return nodes


def test_noisy_quiet_partition_on_the_suites() -> None:
    nodes = 0
    for case in EPD_SUITE + TRICKY:
        nodes += partition_walk(case.game(), 1)
    for case in CHESS960[::10]:
        nodes += partition_walk(case.game(), 1)
    assert nodes > 4_000
