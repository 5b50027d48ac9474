"""``brudno lab --parallel``: the table, the CSV, the errors, through the real command."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from brudno.cli import main
from brudno.lab.reports import PARALLEL_CSV_COLUMNS
from engine.lab.classic import search
from engine.lab.parallel import SCHEMES
from engine.lab.trees import Order, UniformTree


def lab(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["lab", "--quiet", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_csv_rows_for_every_scheme_and_processor_count(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = lab(capsys, "--tree", "3:5", "--seed", "1", "--parallel", "1,2,4", "--csv")
    assert status == 0
    assert tuple(out.splitlines()[0].split(",")) == PARALLEL_CSV_COLUMNS
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["scheme"], r["processors"]) for r in rows] == [
        (s, p) for s in SCHEMES for p in ("1", "2", "4")
    ]
    serial = search("alphabeta", UniformTree(3, 5, Order.RANDOM, 1), 5)
    assert {r["value"] for r in rows} == {str(serial.value)}
    assert {r["serial_nodes"] for r in rows} == {str(serial.nodes)}
    for r in rows:
        p = int(r["processors"])
        if r["scheme"] != "lazysmp":
            assert float(r["speedup"]) <= p
        assert 0 <= float(r["idle_fraction"]) <= 1
        assert p * int(r["time"]) == int(r["nodes"]) + int(r["idle"])
        if r["scheme"] != "lazysmp" and p == 1:
            assert r["time"] == r["nodes"] == str(serial.nodes)


def test_table_is_deterministic_and_schemes_selectable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ("--tree", "4:4", "--order", "perfect", "--parallel", "4", "--algorithms", "ybwc")
    first = lab(capsys, *args)
    second = lab(capsys, *args)
    assert first == second
    status, out, _ = first
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith("# tree 4:4, perfect order, seed 0; parallel")
    assert lines[1].split()[:3] == ["scheme", "P", "value"]
    assert len(lines) == 3 and lines[2].split()[:2] == ["ybwc", "4"]


def test_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = lab(capsys, "--tree", "2:4", "--parallel", "1,2", "--markdown")
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "| scheme | P | time | nodes | speedup | overhead | idle |"
    assert len(lines) == 2 + 2 * len(SCHEMES)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--game", "tictactoe", "--depth", "3"), "--parallel goes with --tree"),
        (("--tree", "3:4", "--chance", "2"), "chance"),
        (("--tree", "3:4", "--sweep"), "--sweep"),
        (("--tree", "3:4", "--algorithms", "alphabeta"), "unknown parallel scheme"),
    ],
)
def test_refusals(capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str) -> None:
    status, out, err = lab(capsys, *args, "--parallel", "2")
    assert status == 2
    assert out == ""
    assert message in err


@pytest.mark.parametrize("text", ["0", "x", ",", "2,-1"])
def test_bad_processor_counts(capsys: pytest.CaptureFixture[str], text: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["lab", "--tree", "3:4", "--parallel", text])
    assert exit_info.value.code == 2
    capsys.readouterr()


def test_docs_table_is_what_the_lab_prints(capsys: pytest.CaptureFixture[str]) -> None:
    text = (Path(__file__).parents[2] / "docs" / "lab.md").read_text(encoding="utf-8")
    table = text.split("<!-- lab:parallel-random -->\n")[1].split("<!-- /lab:parallel-random")[0]
    status, out, _ = lab(
        capsys, "--tree", "4:8", "--seed", "1", "--parallel", "1,2,4,8,16,32,64", "--markdown"
    )
    assert status == 0
    assert out == table
