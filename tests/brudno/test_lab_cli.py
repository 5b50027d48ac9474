"""``brudno lab``: the interface scripts depend on, its errors, and its plot."""

from __future__ import annotations

import csv
import io
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from brudno.cli import main
from brudno.lab.reports import CSV_COLUMNS
from brudno.lab.runs import Progress
from brudno.lab.sources import TreeSource
from engine.lab.classic import ALGORITHMS, CHANCE_ALGORITHMS, DETERMINISTIC_ALGORITHMS
from engine.lab.trees import TreeSpec, knuth_moore_leaves
from engine.search import ABLATIONS
from protocol.uci.engine import default_specs
from protocol.uci.options import Combo, Options


def lab(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["lab", "--quiet", *args])
    out, err = capsys.readouterr()
    return status, out, err


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_interface_on_a_tree(capsys: pytest.CaptureFixture[str]) -> None:
    algorithms = "minimax,negamax,alphabeta,negascout,mtdf,sssstar,dualstar"
    status, out, _ = lab(
        capsys,
        "--tree",
        "3:4",
        "--order",
        "perfect",
        "--seed",
        "5",
        "--algorithms",
        algorithms,
        "--csv",
    )
    assert status == 0
    header = out.splitlines()[0]
    assert header.startswith("algorithm,value,nodes,leaves")
    assert tuple(header.split(",")) == CSV_COLUMNS
    rows = rows_of(out)
    assert [r["algorithm"] for r in rows] == algorithms.split(",")
    assert len({r["value"] for r in rows}) == 1
    by_name = {r["algorithm"]: r for r in rows}
    assert by_name["minimax"]["nodes"] == str(1 + 3 + 9 + 27 + 81)
    assert by_name["minimax"]["leaves"] == "81"
    assert by_name["alphabeta"]["leaves"] == str(knuth_moore_leaves(3, 4))
    assert by_name["mtdf"]["passes"] == "2"  # perfect trees evaluate exactly: the guess is right
    assert all(r["depth"] == "4" for r in rows)
    assert float(by_name["minimax"]["ebf"]) == pytest.approx(3.0)


def test_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = lab(
        capsys, "--tree", "2:5", "--order", "worst", "--algorithms", "alphabeta,failsoft"
    )
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "# tree 2:5, worst order, seed 0"
    assert lines[1].split()[:6] == ["algorithm", "depth", "value", "nodes", "leaves", "passes"]
    assert lines[2].split()[0] == "alphabeta"
    assert lines[2].split()[3:5] == ["63", "32"]  # worst order: the whole tree
    assert len(lines) == 4


def test_default_algorithms_fit_the_source(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = lab(capsys, "--tree", "2:3", "--csv")
    assert status == 0
    assert [r["algorithm"] for r in rows_of(out)] == list(DETERMINISTIC_ALGORITHMS)
    status, out, _ = lab(capsys, "--tree", "2:4", "--chance", "3", "--csv")
    assert status == 0
    rows = rows_of(out)
    assert [r["algorithm"] for r in rows] == list(CHANCE_ALGORITHMS)
    assert len({r["value"] for r in rows}) == 1


def test_game_source(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = lab(
        capsys,
        "--game",
        "tictactoe",
        "--fen",
        "3/pp1/PP1[PPPpp] w - - 0 3",
        "--depth",
        "3",
        "--algorithms",
        "alphabeta,mtdf",
        "--csv",
    )
    assert status == 0
    rows = rows_of(out)
    assert [r["best"] for r in rows] == ["P@c1", "P@c1"]
    assert rows[0]["value"] == rows[1]["value"] == str(30_000 - 1)  # mate in one ply
    status, out, _ = lab(capsys, "--game", "tictactoe", "--depth", "2", "--algorithms", "negamax")
    assert status == 0
    assert "score" in out.splitlines()[1]
    cells = out.splitlines()[2].split()
    assert cells[:2] == ["negamax", "2"]
    assert cells[3:5] == ["cp", cells[2]]  # the value in UCI's words next to the raw value


def test_sweep_runs_every_depth(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = lab(
        capsys, "--tree", "2:4", "--algorithms", "minimax,alphabeta", "--sweep", "--csv"
    )
    assert status == 0
    rows = rows_of(out)
    assert [(r["depth"], r["algorithm"]) for r in rows] == [
        (str(d), a) for d in range(1, 5) for a in ("minimax", "alphabeta")
    ]
    assert [r["leaves"] for r in rows if r["algorithm"] == "minimax"] == ["2", "4", "8", "16"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tree", "3"], "B:D"),
        (["--tree", "3:4", "--depth", "2"], "--depth goes with --game"),
        (["--tree", "3:4", "--fen", "x"], "--fen goes with --game"),
        (["--game", "tictactoe"], "--game needs --depth"),
        (["--game", "tictactoe", "--depth", "2", "--seed", "1"], "--seed goes with --tree"),
        (["--game", "tictactoe", "--depth", "2", "--fen", "9/9"], "tic-tac-toe"),
        (["--tree", "3:4", "--algorithms", "alphabeta,sss"], "unknown algorithm sss"),
        (["--tree", "3:4", "--algorithms", "star1"], "has no chance nodes"),
        (["--tree", "3:4", "--chance", "2", "--algorithms", "mtdf"], "has chance nodes"),
        (["--tree", "3:4", "--algorithms", ","], "no algorithms"),
        (["--tree", "9:14", "--order", "worst"], "beyond"),
        (["--tree", "3:4", "--chance", "2", "--order", "worst"], "random"),
    ],
)
def test_bad_requests_exit_2_with_a_reason(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    status, out, err = lab(capsys, *args)
    assert status == 2
    assert out == ""
    assert err.startswith("brudno lab: ")
    assert message.lower() in err.lower()


def test_argument_errors_are_argparse_errors(capsys: pytest.CaptureFixture[str]) -> None:
    for args in (["--tree", "3:4", "--game", "chess"], ["--depth", "3"], ["--game", "nope"]):
        with pytest.raises(SystemExit) as exit_info:
            main(["lab", *args])
        assert exit_info.value.code == 2
    capsys.readouterr()


class FakePyplot:
    """Records what the lab asks matplotlib to draw (no matplotlib needed)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.saved: list[Path] = []

    def subplots(self, **_kwargs: Any) -> tuple[Any, Any]:
        recorder = self

        class Axes:
            def __getattr__(self, name: str) -> Any:
                return lambda *args, **_kw: recorder.calls.append((name, args))

        class Figure:
            def tight_layout(self) -> None:
                pass

            def savefig(self, path: Path, **_kw: Any) -> None:
                recorder.saved.append(Path(path))
                Path(path).write_bytes(b"\x89PNG fake")

        return Figure(), Axes()

    def close(self, _figure: Any) -> None:
        pass


def install_fake_matplotlib(monkeypatch: pytest.MonkeyPatch) -> FakePyplot:
    pyplot = FakePyplot()
    matplotlib = types.ModuleType("matplotlib")
    matplotlib.use = lambda backend: pyplot.calls.append(("use", (backend,)))  # type: ignore[attr-defined]
    pyplot_module = types.ModuleType("matplotlib.pyplot")
    for name in ("subplots", "close"):
        setattr(pyplot_module, name, getattr(pyplot, name))
    monkeypatch.setitem(sys.modules, "matplotlib", matplotlib)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", pyplot_module)
    return pyplot


def test_plot_draws_one_line_per_algorithm_on_a_log_scale(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pyplot = install_fake_matplotlib(monkeypatch)
    target = tmp_path / "nodes.png"
    status, out, err = lab(
        capsys,
        "--tree",
        "2:4",
        "--order",
        "worst",
        "--algorithms",
        "minimax,alphabeta",
        "--plot",
        str(target),
        "--plot-metric",
        "leaves",
    )
    assert status == 0
    assert f"plot written to {target}" in err
    assert pyplot.saved == [target]
    assert target.read_bytes().startswith(b"\x89PNG")
    lines = [args for name, args in pyplot.calls if name == "plot"]
    measured = [args for args in lines if args[1] and len(args) == 2]
    assert ([1, 2, 3, 4], [2, 4, 8, 16]) in [(list(a), list(b)) for a, b in measured]
    assert ("set_yscale", ("log",)) in pyplot.calls
    assert ("use", ("Agg",)) in pyplot.calls  # no display needed
    # the reference curves: the full tree and Knuth and Moore's minimal tree
    assert [knuth_moore_leaves(2, d) for d in range(1, 5)] in [list(b) for _, b in measured]
    assert out.count("alphabeta") == 4  # --plot implies the sweep: depths 1..4 in the table


def test_plot_without_matplotlib_says_how_to_get_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes the import fail
    status, out, err = lab(capsys, "--tree", "2:3", "--plot", str(tmp_path / "x.png"))
    assert status == 2
    assert out == ""  # refused before doing the work
    assert "brudno[lab]" in err
    assert not (tmp_path / "x.png").exists()


def test_progress_reports_long_runs_only() -> None:
    now = [0.0]
    stream = io.StringIO()
    progress = Progress(stream, clock=lambda: now[0])
    progress.start("alphabeta depth 9")
    now[0] = 0.5
    progress.poll(1000)
    assert stream.getvalue() == ""  # under a second: silent
    now[0] = 12.0
    progress.poll(5_000_000)
    assert stream.getvalue() == "lab: alphabeta depth 9: 5,000,000 nodes, 12 s\n"
    now[0] = 13.0
    progress.poll(5_100_000)
    assert stream.getvalue().count("\n") == 1  # not a terminal: a line every ten seconds
    progress.done()


def test_tree_source_references() -> None:
    source = TreeSource(TreeSpec.parse("3:4"))
    assert source.references([1, 2], "leaves") == {
        "full tree (b^d)": [3, 9],
        "minimal tree (Knuth-Moore)": [3, 5],
    }
    assert source.references([1, 2], "nodes") == {"full tree": [4, 13]}


def test_uci_algorithm_option_offers_every_playable_algorithm() -> None:
    options = Options(default_specs(["chess"]))
    spec = options.spec("Algorithm")
    assert isinstance(spec, Combo)
    assert spec.default == "pvs"
    assert spec.choices == ("pvs", *ABLATIONS, *DETERMINISTIC_ALGORITHMS)
    options.set("algorithm", "MTDF")
    assert options.get_str("Algorithm") == "mtdf"
    for name in ALGORITHMS:
        if name in CHANCE_ALGORITHMS:
            with pytest.raises(ValueError, match="not one of"):
                options.set("Algorithm", name)
