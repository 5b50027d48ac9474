"""Where each engine spends its clock over a game, from the PGN of a `brudno match` run.

    python bench/time_profile.py /tmp/m16/movesleft.pgn movesleft base

    python bench/time_profile.py ladder2150.pgn Brudno "Stockfish 2150" --first 20

For each named player: the mean depth of its moves, and its mean time a move in blocks of ten
of its own moves from the opening position on (the last block holds every move after it);
then the mean time a game over its first ``--first`` timed moves, and the clock it had left
when the game ended (median and least: the starting clock plus one increment a move, minus
the time used; games whose ``TimeControl`` has moves per period are left out of that figure).
Read from the move comments `brudno match` writes (``{+0.31/7 0.171s}``: score, depth, time;
``{depth 7 0.171s}`` without a score, ``{0.171s}`` with neither); book moves have no time and
are not counted.
A time-management change is judged by a match; this shows what it changed, e.g. whether a
new plan moved time from the opening to the middlegame.
"""

from __future__ import annotations

import argparse
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import chess.pgn

from brudno.arena.clock import TimeControl

_TIME = re.compile(r"([0-9]+\.[0-9]+)s\b")
_DEPTH = re.compile(r"(?:/|depth )([0-9]+) ")
_BLOCK = 10
_BLOCKS = 7


@dataclass
class PlayerTime:
    """One player's times over the games read."""

    depths: list[int] = field(default_factory=list)
    """The depths of its moves, where reported."""
    blocks: list[list[float]] = field(default_factory=lambda: [[] for _ in range(_BLOCKS)])
    """Its move times by block of ten own timed moves."""
    first: list[float] = field(default_factory=list)
    """Per game: the seconds its first ``first`` timed moves took."""
    left: list[float] = field(default_factory=list)
    """Per game with a clock for the whole game: the seconds it had left at the end."""


def profile(path: Path, names: list[str], first: int = 20) -> dict[str, PlayerTime]:
    """Each named player's times in the games of ``path``."""
    found = {name: PlayerTime() for name in names}
    with path.open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            white, black = game.headers.get("White", "?"), game.headers.get("Black", "?")
            times: dict[str, list[float]] = {white: [], black: []}
            moves = {white: 0, black: 0}
            for node in game.mainline():
                mover = white if node.parent is not None and node.parent.turn() else black
                moves[mover] += 1
                timed = _TIME.search(node.comment)
                if mover not in found or timed is None:
                    continue
                seconds = float(timed.group(1))
                player = found[mover]
                player.blocks[min(len(times[mover]) // _BLOCK, _BLOCKS - 1)].append(seconds)
                times[mover].append(seconds)
                reported = _DEPTH.search(node.comment)
                if reported is not None:
                    player.depths.append(int(reported.group(1)))
            control = _whole_game_clock(game.headers.get("TimeControl", ""))
            for name in (white, black):
                if name not in found:
                    continue
                found[name].first.append(sum(times[name][:first]))
                if control is not None:
                    start = (control.base_ms + control.inc_ms * moves[name]) / 1000.0
                    found[name].left.append(start - sum(times[name]))
    return found


def _whole_game_clock(text: str) -> TimeControl | None:
    """The PGN ``TimeControl`` when it is one clock for the whole game, else ``None``."""
    try:
        control = TimeControl.parse(text)
    except ValueError:
        return None
    return control if control.moves is None else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pgn", type=Path)
    parser.add_argument("names", nargs="+", help="players as named in the PGN")
    parser.add_argument("--first", type=int, default=20, help="timed moves counted as the first")
    args = parser.parse_args()
    for name, player in profile(args.pgn, args.names, args.first).items():
        if not any(player.blocks):
            print(f"{name}: no moves with a time comment")
            continue
        times = " ".join(
            f"{i * _BLOCK}-{i * _BLOCK + _BLOCK - 1 if i < _BLOCKS - 1 else ''}: "
            f"{statistics.fmean(block):.3f}s"
            for i, block in enumerate(player.blocks)
            if block
        )
        depth = f"{statistics.fmean(player.depths):.2f}" if player.depths else "not reported"
        print(f"{name}: depth {depth}, time a move by own move {times}")
        clock = (
            f", left at the end median {statistics.median(player.left):.2f} s, "
            f"least {min(player.left):.2f} s"
            if player.left
            else ""
        )
        print(
            f"{name}: {len(player.first)} games, first {args.first} moves "
            f"{statistics.fmean(player.first):.2f} s{clock}"
        )


if __name__ == "__main__":
    main()
