"""``EvalFile`` end to end: the real ``brudno`` process under python-chess and raw UCI, and a
TCP session whose searches run in a worker process (the table must survive the pickle trip).

The position all tests use::

    . . . . k . . .
    . . . . . . . .
    . n . . . b . .      an undefended knight (b6) and bishop (f6), both attacked by the
    . . . . . . . .      queen on d4: with the shipped weights the bishop is worth more,
    . . . Q . . . .      with knights at 900 the knight is
    . . . . . . . .
    . . . . . . . .
    . . . . K . . .
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import chess
import chess.engine
import pytest

from brudno.cli import build_parser
from engine.control import SearchControl
from engine.eval import LinearEvaluator
from engine.info import ignore_info
from engine.limits import Limits
from engine.score import Cp
from engine.search import Searcher
from games.chess_game import default_evaluator
from games.registry import get_variant
from protocol.transports.tcp.config import ServerConfig, ServerConfigError
from protocol.uci.runner import run_search
from tests.support.tcp_helpers import TcpClient, running_server
from tests.support.uci_process import UciProcess

FEN = "4k3/8/1n3b2/8/3Q4/8/8/4K3 w - - 0 1"
N = len(default_evaluator().weights)
"""How many weights the shipped table has (a full EvalFile loads all of them)."""
KNIGHTS_900 = {"material.mg.N": 900, "material.eg.N": 900}


@pytest.fixture
def knights_900(tmp_path: Path) -> Path:
    """The shipped table with knights at 900 cp, as a complete weights file."""
    path = tmp_path / "knights 900.json"  # a space: the value is the rest of the line
    path.write_text(json.dumps({**default_evaluator().weights, **KNIGHTS_900}), "utf-8")
    return path


@pytest.fixture
def engine(brudno: list[str]) -> Iterator[chess.engine.SimpleEngine]:
    with chess.engine.SimpleEngine.popen_uci(brudno, timeout=60) as eng:
        yield eng


@pytest.fixture
async def uci(brudno: list[str]) -> AsyncIterator[UciProcess]:
    process = await UciProcess.start(brudno)
    yield process
    assert await process.close() == 0


def test_python_chess_configures_a_table_and_returns_to_the_shipped_one(
    engine: chess.engine.SimpleEngine, knights_900: Path
) -> None:
    option = engine.options["EvalFile"]
    assert (option.type, option.default) == ("string", "<empty>")  # UCI's empty string
    board = chess.Board(FEN)

    def analyse() -> tuple[chess.Move, int]:
        info = engine.analyse(board, chess.engine.Limit(depth=1))
        score = info["score"].white().score()
        assert score is not None
        return info["pv"][0], score

    shipped_move, shipped_score = analyse()
    engine.configure({"EvalFile": str(knights_900)})
    heavy_move, heavy_score = analyse()
    engine.configure({"EvalFile": ""})
    assert analyse() == (shipped_move, shipped_score)
    assert (shipped_move.uci(), heavy_move.uci()) == ("d4f6", "d4b6")
    assert heavy_score != shipped_score


async def test_bad_files_get_one_error_line_and_the_old_table_stays(
    uci: UciProcess, knights_900: Path, tmp_path: Path
) -> None:
    assert await uci.exchange(f"setoption name EvalFile value {knights_900}") == [
        f"info string EvalFile: {N} weights from {knights_900}"
    ]
    bad = {
        "missing.json": None,
        "broken.json": '{"tempo": 10,',
        "unknown.json": '{"material.mg.Knight": 900}',
        "text.json": '{"material.mg.N": "nine hundred"}',
    }
    expected = {
        "missing.json": "cannot read {path}: No such file or directory",
        "broken.json": "{path} is not JSON: Expecting property name enclosed in double quotes"
        " at line 1 column 14",
        "unknown.json": "{path}: unknown chess features 'material.mg.Knight'",
        "text.json": "{path}: weights that are not numbers: 'material.mg.N': \"nine hundred\"",
    }
    for name, content in bad.items():
        path = tmp_path / name
        if content is not None:
            path.write_text(content, "utf-8")
        line = f"setoption name EvalFile value {path}"
        what = expected[name].replace("{path}", str(path))
        assert await uci.exchange(line) == [f"info string error: EvalFile: {what} ({line})"]
    lines = await uci.exchange(f"position fen {FEN}", "eval")
    assert lines[0] == f"Weights: {knights_900}"
    await uci.send("go depth 1")
    best = await uci.read_until(lambda s: s.startswith("bestmove"))
    assert best[-1] == "bestmove d4b6"  # still the knights-at-900 table
    lines = await uci.exchange("setoption name EvalFile value <default>", "eval")
    assert lines[0] == "Weights: shipped"
    await uci.send("go depth 1")
    assert (await uci.read_until(lambda s: s.startswith("bestmove")))[-1] == "bestmove d4f6"


def _expected(evaluator: LinearEvaluator | None) -> tuple[str, int]:
    """What an in-process search says at depth 1: best move and score."""
    game = get_variant("chess").new(FEN, evaluator=evaluator)
    result = run_search(
        Searcher(16),
        "pvs",
        game,
        Limits(depth=1),
        control=SearchControl(),
        on_info=ignore_info,
        multipv=1,
        move_overhead_ms=0,
    )
    assert result.best is not None and isinstance(result.score, Cp)
    return result.best, result.score.value


async def test_a_tcp_session_searches_with_the_table_in_its_worker_process(
    knights_900: Path,
) -> None:
    heavy = LinearEvaluator({**default_evaluator().weights, **KNIGHTS_900})
    wanted = {"shipped": _expected(None), "heavy": _expected(heavy)}
    assert wanted["shipped"] != wanted["heavy"]
    got = {}
    async with running_server(eval_file_dir=knights_900.parent) as server:
        client = await TcpClient.open(server.port)
        await client.send(f"position fen {FEN}", "go depth 1")
        got["shipped"] = await _depth_1(client)
        assert await client.exchange(f"setoption name EvalFile value {knights_900.name}") == [
            f"info string EvalFile: {N} weights from {knights_900.name}"
        ]
        await client.send("go depth 1")  # the position was rebuilt with the new table
        got["heavy"] = await _depth_1(client)
        await client.send(f"position fen {FEN}", "go depth 1")  # and so are new positions
        assert await _depth_1(client) == got["heavy"]
        await client.send("quit")
        assert await client.read_to_end() == []
        await client.close()
    assert got == wanted


async def _depth_1(client: TcpClient) -> tuple[str, int]:
    infos, best = await client.bestmove()
    (info,) = [line.split() for line in infos if line.startswith("info depth 1 ")]
    return best, int(info[info.index("cp") + 1])


async def test_a_tcp_server_reads_weights_only_from_its_eval_file_dir(
    knights_900: Path, tmp_path: Path
) -> None:
    """A remote client names files on the server's machine: refused unless the operator gave
    a weights directory, and then only the files in it."""
    by_path = f"setoption name EvalFile value {knights_900}"
    by_name = "setoption name EvalFile value knights 900.json"
    async with running_server() as server:
        client = await TcpClient.open(server.port)
        assert await client.exchange(by_path, by_name) == [
            "info string error: EvalFile: this server loads no weight files "
            f"(start it with --eval-file-dir DIR) ({line})"
            for line in (by_path, by_name)
        ]
        assert (await client.exchange("eval"))[0] == "Weights: shipped"
        await client.send("quit")
        assert await client.read_to_end() == []
        await client.close()
    async with running_server(eval_file_dir=tmp_path) as server:
        client = await TcpClient.open(server.port)
        assert await client.exchange(by_name, by_path) == [
            f"info string EvalFile: {N} weights from knights 900.json",
            f"info string error: EvalFile: {knights_900} is not a file in the server's "
            f"weights directory ({by_path})",
        ]
        assert (await client.exchange("eval"))[0] == "Weights: knights 900.json"
        await client.send("quit")
        assert await client.read_to_end() == []
        await client.close()


def test_serve_checks_its_eval_file_dir_at_startup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(ServerConfigError, match=f"^--eval-file-dir: {missing} does not exist$"):
        ServerConfig(eval_file_dir=missing).check()
    args = build_parser().parse_args(["serve", "--port", "0", "--eval-file-dir", str(missing)])
    assert args.eval_file_dir == missing
    assert args.run(args) == 2
    assert capsys.readouterr().err == (f"brudno serve: --eval-file-dir: {missing} does not exist\n")
