"""``brudno solve``: the real command for the documented examples, and the command's run
function in-process (same parser) for the rest of its interface: JSON fields, stdin test-set
lines and their check, Grundy's game, analysis, weak solving and exit statuses."""

from __future__ import annotations

import io
import json
import re
import subprocess
from array import array
from pathlib import Path

import pytest

from brudno.cli import build_parser
from brudno.commands import solve
from games.connect4.board import Connect4
from games.connect4.book import BookKind, Connect4Book, book_key
from games.connect4.book_builder import build_book
from tests.support.paths import DATA

PONS = DATA / "connect4" / "pons"


def run_solve(argv: list[str], stdin: str = "") -> tuple[int, str]:
    args = build_parser().parse_args(["solve", *argv])
    out = io.StringIO()
    status = solve.run(args, stdin=io.StringIO(stdin), stdout=out)
    return status, out.getvalue()


def test_real_command_prints_the_issue_examples_as_json(brudno: list[str]) -> None:
    done = subprocess.run(
        [*brudno, "solve", "--json", "4455"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["score"] == 18
    assert data["best_moves"] == ["P@c1", "P@f1"]
    assert data["best_columns"] == [3, 6]
    assert data["mate"] == 2
    assert isinstance(data["nodes"], int) and data["nodes"] > 0
    assert isinstance(data["time_ms"], float)


def test_real_command_text_output(brudno: list[str]) -> None:
    done = subprocess.run(
        [*brudno, "solve", "44455554221"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "position   44455554221"
    assert lines[2] == "score      -15 (the side to move loses, mated in 1)"
    assert lines[3].startswith("best       4 3 5 2 6 1 7  (P@d5 P@c1")
    assert any(line.startswith("nodes      ") for line in lines)
    assert any(line.startswith("time       ") and line.endswith(" ms") for line in lines)


def test_fen_positions_unquoted_and_quoted() -> None:
    fen = "7/7/7/7/3pp2/3PP2[PPPPPPPPPPPPPPPPPPPppppppppppppppppppp] w - - 0 3"
    for argv in (fen.split(), [fen]):
        status, out = run_solve(["--json", *argv])
        assert status == 0
        assert json.loads(out)["score"] == 18


def test_stdin_test_set_lines_are_checked() -> None:
    lines = (PONS / "Test_L3_R1").read_text(encoding="utf-8").splitlines()[:20]
    status, out = run_solve(["--json", "-"], stdin="\n".join(lines) + "\n")
    assert status == solve.ExitStatus.OK
    results = [json.loads(line) for line in out.splitlines()]
    assert len(results) == 20
    assert all(r["score"] == r["expected"] for r in results)
    assert [r["position"] for r in results] == [line.split()[0] for line in lines]


def test_a_wrong_expected_score_fails_the_run() -> None:
    status, out = run_solve(["-"], stdin="4455 17\n# a comment\n\n44455554221 -15\n")
    assert status == solve.ExitStatus.MISMATCH
    assert "expected   17 (MISMATCH)" in out
    assert "expected   -15 (ok)" in out


def test_bad_input_and_budget_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_solve(["444444445"])[0] == solve.ExitStatus.BAD_INPUT
    assert "drops into full column 4" in capsys.readouterr().err
    assert run_solve(["1212121"])[0] == solve.ExitStatus.BAD_INPUT
    assert "game is over" in capsys.readouterr().err
    assert run_solve([])[0] == solve.ExitStatus.BAD_INPUT
    status, out = run_solve(["--max-nodes", "500", "4453"])
    assert status == solve.ExitStatus.NOT_SOLVED
    assert out == ""
    assert "not solved (node budget" in capsys.readouterr().err


def test_analyze_shows_every_column() -> None:
    status, out = run_solve(["--json", "--analyze", "44455554221"])
    assert status == 0
    data = json.loads(out)
    assert data["column_scores"] == {str(c): -15 for c in range(1, 8)}


def test_weak_solving_reports_the_outcome() -> None:
    moves = (PONS / "Test_L2_R1").read_text(encoding="utf-8").split()[0]
    status, out = run_solve(["--json", "--weak", moves])
    assert status == 0
    data = json.loads(out)
    assert data["score"] == 1 and data["weak"] is True and data["mate"] is None
    assert data["best_moves"]


def test_grundy_positions() -> None:
    status, out = run_solve(["--game", "grundy", "--json", "7"])
    assert status == 0
    data = json.loads(out)
    assert (data["score"], data["outcome"], data["nim_sum"]) == (-1, "loss", 0)
    assert data["best_moves"] == ["7=3+4", "7=2+5", "7=1+6"]
    status, out = run_solve(["--game", "grundy", "5/3/1", "b", "2"])
    assert status == 0
    assert "score      1 (the side to move wins)" in out
    assert "best       5=2+3" in out
    assert "nim-sum    3" in out


@pytest.mark.parametrize(
    ("position", "message"),
    [
        ("8", "no column 8: columns are 1..7 (move 1 of the column string 8)"),
        ("4458", "no column 8: columns are 1..7 (move 4 of the column string 4458)"),
        ("4045", "no column 0: columns are 1..7 (move 2 of the column string 4045)"),
    ],
)
def test_a_bad_column_digit_is_named_as_a_column(
    brudno: list[str], position: str, message: str
) -> None:
    """Digits alone are a column string, never a FEN: the error names the column."""
    done = subprocess.run(
        [*brudno, "solve", position], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == solve.ExitStatus.BAD_INPUT
    assert done.stderr == f"brudno solve: {message}\n"
    assert "FEN" not in done.stderr


PROGRESS_LINE = re.compile(
    r"solve: (\d+)(?:/(\d+))? positions, solved (\d+), ([\d,]+) nodes, [\d,]+ nodes/s, "
    r"\d+\.\d s"
)


def test_a_long_solve_reports_progress_on_stderr(brudno: list[str]) -> None:
    """The issue's ``--weak 44`` (minutes of work), cut short by a node budget; with stderr
    not a terminal the progress is plain lines, here at every report (interval 0), which the
    solver makes every CHECK_INTERVAL nodes."""
    done = subprocess.run(
        [*brudno, "solve", "--weak", "--max-nodes", "20000", "--progress-interval", "0", "44"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == solve.ExitStatus.NOT_SOLVED
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    progress = [PROGRESS_LINE.fullmatch(line) for line in lines[:-1]]
    assert len(progress) >= 10 and all(progress), done.stderr
    nodes = [int(m.group(4).replace(",", "")) for m in progress if m]
    assert nodes == sorted(nodes) and nodes[-1] >= 10_000
    counts = [m.group(1, 2, 3) for m in progress if m]
    assert set(counts[:-1]) == {("0", "1", "0")}  # under way: 0 of 1 done
    assert counts[-1] == ("1", "1", "0")  # done, not solved
    assert lines[-1].startswith("brudno solve: not solved (node budget")


def test_stdin_progress_counts_positions_and_solved(brudno: list[str]) -> None:
    done = subprocess.run(
        [*brudno, "solve", "--progress-interval", "0", "-"],
        input="4455\n8\n44455554221\n",
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == solve.ExitStatus.BAD_INPUT  # the "8"
    progress = [m for line in done.stderr.splitlines() if (m := PROGRESS_LINE.fullmatch(line))]
    # No total for stdin: positions done, and solved of them, after each position.
    assert [m.group(1, 2, 3) for m in progress] == [
        ("1", None, "1"),
        ("2", None, "1"),
        ("3", None, "2"),
    ]
    assert "brudno solve: no column 8" in done.stderr


def test_quiet_silences_progress(brudno: list[str]) -> None:
    done = subprocess.run(
        [*brudno, "solve", "--quiet", "--progress-interval", "0", "4455"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0
    assert done.stderr == ""


# -- the book ---------------------------------------------------------------------------------
def book_file(tmp_path: Path, moves: str) -> Path:
    """A book of the position and its children (rooted at it), written to a file."""
    root = Connect4.from_moves(moves)
    book, _ = build_book(root.ply + 1, root=root)
    path = tmp_path / "book.bin"
    path.write_bytes(book.to_bytes())
    return path


def test_a_book_answers_without_the_solver_and_agrees_with_it(tmp_path: Path) -> None:
    moves, expected = (PONS / "Test_L2_R1").read_text(encoding="utf-8").split("\n")[0].split()
    path = book_file(tmp_path, moves)
    status, out = run_solve(["--json", "--analyze", "--book", str(path), moves])
    assert status == 0
    from_book = json.loads(out)
    status, out = run_solve(["--json", "--analyze", "--no-book", moves])
    assert status == 0
    solved = json.loads(out)
    assert from_book["book"] is True and solved["book"] is False
    assert from_book["nodes"] == 0 < solved["nodes"]
    assert from_book["score"] == solved["score"] == int(expected)
    for key in ("best_columns", "best_moves", "mate", "column_scores"):
        assert from_book[key] == solved[key], key
    status, out = run_solve(["--json", "--weak", "--book", str(path), moves])
    weak = json.loads(out)
    assert status == 0 and weak["book"] is True and weak["nodes"] == 0
    assert weak["score"] == (int(expected) > 0) - (int(expected) < 0)


def test_an_unusable_book_is_bad_input(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.bin"
    damaged.write_bytes(b"BRC4BOOK" + bytes(20))
    assert run_solve(["--book", str(damaged), "4455"])[0] == solve.ExitStatus.BAD_INPUT
    missing = tmp_path / "missing.bin"
    assert run_solve(["--book", str(missing), "4455"])[0] == solve.ExitStatus.BAD_INPUT


def test_an_outcome_book_answers_weak_solves_only(tmp_path: Path) -> None:
    """An outcome book (a strategy's) gives ``--weak`` its outcome; an exact solve does not
    take the outcome for a score and proves the position."""
    moves, expected = (PONS / "Test_L2_R1").read_text(encoding="utf-8").split("\n")[0].split()
    position = Connect4.from_moves(moves)
    outcome = (int(expected) > 0) - (int(expected) < 0)
    key = book_key(position.current, position.mask)
    book = Connect4Book(position.ply, array("Q", [key]), array("b", [outcome]), BookKind.OUTCOME)
    path = tmp_path / "strategy.bin"
    path.write_bytes(book.to_bytes())
    status, out = run_solve(["--json", "--weak", "--book", str(path), moves])
    weak = json.loads(out)
    assert status == 0 and weak["book"] is True and weak["score"] == outcome
    status, out = run_solve(["--json", "--book", str(path), moves])
    exact = json.loads(out)
    assert status == 0 and exact["book"] is False and exact["score"] == int(expected)
