"""bench/calibrate_levels.py's commands at small sizes: its arguments, the points and verdicts
it computes, the calibration file it writes, and tiny node-limited Brudno v Brudno matches
(never a timed game: the calibration itself is the lead's, at 10+0.1)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from games.calibration import TABLE_END, TABLE_START, Calibration, Point, chain_opponent
from games.chess_game.levels import CALIBRATION_PATH, CHESS_CALIBRATION
from tests.support.bench_scripts import import_bench_script
from tests.support.paths import REPO

SCRIPT = REPO / "bench" / "calibrate_levels.py"


def _point(elo: int, level: float, wdl: tuple[int, int, int], diff: float) -> Point:
    wins, draws, losses = wdl
    return Point(
        elo=elo, level=level, opponent=f"Stockfish {elo}", opponent_elo=elo, games=40,
        wins=wins, draws=draws, losses=losses, diff=diff, margin=110.0, interval=110.0,
        date="2026-11-24", command="python bench/calibrate_levels.py verify 1350 1500 1600",
    )  # fmt: skip


FILE = Calibration(
    reference=CHESS_CALIBRATION.reference,
    status="a fixed file for these tests (the shipped one changes with every calibration)",
    points=(
        _point(1350, 10.5, (25, 1, 14), 98.0),
        _point(1500, 14.7, (19, 2, 19), 0.0),
        _point(1600, 17.5, (18, 0, 22), -35.0),
    ),
)
"""Three points with fractional levels above level 4: what a recalibration starts from."""


@pytest.fixture(scope="module")
def tool() -> ModuleType:
    return import_bench_script("calibrate_levels")


def pair(wins: int, draws: int, losses: int, elo: float | None, margin: float) -> dict[str, Any]:
    games = wins + draws + losses
    return {
        "games": games,
        "wins": wins,
        "draws": draws,
        "losses": losses,
        "score": (wins + draws / 2) / games,
        "elo": elo,
        "elo_lower": None if elo is None else elo - margin,
        "elo_upper": None if elo is None else elo + margin,
    }


def test_the_ladders_verdict_and_pairs(tool: ModuleType) -> None:
    verdict, said = tool.verdict, tool.Verdict
    assert verdict(20.0, 220.0, 0.66) is said.STRONGER
    assert verdict(-70.0, 130.0, 0.54) is said.UNCLEAR
    assert verdict(-230.0, -30.0, 0.32) is said.WEAKER
    assert verdict(None, None, 1.0) is said.STRONGER  # 100%: unbounded
    assert verdict(None, None, 0.0) is said.WEAKER
    # 27-2-1 leaves the upper bound open; the lower one alone says stronger
    assert verdict(150.0, None, 0.933) is said.STRONGER
    assert verdict(None, -150.0, 0.067) is said.WEAKER
    assert verdict(-40.0, None, 0.9) is said.UNCLEAR
    assert tool.ladder_pairs([8, 0, 4, 4, 20]) == [(0, 4), (4, 8), (8, 20)]


def test_each_command_parses_its_arguments(tool: ModuleType) -> None:
    parse = tool.parser().parse_args
    chain = parse(["chain", "6", "3", "0", "--nodes", "500", "--games", "4", "--table"])
    assert (chain.points, chain.nodes, chain.games, chain.table) == (
        [6, 3, 0],
        500,
        4,
        CALIBRATION_PATH,
    )
    ladder = parse(["skill-ladder", "0", "10", "20"])
    assert (ladder.points, ladder.games, ladder.tc) == ([0, 10, 20], 30, "10+0.1")
    probe = parse(["probe", "20:1950", "3:900", "--table", "/tmp/t.json"])
    assert probe.points == [(20, 1950), (3, 1350)]  # Stockfish's rungs start at 1350
    assert probe.table == Path("/tmp/t.json")
    assert parse(["verify", "1350", "1500"]).table is None  # no file written unless asked
    for bad in (["skill-ladder", "21"], ["verify", "1500", "--nodes", "9"], ["chain", "x"]):
        with pytest.raises(SystemExit):
            parse(bad)


def test_a_pair_match_plays_each_levels_options(tool: ModuleType) -> None:
    args = tool.parser().parse_args(["skill-ladder", "0", "4", "--depth", "3", "--maxmoves", "9"])
    command = tool.pair_command(args, ["Skill Level=4"], ["Skill Level=0"], ("four", "zero"))
    text = " ".join(command)
    assert "--name four --option Skill Level=4 --engine" in text
    assert text.index("Skill Level=4") < text.index("--name zero") < text.index("Skill Level=0")
    assert "--depth 3" in text and "--tc" not in text and "--maxmoves 9" in text
    assert tool.level_options(8.0, FILE) == ["Skill Level=8"]
    # a fractional level is played by its UCI_Elo
    assert tool.level_options(10.5, FILE)[-1] == "UCI_Elo=1350"
    with pytest.raises(SystemExit):
        tool.level_options(11.37, FILE)


def test_a_measured_point_goes_into_the_table_file_only_when_it_fits(
    tool: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "levels.json"
    table.write_text(FILE.dumps())
    args = tool.parser().parse_args(["chain", "4", "--table", str(table)])
    anchor = min(FILE.points, key=lambda p: p.elo)
    elo, interval = tool.chained(anchor, -200.0, 90.0)
    point = tool.measured_point(
        pair(5, 10, 25, -200.0, 90.0),
        interval,
        elo=elo,
        level=4,
        opponent=chain_opponent(anchor.level),
        opponent_elo=anchor.elo,
        command="python bench/calibrate_levels.py chain 4",
    )
    assert point is not None and (point.elo, point.diff, point.margin) == (elo, -200.0, 90.0)
    updated = tool._record(args, Calibration.read(table), point)
    assert Calibration.read(table) == updated and point in updated.points
    assert min(updated.points, key=lambda p: p.elo) == point
    said = capsys.readouterr().out
    assert f"row {point.row()}" in said and "3 points" not in said and "4 points" in said
    # a stronger Elo at a lower level is no scale: printed, not written
    clash = tool.measured_point(
        pair(30, 5, 5, 300.0, 90.0), 90.0, elo=anchor.elo + 300, level=1, opponent="x",
        opponent_elo=anchor.elo, command="c",
    )  # fmt: skip
    assert tool._record(args, updated, clash) == updated
    assert "table unchanged" in capsys.readouterr().out
    assert Calibration.read(table) == updated
    unbounded = tool.measured_point(
        pair(0, 0, 8, None, 0.0), 0.0, elo=1, level=1, opponent="x", opponent_elo=1, command="c"
    )
    assert unbounded is None


def test_a_verification_that_misses_moves_the_levels_point(
    tool: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """UCI_Elo 1500 plays level 14.7 (FILE's scale, as the engine reads it); scoring +80
    against Stockfish 1500 puts that level at 1580, not at 1500."""
    table = tmp_path / "levels.json"
    table.write_text(FILE.dumps())
    played: list[list[str]] = []

    def fake_played(_base: Any, options: list[str], sf_elo: int) -> tuple[dict[str, Any], float]:
        played.append([*options, f"Stockfish {sf_elo}"])
        return {"pairs": [pair(60, 3, 37, 80.0, 70.0)]}, 0.2

    monkeypatch.setattr(tool, "_played", fake_played)
    monkeypatch.setattr(tool, "_shipped_scale", FILE.scale)
    tool.verify(tool.parser().parse_args(["verify", "1500", "--table", str(table)]), [1500])
    assert played == [["UCI_LimitStrength=true", "UCI_Elo=1500", "Stockfish 1500"]]
    written = Calibration.read(table).point_at_level(14.7)
    assert written is not None
    assert (written.elo, written.opponent_elo, written.diff) == (1580, 1500, 80.0)


def run(*words: str, check: bool = True) -> str:
    """The script's output; ``check``: it must exit 0, else it must fail and its error is
    returned."""
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *words],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if not check:
        assert done.returncode != 0, done.stdout
        return done.stderr
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_skill_ladder_plays_neighbours_and_gives_its_verdict() -> None:
    said = run("skill-ladder", "0", "16", "--games", "2", "--nodes", "300", "--maxmoves", "12")
    lines = said.splitlines()
    assert lines[0].startswith("ladder lower=0 upper=16 games=2 W-D-L=")
    assert " verdict=" in lines[0]
    assert lines[-1].startswith("ladder verdict=") and "pairs=1" in lines[-1]


def test_chain_measures_a_level_against_the_point_above_it(tmp_path: Path) -> None:
    table = tmp_path / "levels.json"
    table.write_text(FILE.dumps())
    anchor = min(FILE.points, key=lambda p: p.elo)
    said = run(
        "chain", "2", "--games", "2", "--nodes", "100", "--maxmoves", "1", "--table", str(table)
    )  # fmt: skip
    assert f"chain level=2 anchor_level={anchor.level:g} anchor_elo={anchor.elo}+/-" in said
    assert "games=2 W-D-L=0-2-0" in said  # a move each, adjudicated drawn
    assert f"row | {anchor.elo} | 2 | Brudno level {anchor.level:g} | 2 | 0-2-0 | 50.0% |" in said
    # equal to its anchor: two levels at one Elo is no scale, so the file stays
    assert "table unchanged" in said
    assert json.loads(table.read_text()) == json.loads(FILE.dumps())


def test_a_new_table_file_collects_points_before_they_make_a_scale(
    tool: ModuleType, tmp_path: Path
) -> None:
    table = tmp_path / "new.json"
    args = tool.parser().parse_args(["probe", "8:1400", "--table", str(table)])
    fresh = tool._calibration(args)
    assert fresh.points == () and fresh.reference == CHESS_CALIBRATION.reference

    def probed(level: int, elo: int) -> Any:
        return tool.measured_point(
            pair(20, 0, 20, 0.0, 100.0), 100.0, elo=elo, level=level,
            opponent=f"Stockfish {elo}", opponent_elo=elo, command="c",
        )  # fmt: skip

    one = tool._record(args, fresh, probed(8, 1400))
    assert Calibration.read(table) == one and len(one.points) == 1  # no scale yet, kept
    two = tool._record(args, one, probed(14, 1700))
    assert two.scale().points == ((1400, 8.0), (1700, 14.0))


def test_print_table_is_the_files_table() -> None:
    said = run("print-table")
    assert said.splitlines()[: len(CHESS_CALIBRATION.rows())] == list(CHESS_CALIBRATION.rows())
    assert CHESS_CALIBRATION.status in said


def test_print_table_docs_writes_the_table_into_each_page(
    tool: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pages = (tmp_path / "README.md", tmp_path / "playing.md")
    for page in pages:
        page.write_text(f"# Page\n\n{TABLE_START}\n| old |\n{TABLE_END}\n\nafter\n")
    table = tmp_path / "levels.json"
    table.write_text(FILE.dumps())
    monkeypatch.setattr(tool, "DOCUMENTS", pages)
    tool.print_table(tool.parser().parse_args(["print-table", "--table", str(table), "--docs"]))
    for page in pages:
        text = page.read_text()
        assert "| old |" not in text and text.endswith(f"{TABLE_END}\n\nafter\n")
        assert "\n".join(FILE.rows()) in text
    assert f"written into {pages[1]}" in capsys.readouterr().out


def test_drop_and_rechain_edit_a_table_file(tmp_path: Path) -> None:
    table = tmp_path / "levels.json"
    anchor = FILE.points[0]
    diff, margin = -200.0, 90.0
    below = replace(
        anchor, level=4.0, opponent=chain_opponent(anchor.level), diff=diff, margin=margin,
        elo=anchor.elo - 100, interval=50.0,  # as if placed on an older anchor point
    )  # fmt: skip
    table.write_text(replace(FILE, points=(below, *FILE.points)).dumps())
    assert "table " in run("rechain", "--table", str(table))
    mended = Calibration.read(table).point_at_level(4.0)
    assert mended is not None and mended.elo == round(anchor.elo + diff)
    assert mended.interval == round(math.hypot(anchor.interval, margin), 1)
    run("drop", "17.5", "--table", str(table))
    assert [p.level for p in Calibration.read(table).points] == [4.0, 10.5, 14.7]
    refused = run("drop", "10.5", "--table", str(table), check=False)
    assert "table unchanged: level 4 is chained to level 10.5" in refused


@pytest.mark.parametrize(
    "mode",
    [
        "probe",
        "verify",
        "chain",
        "skill-ladder",
        "print-table",
        "drop",
        "rechain",
        "speed",
        "seconds-per-move",
    ],
)
def test_every_command_prints_its_help(tool: ModuleType, mode: str) -> None:
    """argparse raises on a mutually exclusive group left empty when it formats the usage."""
    with pytest.raises(SystemExit) as exit_:
        tool.parser().parse_args([mode, "--help"])
    assert exit_.value.code == 0
