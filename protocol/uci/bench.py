"""The ``bench`` command: a fixed set of positions searched to a fixed depth.

Two numbers come out.  The total node count is a *signature*: it changes only when the search
(or the evaluation, or move ordering) changes, so a refactoring that claims to change nothing
can prove it.  Nodes per second is the speed figure; it varies with the machine and its load.
Each position is searched by a fresh Searcher so the signature does not depend on the order.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from engine.control import SearchControl
from engine.limits import Limits
from engine.search import Searcher
from games.registry import get_variant

BENCH_POSITIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "chess": (
        ("start position", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
        (
            "middlegame: Kiwipete",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        ),
        (
            "middlegame: Italian, both castled",
            "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 0 7",
        ),
        (
            "middlegame: Queen's Gambit Declined",
            "r1bq1rk1/pp1nbppp/2p1pn2/3p2B1/2PP4/2NBPN2/PP3PPP/R2QK2R w KQ - 0 8",
        ),
        ("endgame: rook and pawns", "8/5pk1/6p1/3R4/5P2/6PK/r7/8 w - - 0 40"),
    ),
    "tictactoe": (
        ("empty board", "3/3/3[PPPPPpppp] w - - 0 1"),
        ("after b2", "3/1P1/3[PPPPpppp] b - - 0 1"),
    ),
}

DEFAULT_DEPTH = {"chess": 5, "tictactoe": 9}


@dataclass(frozen=True, slots=True)
class BenchLine:
    name: str
    fen: str
    nodes: int
    time_ms: int
    best: str | None
    cutoffs: int = 0
    first_cutoffs: int = 0


@dataclass(frozen=True, slots=True)
class BenchResult:
    variant: str
    depth: int
    positions: tuple[BenchLine, ...] = field(default_factory=tuple)
    stopped: bool = False
    """``stop`` ended the bench early: the figures cover the positions listed only."""

    @property
    def nodes(self) -> int:
        return sum(p.nodes for p in self.positions)

    @property
    def time_ms(self) -> int:
        return sum(p.time_ms for p in self.positions)

    @property
    def first_move_cutoff_rate(self) -> float:
        """Share of beta cut-offs made by the first move tried (move-ordering quality)."""
        cutoffs = sum(p.cutoffs for p in self.positions)
        return sum(p.first_cutoffs for p in self.positions) / cutoffs if cutoffs else 0.0

    @property
    def nps(self) -> int:
        return self.nodes * 1000 // max(1, self.time_ms)

    def lines(self) -> list[str]:
        """Stockfish's closing convention, so scripts that parse its bench can parse ours."""
        out = [
            f"Position {i}/{len(self.positions)} ({p.name}): {p.nodes} nodes, "
            f"{p.time_ms} ms, bestmove {p.best or '0000'}"
            for i, p in enumerate(self.positions, 1)
        ]
        if self.stopped:
            out.append("info string bench stopped: the totals cover the positions above only")
        out += [
            "===========================",
            f"Fail-high on first move: {100 * self.first_move_cutoff_rate:.1f}%",
            f"Total time (ms) : {self.time_ms}",
            f"Nodes searched: {self.nodes}",
            f"Nodes/second: {self.nps}",
        ]
        return out


def bench_positions(variant: str) -> tuple[tuple[str, str], ...]:
    try:
        return BENCH_POSITIONS[variant]
    except KeyError:
        return (("start position", get_variant(variant).start_fen),)


def run_bench(
    variant: str = "chess",
    depth: int | None = None,
    hash_mb: int = 16,
    *,
    control: SearchControl | None = None,
) -> BenchResult:
    """Search every bench position of ``variant`` to ``depth`` with a fresh Searcher each.

    ``control`` lets ``stop`` (or a disconnect) end a long bench: the position being searched
    is abandoned and the result, marked ``stopped``, covers the positions finished before.
    """
    spec = get_variant(variant)
    depth = depth or DEFAULT_DEPTH.get(variant, 5)
    control = control or SearchControl()
    lines = []
    for name, fen in bench_positions(variant):
        if control.stopped:
            break
        searcher = Searcher(hash_mb)
        started = time.perf_counter()
        result = searcher.search(spec.new(fen), Limits(depth=depth), control=control)
        if control.stopped:
            break
        elapsed = round((time.perf_counter() - started) * 1000)
        lines.append(
            BenchLine(
                name,
                fen,
                result.nodes,
                elapsed,
                result.best,
                result.cutoffs,
                result.first_cutoffs,
            )
        )
    return BenchResult(variant, depth, tuple(lines), stopped=control.stopped)
