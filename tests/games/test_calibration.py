"""The levels' calibration as data (games/calibration.py, games/data/chess_levels.json): one
source for the engine's Elo scale, the option's range and the documentation's table."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from games.calibration import (
    TABLE_END,
    TABLE_HEADER,
    TABLE_START,
    Calibration,
    Point,
    chain_opponent,
    chained,
    with_table,
)
from games.chess_game.levels import CALIBRATION_PATH, CHESS_CALIBRATION, CHESS_ELO
from tests.support.paths import REPO


def point(elo: int, level: float, **changed: object) -> Point:
    base = Point(
        elo=elo,
        level=level,
        opponent=f"Stockfish {elo}",
        opponent_elo=elo,
        games=40,
        wins=19,
        draws=3,
        losses=18,
        diff=9.0,
        margin=100.0,
        interval=100.0,
        date="2026-12-01",
        command="python bench/calibrate_levels.py verify",
    )
    return replace(base, **changed)  # type: ignore[arg-type]


@pytest.mark.parametrize("page", ["README.md", "docs/playing.md"])
def test_the_documented_table_is_the_calibration_file(page: str) -> None:
    text = (REPO / page).read_text()
    table = text.split(TABLE_START)[1].split(TABLE_END)[0]
    assert tuple(line for line in table.splitlines() if line) == CHESS_CALIBRATION.rows()
    assert CHESS_CALIBRATION.rows()[:2] == TABLE_HEADER
    declared = f"| UCI_Elo | spin | {CHESS_ELO.lowest} | {CHESS_ELO.lowest}..{CHESS_ELO.highest} |"
    assert declared in (REPO / "docs" / "uci.md").read_text()


def test_the_scale_is_the_files_points_and_each_point_agrees_with_its_match() -> None:
    points = sorted(CHESS_CALIBRATION.points, key=lambda p: p.elo)
    assert CHESS_ELO.points == tuple((p.elo, p.level) for p in points)
    assert Calibration.read(CALIBRATION_PATH) == CHESS_CALIBRATION
    for each in points:
        assert abs(each.elo - (each.opponent_elo + each.diff)) <= each.interval, each
        assert each.interval >= each.margin and each.command and each.date


def test_a_row_shows_the_score_rounded_half_up_and_the_file_round_trips() -> None:
    assert point(1500, 12.0, wins=25, draws=1, losses=14).row() == (
        "| 1500 | 12 | Stockfish 1500 | 40 | 25-1-14 | 63.8% | +9 +/- 100 | 100 | 2026-12-01 |"
    )
    calibration = Calibration("ref", "measured", (point(1350, 8.0), point(1500, 12.5)))
    assert Calibration.loads(calibration.dumps()) == calibration
    with pytest.raises(ValueError, match="W-D-L"):
        point(1350, 8.0, wins=30)


def test_with_table_replaces_only_what_lies_between_the_markers() -> None:
    page = f"intro\n{TABLE_START}\n| stale |\n{TABLE_END}\noutro\n"
    assert with_table(page, ("| a |", "| b |")) == (
        f"intro\n{TABLE_START}\n| a |\n| b |\n{TABLE_END}\noutro\n"
    )
    for broken in (
        "no markers",
        f"{TABLE_END}\n{TABLE_START}",
        f"{TABLE_START}{TABLE_START}{TABLE_END}",
    ):
        with pytest.raises(ValueError, match="marker"):
            with_table(broken, ("| a |",))


def test_a_new_point_replaces_the_one_at_its_level_and_a_scale_must_ascend() -> None:
    calibration = Calibration("ref", "measured", (point(1350, 8.0), point(1500, 12.0)))
    remeasured = calibration.with_point(point(1450, 12.0))
    assert [(p.elo, p.level) for p in remeasured.points] == [(1350, 8.0), (1450, 12.0)]
    top = remeasured.with_point(point(2000, 20.0))  # full strength's own point on top
    assert top.scale().highest == 2000 and top.scale().skill(2000) is None
    lower = top.with_point(point(1100, 4.0))
    assert [p.elo for p in lower.points] == [1100, 1350, 1450, 2000]
    with pytest.raises(ValueError, match="at Elo 1350 already"):
        calibration.with_point(point(1350, 4.0))  # two levels at one Elo: a person decides
    with pytest.raises(ValueError, match="ascend"):
        calibration.with_point(point(1600, 10.0))  # stronger by Elo, weaker by level


def test_a_chained_point_is_its_anchor_plus_the_difference_with_the_errors_added() -> None:
    anchor = point(1350, 8.0, interval=60.0)
    assert chained(anchor, -150.4, 80.0) == (1200, pytest.approx(100.0))
    below = point(1200, 4.0, interval=100.0)
    elo, interval = chained(below, -100.0, 75.0)
    assert (elo, interval) == (1100, pytest.approx(125.0))


def test_a_remeasured_anchor_moves_the_points_chained_below_it() -> None:
    anchor = point(1350, 4.0, interval=60.0)
    two = point(1200, 2.0, opponent=chain_opponent(4.0), opponent_elo=1350, diff=-150.0)
    two = replace(two, margin=80.0, interval=100.0)
    zero = point(1000, 0.0, opponent=chain_opponent(2.0), opponent_elo=1200, diff=-200.0)
    zero = replace(zero, margin=75.0, interval=125.0)
    top = point(1600, 10.0)
    calibration = Calibration("ref", "measured", (zero, two, anchor, top))
    assert calibration.rechained() == calibration  # nothing moved: nothing changes
    moved = calibration.with_point(point(1280, 4.0, interval=70.0, diff=-70.0))
    by_level = {p.level: p for p in moved.points}
    assert (by_level[2.0].elo, by_level[2.0].opponent_elo) == (1130, 1280)
    assert by_level[2.0].interval == round(math.hypot(70.0, 80.0), 1)
    assert (by_level[0.0].elo, by_level[0.0].opponent_elo) == (930, 1130)
    assert by_level[0.0].interval == pytest.approx(math.hypot(70.0, 80.0, 75.0), abs=0.1)
    assert by_level[10.0] == top  # a point measured against a reference stays
    odd = point(1100, 1.0, opponent="Brudno level x")  # not a level's name: left alone
    assert replace(calibration, points=(odd, top)).rechained().points == (odd, top)


def test_a_superseded_probe_is_dropped_but_never_an_anchor() -> None:
    anchor = point(1350, 4.0)
    two = point(1200, 2.0, opponent=chain_opponent(4.0), opponent_elo=1350, diff=-150.0)
    calibration = Calibration("ref", "measured", (two, anchor, point(1458, 7.0)))
    assert [p.level for p in calibration.without_level(7.0).points] == [2.0, 4.0]
    with pytest.raises(ValueError, match="chained to level 4"):
        calibration.without_level(4.0)
    with pytest.raises(ValueError, match="no point at level 9"):
        calibration.without_level(9.0)
