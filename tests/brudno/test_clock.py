"""The match clock's time controls (``--tc``): parsing and the PGN TimeControl form."""

from __future__ import annotations

import pytest

from brudno.arena.clock import TimeControl


# -- time control ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "base", "inc", "moves", "tag"),
    [
        ("10+0.1", 10_000, 100, None, "10+0.1"),
        ("2+0.02", 2_000, 20, None, "2+0.02"),
        ("40/60", 60_000, 0, 40, "40/60"),
        ("1:30+1", 90_000, 1_000, None, "90+1"),
        ("40/1:00+0.5", 60_000, 500, 40, "40/60+0.5"),
        ("0.5", 500, 0, None, "0.5"),
    ],
)
def test_time_control_parse(text: str, base: int, inc: int, moves: int | None, tag: str) -> None:
    tc = TimeControl.parse(text)
    assert (tc.base_ms, tc.inc_ms, tc.moves) == (base, inc, moves)
    assert tc.text() == tag


@pytest.mark.parametrize("text", ["", "abc", "10+", "0", "0/10", "10++1", "-5+1"])
def test_time_control_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        TimeControl.parse(text)
