"""Pascal Pons' Connect Four test sets (``shared/data/connect4/pons``, SOURCES.md section 6)."""

from __future__ import annotations

from tests.support.paths import DATA

PONS = DATA / "connect4" / "pons"
"""The directory of the sets: ``Test_L{stage}_R{difficulty}``, 1,000 positions each."""


def pons_cases(name: str, step: int = 1, start: int = 0) -> list[tuple[str, int]]:
    """Every ``step``-th (moves, exact score) of set ``name`` from ``start``; the set is whole."""
    lines = (PONS / name).read_text(encoding="utf-8").splitlines()
    cases = [(moves, int(score)) for moves, score in (line.split() for line in lines if line)]
    assert len(cases) == 1000
    return cases[start::step]
