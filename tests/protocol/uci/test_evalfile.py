"""The ``EvalFile`` option in process: what :func:`load_weights` accepts and refuses, and how
the session applies a table (position rebuilt, hash emptied, variants, ``eval``).

The real ``brudno`` process, python-chess and the TCP workers are in test_evalfile_uci.py.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from games.chess_game import default_evaluator
from protocol.errors import OptionError
from protocol.uci.options import ANY_PATH, NO_EVAL_FILES, EvalFileAccess
from protocol.uci.runner import ThreadRunner
from protocol.uci.session import EngineSession
from protocol.uci.weights import is_default_eval_file, load_weights

SHIPPED = default_evaluator().weights
N = len(SHIPPED)
"""How many weights the shipped table has (a full EvalFile loads all of them)."""

EXTRA_KNIGHT = "4k3/pppp4/8/8/8/8/PPPP4/1N2K3 w - - 0 1"
"""
. . . . k . . .
p p p p . . . .
. . . . . . . .
. . . . . . . .
. . . . . . . .
. . . . . . . .
P P P P . . . .
. N . . K . . .      white is a knight up; everything else is symmetric
"""


def write_weights(path: Path, changes: dict[str, float]) -> Path:
    """The shipped table with some weights changed, as a complete file."""
    assert set(changes) <= set(SHIPPED)
    path.write_text(json.dumps({**SHIPPED, **changes}), encoding="utf-8")
    return path


def heavy_knight_file(tmp_path: Path) -> Path:
    """Knights 500 cp dearer than shipped in both phases."""
    return write_weights(
        tmp_path / "heavy.json",
        {
            "material.mg.N": SHIPPED["material.mg.N"] + 500,
            "material.eg.N": SHIPPED["material.eg.N"] + 500,
        },
    )


class ListSink:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def send(self, line: str, *, droppable: bool = False) -> None:
        self.lines.append(line)

    def take(self) -> list[str]:
        lines, self.lines = self.lines, []
        return lines


class CountingRunner(ThreadRunner):
    """Counts hash clears (a new table must not search with the old table's scores)."""

    def __init__(self, hash_mb: int = 16) -> None:
        super().__init__(hash_mb)
        self.clears = 0

    async def clear(self) -> None:
        self.clears += 1
        await super().clear()


async def evaluation(session: EngineSession, sink: ListSink) -> tuple[str, int]:
    """The ``eval`` command's weights line and total."""
    sink.take()
    await session.handle("eval")
    lines = sink.take()
    weights = next(line for line in lines if line.startswith("Weights: "))
    return weights.removeprefix("Weights: "), int(lines[-1].split()[1])


async def best_move(session: EngineSession, sink: ListSink, go: str) -> str:
    """Run ``go`` and return its ``bestmove`` line (the timeout only guards against a hang)."""
    sink.take()
    await session.handle(go)
    async with asyncio.timeout(60):
        while not any(line.startswith("bestmove") for line in sink.lines):
            await asyncio.sleep(0.005)
    return sink.take()[-1]


# -- load_weights ---------------------------------------------------------------------------


def test_a_full_table_loads_as_is(tmp_path: Path) -> None:
    path = heavy_knight_file(tmp_path)
    loaded = load_weights(path, SHIPPED, game="chess")
    assert loaded.evaluator.weights["material.mg.N"] == SHIPPED["material.mg.N"] + 500
    assert loaded.evaluator.weights["tempo"] == SHIPPED["tempo"]
    assert (loaded.from_file, loaded.kept, loaded.rounded) == (N, (), 0)
    assert loaded.summary(str(path)) == f"EvalFile: {N} weights from {path}"


def test_missing_features_keep_the_shipped_weight_and_fractions_are_rounded(
    tmp_path: Path,
) -> None:
    path = tmp_path / "partial.json"
    path.write_text('{"material.mg.N": 400.6, "tempo": 12.0, "rook.mg.open_file": -3}')
    loaded = load_weights(path, SHIPPED, game="chess")
    weights = loaded.evaluator.weights
    assert (weights["material.mg.N"], weights["tempo"], weights["rook.mg.open_file"]) == (
        401,
        12,
        -3,
    )
    assert all(isinstance(value, int) for value in weights.values())  # the fast route stays
    assert weights["material.eg.N"] == SHIPPED["material.eg.N"]
    assert len(weights) == len(SHIPPED) and len(loaded.kept) == len(SHIPPED) - 3
    assert "material.eg.N" in loaded.kept and "tempo" not in loaded.kept
    assert loaded.rounded == 1
    assert loaded.summary("p.json") == (
        f"EvalFile: 3 weights from p.json, {len(SHIPPED) - 3} missing features at the shipped "
        "weight, 1 fractional weight rounded"
    )


def test_a_byte_order_mark_is_tolerated(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b'\xef\xbb\xbf{"tempo": 7}')
    assert load_weights(path, SHIPPED, game="chess").evaluator.weights["tempo"] == 7


BAD_FILES = [
    ("missing.json", None, "cannot read {path}: No such file or directory"),
    ("broken.json", b'{"tempo": ', "{path} is not JSON: Expecting value at line 1 column 11"),
    ("list.json", b"[1, 2]", "{path} holds a JSON list, not an object of feature weights"),
    ("number.json", b"42", "{path} holds a JSON int, not an object of feature weights"),
    (
        "unknown.json",
        b'{"tempo": 3, "material.mg.Z": 1}',
        "{path}: unknown chess features 'material.mg.Z'",
    ),
    ("string.json", b'{"tempo": "ten"}', "{path}: weights that are not numbers: 'tempo': \"ten\""),
    ("null.json", b'{"tempo": null}', "{path}: weights that are not numbers: 'tempo': null"),
    ("bool.json", b'{"tempo": true}', "{path}: weights that are not numbers: 'tempo': true"),
    ("nan.json", b'{"tempo": NaN}', "{path}: weights that are not numbers: 'tempo': NaN"),
    ("inf.json", b'{"tempo": 1e999}', "{path}: weights that are not numbers: 'tempo': Infinity"),
    (
        "nested.json",
        b'{"tempo": {"mg": 1}}',
        "{path}: weights that are not numbers: 'tempo': {\"mg\": 1}",
    ),
    (
        "huge.json",
        b'{"material.mg.N": 31000}',
        "{path}: weights beyond ±10000 centipawns: 'material.mg.N': 31000",
    ),
    ("latin1.json", b'{"tempo": 1, "caf\xe9": 2}', "{path} is not UTF-8 text"),
]


@pytest.mark.parametrize(
    ("name", "content", "message"), BAD_FILES, ids=[case[0] for case in BAD_FILES]
)
def test_bad_files_are_refused_naming_the_file_and_the_problem(
    tmp_path: Path, name: str, content: bytes | None, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(OptionError) as caught:
        load_weights(path, SHIPPED, game="chess")
    assert str(caught.value) == "EvalFile: " + message.replace("{path}", str(path))
    assert (caught.value.option, caught.value.value) == ("EvalFile", str(path))


def test_many_unknown_features_are_summarised(tmp_path: Path) -> None:
    path = tmp_path / "typos.json"
    path.write_text(json.dumps({f"feature{i}": i for i in range(8)}))
    with pytest.raises(OptionError, match=r"'feature4' and 3 more$"):
        load_weights(path, SHIPPED, game="chess")


def test_a_directory_a_fifo_and_an_endless_device_are_refused_without_blocking(
    tmp_path: Path,
) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)  # opening it for reading would block until a writer came
    for path, what in (
        (tmp_path, "cannot read {path}: Is a directory"),
        (fifo, "{path} is not a regular file"),
        (Path("/dev/zero"), "{path} is not a regular file"),
    ):
        with pytest.raises(OptionError) as caught:
            load_weights(path, SHIPPED, game="chess")
        assert str(caught.value) == "EvalFile: " + what.format(path=path)


def test_an_oversized_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('{"tempo": 1' + " " * (1 << 20) + "}")
    with pytest.raises(OptionError, match=r"big\.json is larger than 1048576 bytes"):
        load_weights(path, SHIPPED, game="chess")


@pytest.mark.parametrize(
    ("value", "default"),
    [
        ("", True),
        ("  ", True),
        ("<default>", True),
        ("<DEFAULT>", True),
        ("<empty>", True),
        ("default", False),
        ("w.json", False),
    ],
)
def test_values_meaning_the_shipped_weights(value: str, default: bool) -> None:
    assert is_default_eval_file(value) is default


# -- the session ----------------------------------------------------------------------------


async def test_a_table_rebuilds_the_position_and_empties_the_hash(tmp_path: Path) -> None:
    sink = ListSink()
    runner = CountingRunner()
    session = EngineSession(sink, runner_factory=lambda _mb: runner)
    await session.handle(f"position fen {EXTRA_KNIGHT} moves b1c3 e8d8")
    shipped = await evaluation(session, sink)
    assert shipped[0] == "shipped"
    path = heavy_knight_file(tmp_path)
    await session.handle(f"setoption name EvalFile value {path}")
    assert sink.take() == [f"info string EvalFile: {N} weights from {path}"]
    assert session.options["EvalFile"] == str(path)
    assert runner.clears == 1
    assert session.position.fen() == "3k4/pppp4/8/8/8/2N5/PPPP4/4K3 w - - 2 2"
    assert await evaluation(session, sink) == (str(path), shipped[1] + 500)
    loaded = session.position.evaluator
    # The same file again is reread and confirmed; the same weights keep the hash, and new
    # positions keep sharing one evaluator (and so its precomputed tables and caches).
    await session.handle(f"setoption name EvalFile value {path}")
    assert sink.take() == [f"info string EvalFile: {N} weights from {path}"]
    assert runner.clears == 1
    await session.handle("position startpos")
    assert session.position.evaluator is loaded
    await session.handle(f"position fen {EXTRA_KNIGHT} moves b1c3 e8d8")
    await session.handle("setoption name EvalFile value <default>")
    assert sink.take() == []
    assert session.options["EvalFile"] == ""
    assert runner.clears == 2
    assert await evaluation(session, sink) == shipped
    await session.handle("setoption name EvalFile value")  # empty: the shipped weights too
    assert (session.options["EvalFile"], runner.clears) == ("", 2)
    await session.close()


async def test_a_bad_file_changes_nothing(tmp_path: Path) -> None:
    sink = ListSink()
    session = EngineSession(sink)
    good = heavy_knight_file(tmp_path)
    await session.handle(f"setoption name EvalFile value {good}")
    await session.handle(f"position fen {EXTRA_KNIGHT} moves b1c3")
    before = await evaluation(session, sink)
    typo = tmp_path / "typo.json"
    typo.write_text('{"material.mg.Knight": 900}')
    missing = tmp_path / "missing.json"
    for path, what in (
        (missing, f"cannot read {missing}: No such file or directory"),
        (typo, f"{typo}: unknown chess features 'material.mg.Knight'"),
    ):
        line = f"setoption name EvalFile value {path}"
        await session.handle(line)
        assert sink.take() == [f"info string error: EvalFile: {what} ({line})"]
        assert session.options["EvalFile"] == str(good)
        assert session.position.fen() == "4k3/pppp4/8/8/8/2N5/PPPP4/4K3 b - - 1 1"
        assert await evaluation(session, sink) == before
    await session.close()


async def test_variants_without_a_table_refuse_a_file_and_leave_a_loaded_one_inert(
    tmp_path: Path,
) -> None:
    sink = ListSink()
    session = EngineSession(sink)
    path = heavy_knight_file(tmp_path)
    await session.handle("setoption name UCI_Variant value tictactoe")
    await session.handle(f"setoption name EvalFile value {path}")
    assert sink.take() == [
        "info string error: EvalFile: tictactoe has no weights table to replace (only chess "
        f"has) (setoption name EvalFile value {path})"
    ]
    assert session.options["EvalFile"] == ""
    await session.handle("setoption name UCI_Variant value chess")
    await session.handle(f"setoption name EvalFile value {path}")
    await session.handle(f"position fen {EXTRA_KNIGHT}")
    heavy = await evaluation(session, sink)
    assert heavy[0] == str(path)
    # Under tic-tac-toe the chess table is kept but unused; back in chess it applies again.
    await session.handle("setoption name UCI_Variant value tictactoe")
    assert session.options["EvalFile"] == str(path)
    sink.take()
    await session.handle("eval")
    lines = sink.take()
    assert not any(line.startswith("Weights:") for line in lines)
    assert lines[-1] == "Evaluation: 0 (side to move's point of view)"
    await session.handle("setoption name UCI_Variant value chess")
    await session.handle(f"position fen {EXTRA_KNIGHT}")
    assert await evaluation(session, sink) == heavy
    await session.close()


async def test_the_search_uses_the_table(tmp_path: Path) -> None:
    """
    . . . . k . . .
    . . . . . . . .
    . n . . . b . .      an undefended knight (b6) and bishop (f6), both attacked by the
    . . . . . . . .      queen: with the shipped weights the bishop is worth more, with
    . . . Q . . . .      knights at +590 the knight is
    . . . . . . . .
    . . . . . . . .
    . . . . K . . .
    """
    sink = ListSink()
    session = EngineSession(sink)
    path = write_weights(tmp_path / "n900.json", {"material.mg.N": 900, "material.eg.N": 900})
    await session.handle("position fen 4k3/8/1n3b2/8/3Q4/8/8/4K3 w - - 0 1")
    assert await best_move(session, sink, "go depth 1") == "bestmove d4f6"
    await session.handle(f"setoption name EvalFile value {path}")
    assert await best_move(session, sink, "go depth 1") == "bestmove d4b6"
    await session.handle("setoption name EvalFile value <default>")
    assert await best_move(session, sink, "go depth 1") == "bestmove d4f6"
    await session.close()


# -- which files a session may read (servers) -------------------------------------------------


async def test_a_server_without_a_weights_directory_refuses_every_file(tmp_path: Path) -> None:
    sink = ListSink()
    session = EngineSession(sink, eval_files=NO_EVAL_FILES)
    path = heavy_knight_file(tmp_path)
    for value in (str(path), "heavy.json", "/etc/passwd", "~/.ssh/id_rsa"):
        line = f"setoption name EvalFile value {value}"
        await session.handle(line)
        assert sink.take() == [
            "info string error: EvalFile: this server loads no weight files "
            f"(start it with --eval-file-dir DIR) ({line})"
        ]
        assert session.options["EvalFile"] == ""
    for value in ("<default>", "<empty>", ""):  # the shipped weights: always allowed
        await session.handle(f"setoption name EvalFile value {value}".rstrip())
        assert sink.take() == []
        assert session.options["EvalFile"] == ""
    assert (await evaluation(session, sink))[0] == "shipped"
    await session.close()


@pytest.fixture
def weights_dir(tmp_path: Path) -> Path:
    """A server's weights directory, next to files it must not hand out::

    tmp/outside.json         a valid table, outside the directory
    tmp/weights/heavy.json   knights 500 cp dearer
    tmp/weights/sub/n.json   the same, in a subdirectory
    tmp/weights/alias.json   -> heavy.json (a symlink that stays inside)
    tmp/weights/escape.json  -> ../outside.json (a symlink leading out)
    tmp/weights/typo.json    an unknown feature name
    tmp/link                 -> weights (the directory named through a symlink)
    """
    root = tmp_path / "weights"
    (root / "sub").mkdir(parents=True)
    heavy_knight_file(root)
    heavy_knight_file(root / "sub").rename(root / "sub" / "n.json")
    heavy_knight_file(tmp_path).rename(tmp_path / "outside.json")
    (root / "alias.json").symlink_to("heavy.json")
    (root / "escape.json").symlink_to(tmp_path / "outside.json")
    (root / "typo.json").write_text('{"material.mg.Knight": 900}')
    (tmp_path / "link").symlink_to(root, target_is_directory=True)
    return root


async def test_a_weights_directory_serves_its_files_and_nothing_else(
    tmp_path: Path, weights_dir: Path
) -> None:
    sink = ListSink()
    session = EngineSession(sink, eval_files=EvalFileAccess.within(tmp_path / "link"))
    await session.handle(f"position fen {EXTRA_KNIGHT}")
    shipped = await evaluation(session, sink)
    for value in ("sub/n.json", "alias.json", "heavy.json"):
        await session.handle(f"setoption name EvalFile value {value}")
        assert sink.take() == [f"info string EvalFile: {N} weights from {value}"]
        assert session.options["EvalFile"] == value
    assert await evaluation(session, sink) == ("heavy.json", shipped[1] + 500)
    refused = [
        "../outside.json",
        str(tmp_path / "outside.json"),
        str(weights_dir / "heavy.json"),
        "escape.json",
        "sub/../../outside.json",
        "missing.json",
        "sub",
        ".",
        "/dev/zero",
        "../../../../etc/passwd",
        "heavy.json\x00",
    ]
    for value in refused:
        line = f"setoption name EvalFile value {value}"
        await session.handle(line)
        shown = value.replace("\x00", "?")  # control characters never reach the client raw
        assert sink.take() == [
            f"info string error: EvalFile: {shown} is not a file in the server's weights "
            f"directory ({line.replace(value, shown)})"
        ]
        assert session.options["EvalFile"] == "heavy.json"
    # A file inside that is refused for its content is named as the client named it: the
    # server's directory never appears in what the client is told.
    line = "setoption name EvalFile value typo.json"
    await session.handle(line)
    assert sink.take() == [
        "info string error: EvalFile: typo.json: unknown chess features "
        f"'material.mg.Knight' ({line})"
    ]
    assert await evaluation(session, sink) == ("heavy.json", shipped[1] + 500)
    await session.handle("setoption name EvalFile value <default>")
    assert (session.options["EvalFile"], await evaluation(session, sink)) == ("", shipped)
    await session.close()


def test_locating_files(tmp_path: Path, weights_dir: Path) -> None:
    access = EvalFileAccess.within(tmp_path / "link")
    assert access.directory == weights_dir.resolve()
    assert access.locate(" sub/n.json ") == (weights_dir.resolve() / "sub" / "n.json", "sub/n.json")
    with pytest.raises(OptionError) as caught:
        access.locate("bad\x1b[2J.json")
    assert str(caught.value) == (
        "EvalFile: bad?[2J.json is not a file in the server's weights directory"
    )
    assert ANY_PATH.locate("~/w.json") == (Path.home() / "w.json", str(Path.home() / "w.json"))
    assert ANY_PATH.locate("../w.json") == (Path("../w.json"), "../w.json")
    for directory, what in (
        (tmp_path / "nowhere", "does not exist"),
        (weights_dir / "heavy.json", "is not a directory"),
    ):
        with pytest.raises(ValueError, match=f"^{directory} {what}$"):
            EvalFileAccess.within(directory)
    with pytest.raises(ValueError, match="exclude each other"):
        EvalFileAccess(any_path=True, directory=weights_dir)
