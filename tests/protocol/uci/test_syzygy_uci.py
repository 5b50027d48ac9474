"""The Syzygy options end to end: declared as Stockfish declares them, checked at
``setoption`` (one error line and no change for a bad path), applied to every position of
the session, ``tbhits`` in ``info``, and the servers' policy (``--syzygy-dir``), with
searches in worker processes (the settings travel with the pickled game).

Tables: ``../shared/data/syzygy/regular`` (3 and 4 pieces).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from brudno.cli import build_parser
from games.chess_game import ChessGame
from protocol.errors import OptionError
from protocol.transports.mqtt.config import WorkerConfig
from protocol.transports.mqtt.errors import MqttConfigError
from protocol.transports.mqtt.jobs import TerminalReply, parse_job
from protocol.transports.mqtt.slots import Slot
from protocol.transports.mqtt.wire import ReplyStatus
from protocol.transports.mqtt.worker import MqttWorker, _Record
from protocol.transports.tcp.config import ServerConfig, ServerConfigError
from protocol.uci.runner import ThreadRunner
from protocol.uci.session import EngineSession
from protocol.uci.syzygy import ANY_SYZYGY_PATH, NO_SYZYGY, SyzygyAccess
from protocol.uci.workers import ProcessRunner
from tests.support.paths import DATA
from tests.support.tcp_helpers import TcpClient, ensure_warm, running_server, wait_until
from tests.support.uci_process import UciProcess

SYZYGY = DATA / "syzygy"
REGULAR = SYZYGY / "regular"
FOUND = "info string SyzygyPath: found 35 WDL and 35 DTZ tablebase files (up to 4 pieces)"

ROOK_TRADE = "8/8/8/4k3/8/2r5/2R1P3/4K3 w - - 0 1"
"""Five pieces (beyond the tables); Rxc3 captures into KRPvK, a win the tables know."""

STOCKFISH_LINES = [
    "option name SyzygyPath type string default <empty>",
    "option name SyzygyProbeDepth type spin default 1 min 1 max 100",
    "option name Syzygy50MoveRule type check default true",
    "option name SyzygyProbeLimit type spin default 7 min 0 max 7",
]
"""What Stockfish answers to ``uci`` for its tablebase options (in this order)."""


class ListSink:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def send(self, line: str, *, droppable: bool = False) -> None:
        self.lines.append(line)

    def take(self) -> list[str]:
        lines, self.lines = self.lines, []
        return lines


@pytest.fixture
async def uci(brudno: list[str]) -> AsyncIterator[UciProcess]:
    process = await UciProcess.start(brudno)
    yield process
    assert await process.close() == 0


def bad_paths(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """Unusable ``SyzygyPath`` values and what the error says about each."""
    empty = tmp_path / "empty"
    empty.mkdir()
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / "KQvK.rtbw").symlink_to(REGULAR / "KQvK.rtbw")
    (corrupt / "KRvK.rtbw").write_bytes(b"garbage, not a table" * 50)
    missing = tmp_path / "missing"
    return {
        "missing": (str(missing), f"{missing}: no such directory"),
        "empty": (str(empty), f"{empty} holds no Syzygy tables (.rtbw/.rtbz files)"),
        "corrupt": (str(corrupt), f"{corrupt}: KRvK.rtbw is not a Syzygy table (wrong file size)"),
        "one bad of two": (
            f"{REGULAR}{os.pathsep}{missing}",
            f"{missing}: no such directory",
        ),
    }


async def search_lines(uci: UciProcess, fen: str, depth: int) -> list[str]:
    await uci.send(f"position fen {fen}", f"go depth {depth}")
    return await uci.read_until(lambda s: s.startswith("bestmove"))


def tbhits(line: str) -> int:
    words = line.split()
    return int(words[words.index("tbhits") + 1])


async def test_the_options_are_declared_as_stockfish_declares_them(uci: UciProcess) -> None:
    await uci.send("uci")
    lines = await uci.read_until(lambda s: s == "uciok")
    assert [s for s in lines if s.startswith("option name Syzygy")] == STOCKFISH_LINES


async def test_the_real_engine_probes_and_reports_tbhits(uci: UciProcess) -> None:
    assert await uci.exchange(f"setoption name SyzygyPath value {REGULAR}") == [FOUND]
    lines = await search_lines(uci, ROOK_TRADE, 4)
    last = [s for s in lines if s.startswith("info depth 4 ")][-1]
    print(f"\nexample: {last}")
    assert tbhits(last) > 0 and " score cp 28975 " in last  # TB_WIN - 1: a tablebase win
    assert lines[-1].startswith("bestmove c2c3")
    # A root the tables cover: the root's moves are ranked (tbhits), and the mate is found.
    lines = await search_lines(uci, "k7/8/1K6/8/8/8/8/6Q1 w - - 0 1", 3)
    assert lines[-1].startswith("bestmove g1g8")
    assert tbhits(lines[-2]) == 25 and " score mate 1 " in lines[-2]
    # <empty> turns the tables off again.
    assert await uci.exchange("setoption name SyzygyPath value <empty>") == []
    lines = await search_lines(uci, ROOK_TRADE, 4)
    assert all(tbhits(s) == 0 for s in lines if " tbhits " in s)


async def test_a_bad_path_is_one_error_line_and_changes_nothing(
    uci: UciProcess, tmp_path: Path
) -> None:
    assert await uci.exchange(f"setoption name SyzygyPath value {REGULAR}") == [FOUND]
    for value, what in bad_paths(tmp_path).values():
        line = f"setoption name SyzygyPath value {value}"
        assert await uci.exchange(line) == [f"info string error: SyzygyPath: {what} ({line})"]
    lines = await search_lines(uci, ROOK_TRADE, 3)  # the good tables are still in use
    assert tbhits(lines[-2]) > 0


async def test_a_directory_named_many_times_is_opened_once(uci: UciProcess, tmp_path: Path) -> None:
    """Issue 44: ``.:.:.:…`` re-opened every table once per repetition.  The same real
    directory, however it is spelled (again, with ``/.``, through a symlink), counts once."""
    link = tmp_path / "tables"
    link.symlink_to(REGULAR)
    spellings = [str(REGULAR), f"{REGULAR}/.", str(link), f"{REGULAR}/../regular", str(REGULAR)]
    line = f"setoption name SyzygyPath value {os.pathsep.join(spellings * 20)}"
    assert await uci.exchange(line) == [FOUND]
    lines = await search_lines(uci, ROOK_TRADE, 3)
    assert tbhits(lines[-2]) > 0


def test_a_server_names_each_tablebase_directory_once() -> None:
    within = SyzygyAccess.within(SYZYGY)
    value = os.pathsep.join(["regular", "./regular", "regular/", "regular/../regular", "."] * 3)
    assert within.locate(value) == ([REGULAR.resolve(), SYZYGY.resolve()], ["regular", "."])


async def test_the_session_applies_the_options_to_every_position(tmp_path: Path) -> None:
    sink = ListSink()
    session = EngineSession(sink)
    try:
        extra = tmp_path / "extra"
        extra.mkdir()
        for name in ("KQvK.rtbw", "KQvK.rtbz"):
            (extra / name).symlink_to(REGULAR / name)
        await session.handle(f"setoption name SyzygyPath value {REGULAR}{os.pathsep}{extra}")
        assert sink.take() == [
            "info string SyzygyPath: found 36 WDL and 36 DTZ tablebase files (up to 4 pieces)"
        ]
        game = session.position
        assert isinstance(game, ChessGame) and game.tablebases is not None
        assert game.tablebases.directories == (str(REGULAR.resolve()), str(extra.resolve()))
        for line in (
            "setoption name SyzygyProbeDepth value 7",
            "setoption name SyzygyProbeLimit value 3",
            "setoption name Syzygy50MoveRule value false",
        ):
            await session.handle(line)
        assert sink.take() == []
        settings = session.position.tablebases  # type: ignore[attr-defined]
        assert (settings.probe_depth, settings.probe_limit, settings.rule50) == (7, 3, False)
        await session.handle(f"position fen {ROOK_TRADE} moves c2c3")
        assert session.position.tablebases == settings  # type: ignore[attr-defined]
        await session.handle("setoption name SyzygyProbeDepth value 0")  # out of range
        assert sink.take() == [
            "info string error: SyzygyProbeDepth: 0 is out of range 1..100 "
            "(setoption name SyzygyProbeDepth value 0)"
        ]
        await session.handle("setoption name UCI_Variant value tictactoe")  # no tables there
        await session.handle("go depth 2")
        await wait_until(lambda: any(s.startswith("bestmove") for s in sink.lines), "bestmove")
        assert not [s for s in sink.take() if "error" in s]
        await session.handle("setoption name UCI_Variant value chess")
        assert session.position.tablebases == settings  # type: ignore[attr-defined]
        await session.handle("setoption name SyzygyPath value <empty>")
        assert session.options["SyzygyPath"] == ""
        assert session.position.tablebases is None  # type: ignore[attr-defined]
    finally:
        await session.close()


def test_the_server_policies() -> None:
    with pytest.raises(OptionError, match="this server uses no tablebases"):
        NO_SYZYGY.locate("regular")
    within = SyzygyAccess.within(SYZYGY)
    assert within.locate(f"regular{os.pathsep}.") == (
        [REGULAR.resolve(), SYZYGY.resolve()],
        ["regular", "."],
    )
    for value in (str(REGULAR), "..", "../chess", "missing", "endgame.epd"):
        with pytest.raises(OptionError) as caught:
            within.locate(value)
        assert str(caught.value) == (
            f"SyzygyPath: {value} is not a directory in the server's tablebase directory"
        )
    assert ANY_SYZYGY_PATH.locate("~") == ([Path.home()], ["~"])


async def test_a_tcp_server_searches_with_its_tables_in_worker_processes() -> None:
    """``brudno serve``'s path: the session's worker process gets the game pickled with its
    settings and opens the tables itself."""
    await ensure_warm()
    async with running_server() as server:
        client = await TcpClient.open(server.port)
        line = "setoption name SyzygyPath value regular"
        assert await client.exchange(line) == [
            "info string error: SyzygyPath: this server uses no tablebases "
            f"(start it with --syzygy-dir DIR) ({line})"
        ]
        await client.send("quit")
        assert await client.read_to_end() == []
        await client.close()
    async with running_server(syzygy_dir=SYZYGY) as server:
        client = await TcpClient.open(server.port)
        assert await client.exchange(line) == [FOUND]
        dot = "setoption name SyzygyPath value ."
        assert await client.exchange(dot) == [
            f"info string error: SyzygyPath: . holds no Syzygy tables (.rtbw/.rtbz files) ({dot})"
        ]
        await client.send(f"position fen {ROOK_TRADE}", "go depth 3")
        infos, best = await client.bestmove()
        assert best == "c2c3"
        assert tbhits([s for s in infos if s.startswith("info depth 3 ")][-1]) > 0
        await client.send("quit")
        assert await client.read_to_end() == []
        await client.close()


async def test_a_process_runner_session_probes_in_its_worker() -> None:
    await ensure_warm()
    sink = ListSink()
    session = EngineSession(sink, runner_factory=ProcessRunner, syzygy=ANY_SYZYGY_PATH)
    try:
        for line in (
            f"setoption name SyzygyPath value {REGULAR}",
            "setoption name Threads value 2",  # a Lazy SMP helper gets the game pickled too
            f"position fen {ROOK_TRADE}",
            "go depth 3",
        ):
            await session.handle(line)
        await wait_until(lambda: any(s.startswith("bestmove") for s in sink.lines), "bestmove")
    finally:
        await session.close()
    infos = [s for s in sink.lines if s.startswith("info depth 3 ")]
    assert infos and tbhits(infos[-1]) > 0, sink.lines


def test_the_servers_check_their_syzygy_dir_at_startup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(ServerConfigError, match=f"^--syzygy-dir: {missing} does not exist$"):
        ServerConfig(syzygy_dir=missing).check()
    assert ServerConfig(syzygy_dir=SYZYGY).syzygy().directory == SYZYGY.resolve()
    args = build_parser().parse_args(["serve", "--port", "0", "--syzygy-dir", str(missing)])
    assert args.syzygy_dir == missing
    assert args.run(args) == 2
    assert capsys.readouterr().err == f"brudno serve: --syzygy-dir: {missing} does not exist\n"
    with pytest.raises(MqttConfigError, match=f"^--syzygy-dir: {missing} does not exist$"):
        WorkerConfig(syzygy_dir=missing).syzygy()
    args = build_parser().parse_args(["mqtt", "--syzygy-dir", str(SYZYGY)])
    assert args.syzygy_dir == SYZYGY


async def test_an_mqtt_job_uses_tables_only_from_the_workers_syzygy_dir() -> None:
    """As for ``EvalFile`` (tests/protocol/transports/test_mqtt_worker.py), jobs run here
    without a broker."""
    setoption = "setoption name SyzygyPath value regular"
    job = parse_job(f"{setoption}\nposition fen {ROOK_TRADE}\ngo depth 3".encode(), "chess")

    async def answer(config: WorkerConfig) -> TerminalReply:
        worker = MqttWorker(config)
        slot = Slot(ThreadRunner)
        try:
            return await worker._search(_Record("replies/t", b"c1", []), job, slot)
        finally:
            await slot.runner.close()

    refusing = WorkerConfig(worker_id="w1", runner_factory=ThreadRunner)
    assert MqttWorker(refusing).syzygy is NO_SYZYGY
    assert await answer(refusing) == TerminalReply(
        ReplyStatus.ERROR,
        "info string error: SyzygyPath: this server uses no tablebases "
        f"(start it with --syzygy-dir DIR) ({setoption})",
    )
    serving = WorkerConfig(worker_id="w2", runner_factory=ThreadRunner, syzygy_dir=SYZYGY)
    reply = await answer(serving)
    lines = reply.payload.splitlines()
    assert reply.status == ReplyStatus.DONE and lines[-1].startswith("bestmove c2c3")
    assert tbhits([s for s in lines if s.startswith("info depth 3 ")][-1]) > 0
