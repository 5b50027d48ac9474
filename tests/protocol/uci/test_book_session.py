"""The opening book options in the session: when a ``go`` is answered from the book, the
errors, other variants, and which files a server lets a client open.

The real ``brudno`` process with a built book is in tests/brudno/test_book_cli.py.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator
from pathlib import Path

import chess
import chess.polyglot
import pytest

from brudno.cli import build_parser
from games.chess_game import from_fen
from games.chess_game.book import OpeningBook
from protocol.transports.mqtt.config import WorkerConfig
from protocol.transports.mqtt.errors import MqttConfigError
from protocol.transports.tcp.config import ServerConfig, ServerConfigError
from protocol.uci.options import ANY_PATH, NO_EVAL_FILES, EvalFileAccess
from protocol.uci.session import EngineSession
from tests.support.tcp_helpers import TcpClient, running_server

AFTER_E4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
FIRST_MOVES = {"e2e4": 5, "d2d4": 3, "c2c4": 2}


def raw(move: str) -> int:
    start, end = chess.parse_square(move[:2]), chess.parse_square(move[2:4])
    return end | start << 6


def write_book(path: Path) -> Path:
    """First moves by weight, and one reply to 1. e4 (so a ply-1 position is in the book)."""
    entries = [(chess.polyglot.zobrist_hash(chess.Board()), m, w) for m, w in FIRST_MOVES.items()]
    entries.append((chess.polyglot.zobrist_hash(chess.Board(AFTER_E4)), "c7c5", 1))
    path.write_bytes(b"".join(struct.pack(">QHHI", k, raw(m), w, 0) for k, m, w in sorted(entries)))
    return path


class ListSink:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def send(self, line: str, *, droppable: bool = False) -> None:
        self.lines.append(line)

    def take(self) -> list[str]:
        lines, self.lines = self.lines, []
        return lines


class Engine:
    """A session and its output."""

    def __init__(self, book_files: EvalFileAccess = ANY_PATH) -> None:
        self.sink = ListSink()
        self.session = EngineSession(self.sink, book_files=book_files)

    async def send(self, *lines: str) -> list[str]:
        """Lines that need no search: everything they printed."""
        for line in lines:
            await self.session.handle(line)
        return self.sink.take()

    async def go(self, go: str = "go movetime 5000", *then: str) -> list[str]:
        """Run ``go`` (then ``then``, e.g. ``stop``) to its ``bestmove``; all it printed."""
        self.sink.take()
        for line in (go, *then):
            await self.session.handle(line)
        async with asyncio.timeout(60):
            while not any(line.startswith("bestmove") for line in self.sink.lines):
                await asyncio.sleep(0.005)
        return self.sink.take()


@pytest.fixture
def book(tmp_path: Path) -> Path:
    return write_book(tmp_path / "first moves.bin")  # a space: the value is the rest


@pytest.fixture
async def engine() -> AsyncIterator[Engine]:
    engine = Engine()
    yield engine
    await engine.session.handle("stop")  # a failed test may leave a search running
    await engine.session.close()


def book_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("info string book move")]


def searched(lines: list[str]) -> bool:
    return any(line.startswith("info depth") for line in lines) and not book_lines(lines)


async def test_a_timed_go_plays_the_book_move_at_once(engine: Engine, book: Path) -> None:
    assert await engine.send(
        f"setoption name BookFile value {book}", "setoption name OwnBook value true"
    ) == [f"info string BookFile: 4 entries from {book}"]
    expected = OpeningBook.open(book).choose(from_fen(chess.STARTING_FEN), 0)
    assert expected is not None
    line = f"info string book move {expected.move} (weight {expected.weight} of 10)"
    for go in ("go movetime 5000", "go wtime 60000 btime 60000 winc 1000 binc 1000", "go"):
        assert await engine.go(go) == [line, f"bestmove {expected.move}"]
    await engine.send("position startpos moves e2e4")
    assert await engine.go() == [
        "info string book move c7c5 (weight 1 of 1)",
        "bestmove c7c5",
    ]


async def test_book_seed_changes_the_draw_reproducibly(engine: Engine, book: Path) -> None:
    await engine.send(f"setoption name BookFile value {book}", "setoption name OwnBook value true")
    reader = OpeningBook.open(book)
    played = []
    for seed in range(12):
        await engine.send(f"setoption name BookSeed value {seed}")
        choice = reader.choose(from_fen(chess.STARTING_FEN), seed)
        assert choice is not None
        assert (await engine.go())[-1] == f"bestmove {choice.move}"
        assert (await engine.go())[-1] == f"bestmove {choice.move}"  # the same again
        played.append(choice.move)
    assert len(set(played)) > 1
    reader.close()


@pytest.mark.parametrize(
    "go",
    [
        "go depth 1",
        "go nodes 200",
        "go movetime 300 mate 1",
        "go movetime 5000 searchmoves e2e4 d2d4",
        "go movetime 5000 depth 1",
    ],
)
async def test_a_go_asking_for_a_search_gets_one(engine: Engine, book: Path, go: str) -> None:
    await engine.send(f"setoption name BookFile value {book}", "setoption name OwnBook value true")
    assert searched(await engine.go(go))


@pytest.mark.parametrize("go", ["go infinite", "go ponder wtime 1000 btime 1000"])
async def test_infinite_and_ponder_search_until_stopped(
    engine: Engine, book: Path, go: str
) -> None:
    await engine.send(f"setoption name BookFile value {book}", "setoption name OwnBook value true")
    await engine.send("position startpos moves d2d4")  # pondering on a predicted reply
    lines = await engine.go(go, "isready", "stop")
    assert not book_lines(lines) and "readyok" in lines


async def test_book_depth_and_own_book_off_mean_a_search(engine: Engine, book: Path) -> None:
    await engine.send(f"setoption name BookFile value {book}", "position startpos moves e2e4")
    assert searched(await engine.go("go movetime 5000 depth 1"))
    assert searched(await engine.go("go movetime 300"))  # OwnBook is off by default
    await engine.send("setoption name OwnBook value true", "setoption name BookDepth value 1")
    assert searched(await engine.go("go movetime 300"))  # ply 1 is not below BookDepth 1
    await engine.send("setoption name BookDepth value 2")
    assert (await engine.go())[-1] == "bestmove c7c5"
    await engine.send("position fen 4k3/8/8/8/8/8/8/4K2R w K - 0 1")  # not in the book
    assert searched(await engine.go("go movetime 300"))


async def test_bad_files_get_one_error_and_the_old_book_stays(
    engine: Engine, book: Path, tmp_path: Path
) -> None:
    await engine.send(f"setoption name BookFile value {book}", "setoption name OwnBook value true")
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(b"not a book at all, 32 bytes long")
    missing = tmp_path / "missing.bin"
    for path, why in (
        (missing, f"cannot read {missing}: No such file or directory"),
        (garbage, f"{garbage} is not a Polyglot book: its keys are not in ascending order"),
        (tmp_path, f"cannot read {tmp_path}: Is a directory"),
    ):
        line = f"setoption name BookFile value {path}"
        (error,) = await engine.send(line)
        assert error.startswith(f"info string error: BookFile: {why}")
        assert error.endswith(f" ({line})")
        assert engine.session.options["BookFile"] == str(book)
    assert book_lines(await engine.go())
    assert await engine.send("setoption name BookFile value <empty>") == []
    assert engine.session.options["BookFile"] == ""
    assert searched(await engine.go("go movetime 300"))


async def test_books_are_for_chess_only(engine: Engine, book: Path) -> None:
    await engine.send(f"setoption name BookFile value {book}", "setoption name OwnBook value true")
    assert await engine.send("setoption name UCI_Variant value tictactoe") == [
        "info string OwnBook: no book moves while UCI_Variant is tictactoe "
        "(opening books are for chess only)"
    ]
    assert searched(await engine.go("go depth 2"))  # and nothing said again
    await engine.send("setoption name OwnBook value false")
    assert await engine.send(
        "setoption name OwnBook value true", f"setoption name BookFile value {book}"
    ) == [
        "info string error: OwnBook: opening books are for chess only (UCI_Variant is "
        "tictactoe) (setoption name OwnBook value true)",
        "info string error: BookFile: opening books are for chess only (UCI_Variant is "
        f"tictactoe) (setoption name BookFile value {book})",
    ]
    assert engine.session.options["OwnBook"] is False
    assert await engine.send("setoption name UCI_Variant value chess") == []
    assert searched(await engine.go("go movetime 300"))  # OwnBook stayed off
    await engine.send("setoption name OwnBook value true")
    assert book_lines(await engine.go())  # the book stayed open


async def test_a_server_session_opens_books_only_from_its_book_directory(
    book: Path, tmp_path: Path
) -> None:
    refusing = Engine(book_files=NO_EVAL_FILES)
    line = f"setoption name BookFile value {book}"
    assert await refusing.send(line) == [
        "info string error: BookFile: this server loads no book files "
        f"(start it with --book-dir DIR) ({line})"
    ]
    await refusing.session.close()
    within = Engine(book_files=EvalFileAccess.within(tmp_path))
    by_name = "setoption name BookFile value first moves.bin"
    outside = "setoption name BookFile value ../first moves.bin"
    assert await within.send(by_name, line, outside) == [
        "info string BookFile: 4 entries from first moves.bin",
        f"info string error: BookFile: {book} is not a file in the server's book directory "
        f"({line})",
        "info string error: BookFile: ../first moves.bin is not a file in the server's book "
        f"directory ({outside})",
    ]
    assert within.session.options["BookFile"] == "first moves.bin"
    await within.session.close()


def test_servers_check_their_book_dir_at_startup(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(ServerConfigError, match=f"^--book-dir: {missing} does not exist$"):
        ServerConfig(book_dir=missing).check()
    with pytest.raises(MqttConfigError, match=f"^--book-dir: {missing} does not exist$"):
        WorkerConfig(worker_id="w", book_dir=missing).check()
    assert ServerConfig(book_dir=tmp_path).book_files().directory == tmp_path.resolve()
    for command in (["serve"], ["mqtt"]):
        args = build_parser(only=command[0]).parse_args([*command, "--book-dir", str(tmp_path)])
        assert args.book_dir == tmp_path


async def test_a_tcp_session_plays_from_the_servers_book_directory(
    book: Path, tmp_path: Path
) -> None:
    async with running_server(book_dir=tmp_path) as server:
        client = await TcpClient.open(server.port)
        assert await client.exchange(
            "setoption name BookFile value first moves.bin", "setoption name OwnBook value true"
        ) == ["info string BookFile: 4 entries from first moves.bin"]
        await client.send("position startpos moves e2e4", "go movetime 5000")
        infos, best = await client.bestmove()
        assert (infos, best) == (["info string book move c7c5 (weight 1 of 1)"], "c7c5")
        await client.send("quit")
        assert await client.read_to_end() == []
        await client.close()
