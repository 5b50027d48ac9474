"""Which games a match plays, in which order: every pair of engines, each opening twice with
the colours swapped.

Playing each opening with both colours cancels most of what the opening itself gives one
side, and the two games form a *pair*, which the pentanomial statistics
(:mod:`brudno.arena.stats`) count as one outcome.  Pairs of engines are interleaved, so a
match stopped early (an SPRT decision, Ctrl-C) is still balanced across the pairs.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from brudno.arena.openings import Opening
from brudno.arena.settings import MIN_ENGINES, MatchError

__all__ = ["GameJob", "schedule"]


@dataclass(frozen=True, slots=True)
class GameJob:
    """One game to play.  ``pair`` is shared by the two games of an opening between the same
    two engines (colours swapped), which is what the pentanomial statistics count."""

    number: int
    white: int
    black: int
    opening: Opening
    pair: int


def schedule(engines: int, games: int, openings: Sequence[Opening]) -> list[GameJob]:
    """Every pair of engines plays ``games`` games: opening k is played by each pair twice
    (the lower-numbered engine white first), openings in the given order, pairs interleaved
    so that a partial match is balanced across pairs."""
    if engines < MIN_ENGINES:
        raise MatchError("a match needs at least two engines")
    if not openings:
        raise MatchError("no openings")
    pairings = list(itertools.combinations(range(engines), 2))
    jobs: list[GameJob] = []
    rounds = (games + 1) // 2
    pair_id = 0
    for k in range(rounds):
        opening = openings[k % len(openings)]
        for a, b in pairings:
            colours = [(a, b), (b, a)] if 2 * k + 1 < games else [(a, b)]
            for white, black in colours:
                jobs.append(GameJob(len(jobs) + 1, white, black, opening, pair_id))
            pair_id += 1
    return jobs
