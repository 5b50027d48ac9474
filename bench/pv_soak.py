"""Soak `brudno` against itself at a fast time control; a referee judges every line it prints.

    python bench/pv_soak.py                              # 100 games at 1+0.01, 2 at a time
    python bench/pv_soak.py --games 1000 --json          # the summary as one JSON object
    python bench/pv_soak.py --base 2 --inc 0.02 --hash 1 --concurrency 2 --engine2 "brudno"

Issue 18 came from a 200-game self-play match at 1+0.01: once, a search failed while
formatting a principal variation that held an illegal move.  Match tools do not see such
things (python-chess's engine client silently cuts a PV at its first illegal move), so this
script drives each engine over raw UCI text, with asyncio subprocesses, and an independent
referee (python-chess) reads every line:

* every ``info ... pv`` line: each PV move must be legal where it stands, from the position
  of the ``go`` it answers; ``currmove`` must be a legal root move;
* every ``bestmove``: the move must be legal (``0000`` only when there is none), and its
  ``ponder`` move legal after it;
* ``info string error`` lines, and failed searches: ``info string`` lines reporting an
  internal error, an emergency or unsearched move, or any warning; engine processes that die
  or hang; ERROR and WARNING lines and tracebacks on the engines' stderr;
* the clocks, kept as match runners keep them: the wall time from sending ``go`` to reading
  ``bestmove`` is charged to the side to move, the increment added after its move; a move
  later than the time left (plus ``--timemargin-ms``) loses on time.

Games start from the openings in ``../shared/data/chess/openings`` (by default the UHO book),
each played with both colours (engine 1 is White in the first game of the pair), and end by
the rules, judged by python-chess: checkmate, stalemate, insufficient material, threefold
repetition, the fifty-move rule; or by a move cap (a draw).  An illegal move or a time loss
ends the game too (the opponent wins, or draws when it cannot mate).  Each game pair shares
its two engine processes (``ucinewgame`` between games), one pair of processes per
concurrent game.  One line per game, one line per problem (with the position and the line),
then the summary; the exit status is 1 when any problem was seen.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shlex
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import chess

from brudno.arena.openings import Opening, OpeningSelection, load_openings

REPO = Path(__file__).resolve().parents[1]
OPENINGS = REPO.parent / "shared" / "data" / "chess" / "openings" / "UHO_4060_v4_every48th.epd"
SAMPLES = 25
"""Problems kept with their details for the summary (all are counted and printed)."""
FAILED_SEARCH_WORDS = ("internal error", "emergency", "unsearched", "warning")
"""``info string`` texts (lower case) that mean a search did not end normally."""


@dataclass
class Tally:
    games: int = 0
    moves: int = 0
    info_lines: int = 0
    pv_lines: int = 0
    pv_moves: int = 0
    illegal_pv: int = 0
    illegal_currmove: int = 0
    illegal_bestmove: int = 0
    illegal_ponder: int = 0
    info_errors: int = 0
    failed_searches: int = 0
    stderr_errors: int = 0
    stderr_warnings: int = 0
    crashes: int = 0
    hangs: int = 0
    time_losses: int = 0
    min_time_left_ms: float | None = None
    reply_ms: list[float] = field(default_factory=list)
    """Every move's time from ``go`` to ``bestmove`` (for the percentiles in the summary)."""
    engine1: Counter[str] = field(default_factory=Counter)
    """Engine 1's wins, draws and losses."""
    colours: Counter[str] = field(default_factory=Counter)
    """Results by colour: 1-0, 1/2-1/2, 0-1."""
    terminations: Counter[str] = field(default_factory=Counter)
    samples: list[str] = field(default_factory=list)

    def problem(self, kind: str, text: str) -> None:
        """Count nothing (the caller does), print the problem, keep the first few."""
        line = f"PROBLEM {kind}: {text}"
        print(line, flush=True)
        if len(self.samples) < SAMPLES:
            self.samples.append(line)

    @property
    def problems(self) -> int:
        return (
            self.illegal_pv
            + self.illegal_currmove
            + self.illegal_bestmove
            + self.illegal_ponder
            + self.info_errors
            + self.failed_searches
            + self.stderr_errors
            + self.stderr_warnings
            + self.crashes
            + self.hangs
            + self.time_losses
        )


class EngineGoneError(Exception):
    """The engine process ended (or never answered in time) during a command."""


@dataclass(frozen=True, slots=True)
class Reply:
    best: str
    ponder: str | None
    arrived: float
    """Monotonic time at which the ``bestmove`` line was read."""


def first_illegal(board: chess.Board, texts: list[str]) -> int | None:
    """The index of the first move of ``texts`` that is not legal where it stands."""
    b = board.copy(stack=False)
    for i, text in enumerate(texts):
        try:
            move = chess.Move.from_uci(text)
        except ValueError:
            return i
        if not b.is_legal(move):
            return i
        b.push(move)
    return None


class Engine:
    """One engine process: its lines (with their arrival times), its stderr, its options."""

    def __init__(self, name: str, command: list[str], options: list[str], tally: Tally) -> None:
        self.name = name
        self.command = command
        self.options = options
        self.tally = tally
        self.proc: asyncio.subprocess.Process | None = None
        self.lines: asyncio.Queue[tuple[float, str | None]] = asyncio.Queue()
        self.tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        self.lines = asyncio.Queue()
        self.proc = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=1 << 22,
        )
        self.tasks = [
            asyncio.create_task(self._read_stdout()),
            asyncio.create_task(self._read_stderr()),
        ]
        await self.send("uci")
        await self.expect("uciok", 30.0)
        for option in self.options:
            await self.send(f"setoption {option}")
        await self.sync()

    async def _read_stdout(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while raw := await self.proc.stdout.readline():
            self.lines.put_nowait((time.monotonic(), raw.decode("utf-8", "replace").rstrip()))
        self.lines.put_nowait((time.monotonic(), None))

    async def _read_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while raw := await self.proc.stderr.readline():
            text = raw.decode("utf-8", "replace").rstrip()
            if " ERROR " in text or " CRITICAL " in text or "Traceback" in text:
                self.tally.stderr_errors += 1
                self.tally.problem("stderr error", f"{self.name}: {text[:300]}")
            elif " WARNING " in text:
                self.tally.stderr_warnings += 1
                self.tally.problem("stderr warning", f"{self.name}: {text[:300]}")

    async def send(self, line: str) -> None:
        proc = self.proc
        if proc is None or proc.stdin is None or proc.returncode is not None:
            raise EngineGoneError(f"{self.name} is not running")
        try:
            proc.stdin.write(line.encode() + b"\n")
            await proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise EngineGoneError(f"{self.name}: {exc}") from None

    async def next_line(self, deadline: float) -> tuple[float, str]:
        """The next stdout line and its arrival time; EngineGoneError at EOF, TimeoutError
        at ``deadline`` (monotonic)."""
        timeout = max(0.0, deadline - time.monotonic())
        arrived, line = await asyncio.wait_for(self.lines.get(), timeout)
        if line is None:
            raise EngineGoneError(f"{self.name} exited")
        return arrived, line

    async def expect(self, word: str, timeout: float) -> None:
        """Read (and judge) lines until one equals ``word``."""
        deadline = time.monotonic() + timeout
        while True:
            _, line = await self.next_line(deadline)
            self.judge_string(line)
            if line == word:
                return

    async def sync(self) -> None:
        await self.send("isready")
        await self.expect("readyok", 30.0)

    def judge_string(self, line: str) -> None:
        """``info string`` lines: a failed search (an internal error, an emergency move, a
        warning) or another error (bad input: the script's or the engine's parser's fault)."""
        if not line.startswith("info string "):
            return
        text = line[len("info string ") :]
        lowered = text.lower()
        if any(word in lowered for word in FAILED_SEARCH_WORDS):
            self.tally.failed_searches += 1
            self.tally.problem("failed search", f"{self.name}: {line}")
        elif lowered.startswith("error"):
            self.tally.info_errors += 1
            self.tally.problem("info string error", f"{self.name}: {line}")

    def judge_info(self, board: chess.Board, line: str) -> None:
        """An ``info`` line of the search from ``board``: its PV and currmove."""
        tally = self.tally
        tally.info_lines += 1
        if line.startswith("info string "):
            self.judge_string(line)
            return
        words = line.split()
        if "currmove" in words:
            i = words.index("currmove")
            if i + 1 >= len(words) or first_illegal(board, words[i + 1 : i + 2]) is not None:
                tally.illegal_currmove += 1
                tally.problem("illegal currmove", f"{self.name} in {board.fen()}: {line}")
        if "pv" in words:
            pv = words[words.index("pv") + 1 :]
            tally.pv_lines += 1
            tally.pv_moves += len(pv)
            bad = first_illegal(board, pv)
            if bad is not None:
                tally.illegal_pv += 1
                tally.problem(
                    "illegal pv move",
                    f"{self.name}: move {bad + 1} ({pv[bad]}) in {board.fen()}: {line}",
                )

    async def search(self, board: chess.Board, go: str, deadline: float) -> Reply:
        """Send ``go``, judge every line until ``bestmove``; TimeoutError at ``deadline``."""
        await self.send(go)
        while True:
            arrived, line = await self.next_line(deadline)
            if line.startswith("info"):
                self.judge_info(board, line)
            elif line.startswith("bestmove"):
                words = line.split()
                best = words[1] if len(words) > 1 else "0000"
                ponder = words[3] if len(words) > 3 and words[2] == "ponder" else None
                return Reply(best, ponder, arrived)

    async def stop(self) -> None:
        """Kill the process (after a hang or a crash); start() makes a new one."""
        proc = self.proc
        if proc is not None and proc.returncode is None:
            proc.kill()
        if proc is not None:
            await proc.wait()
        for task in self.tasks:
            with contextlib.suppress(Exception):
                await task
        self.proc = None

    async def quit(self) -> None:
        with contextlib.suppress(EngineGoneError):
            await self.send("quit")
        proc = self.proc
        if proc is not None:
            try:
                await asyncio.wait_for(proc.wait(), 10.0)
            except TimeoutError:
                proc.kill()
        await self.stop()


@dataclass(frozen=True, slots=True)
class Settings:
    base_ms: float
    inc_ms: float
    margin_ms: float
    hang_s: float
    max_moves: int


def rules_outcome(board: chess.Board, plies: int, max_moves: int) -> tuple[str, str] | None:
    """(result, reason) when the rules or the move cap end the game, else None."""
    outcome = board.outcome(claim_draw=False)
    if outcome is not None:
        return outcome.result(), outcome.termination.name.lower()
    if board.halfmove_clock >= 100:
        return "1/2-1/2", "fifty_moves"
    if board.is_repetition(3):
        return "1/2-1/2", "threefold_repetition"
    if plies >= 2 * max_moves:
        return "1/2-1/2", "move_cap"
    return None


def forfeit(board: chess.Board, loser: chess.Color) -> str:
    """The result when ``loser`` forfeits: a draw if the opponent cannot mate."""
    if board.has_insufficient_material(not loser):
        return "1/2-1/2"
    return "0-1" if loser == chess.WHITE else "1-0"


def go_line(clock: list[float], inc_ms: float) -> str:
    inc = round(inc_ms)
    return f"go wtime {round(clock[0])} btime {round(clock[1])} winc {inc} binc {inc}"


def position_line(opening: Opening, moves: list[str]) -> str:
    start = "startpos" if opening.fen is None else f"fen {opening.fen}"
    return f"position {start} moves {' '.join(moves)}" if moves else f"position {start}"


async def play_game(
    engines: tuple[Engine, Engine], opening: Opening, settings: Settings, tally: Tally
) -> tuple[str, str]:
    """One game, ``engines[0]`` White; returns (result, reason)."""
    board = chess.Board() if opening.fen is None else chess.Board(opening.fen)
    moves = list(opening.moves)
    for text in moves:
        board.push_uci(text)
    for engine in engines:
        await engine.send("ucinewgame")
        await engine.sync()
    clock = [settings.base_ms, settings.base_ms]
    plies = 0
    while True:
        ended = rules_outcome(board, plies, settings.max_moves)
        if ended is not None:
            return ended
        side = 0 if board.turn == chess.WHITE else 1
        engine = engines[side]
        await engine.send(position_line(opening, moves))
        sent = time.monotonic()
        allowed_ms = clock[side] + settings.margin_ms
        try:
            reply = await engine.search(
                board, go_line(clock, settings.inc_ms), sent + allowed_ms / 1000 + settings.hang_s
            )
        except TimeoutError:
            tally.hangs += 1
            tally.time_losses += 1
            tally.problem("hang", f"{engine.name}: no bestmove in {board.fen()}")
            await engine.stop()
            await engine.start()
            return forfeit(board, board.turn), "hang"
        elapsed_ms = (reply.arrived - sent) * 1000
        tally.reply_ms.append(elapsed_ms)
        left = clock[side] - elapsed_ms
        if tally.min_time_left_ms is None or left < tally.min_time_left_ms:
            tally.min_time_left_ms = left
        if elapsed_ms > allowed_ms:
            tally.time_losses += 1
            tally.problem(
                "time loss",
                f"{engine.name}: {elapsed_ms:.0f} ms with {clock[side]:.0f} ms left "
                f"in {board.fen()}",
            )
            return forfeit(board, board.turn), "time_forfeit"
        clock[side] = left + settings.inc_ms
        if not judge_bestmove(engine, board, reply, tally):
            return forfeit(board, board.turn), "illegal_move"
        board.push_uci(reply.best)
        moves.append(reply.best)
        plies += 1
        tally.moves += 1


def judge_bestmove(engine: Engine, board: chess.Board, reply: Reply, tally: Tally) -> bool:
    """Whether ``bestmove`` can be played; an illegal ponder move is counted, not fatal."""
    if first_illegal(board, [reply.best]) is not None:
        tally.illegal_bestmove += 1
        tally.problem("illegal bestmove", f"{engine.name}: {reply.best} in {board.fen()}")
        return False
    if reply.ponder is not None and first_illegal(board, [reply.best, reply.ponder]) is not None:
        tally.illegal_ponder += 1
        tally.problem(
            "illegal ponder",
            f"{engine.name}: bestmove {reply.best} ponder {reply.ponder} in {board.fen()}",
        )
    return True


def record(tally: Tally, result: str, reason: str, engine1_white: bool) -> None:
    tally.games += 1
    tally.colours[result] += 1
    tally.terminations[reason] += 1
    if result == "1/2-1/2":
        tally.engine1["D"] += 1
    elif (result == "1-0") == engine1_white:
        tally.engine1["W"] += 1
    else:
        tally.engine1["L"] += 1


async def worker(
    slot: int,
    queue: asyncio.Queue[int],
    openings: list[Opening],
    args: argparse.Namespace,
    tally: Tally,
) -> None:
    """Play games from ``queue`` with this slot's own two engine processes."""
    options = [f"name Hash value {args.hash}", f"name Threads value {args.threads}"]
    options += [f"name {name} value {value}" for name, value in args.option]
    one = Engine(f"engine1#{slot}", shlex.split(args.engine), options, tally)
    two = Engine(f"engine2#{slot}", shlex.split(args.engine2 or args.engine), options, tally)
    settings = Settings(
        args.base * 1000, args.inc * 1000, args.timemargin_ms, args.hang_s, args.max_moves
    )
    await one.start()
    await two.start()
    try:
        while not queue.empty():
            index = queue.get_nowait()
            opening = openings[index // 2]
            engine1_white = index % 2 == 0
            pair = (one, two) if engine1_white else (two, one)
            try:
                result, reason = await play_game(pair, opening, settings, tally)
            except EngineGoneError as exc:
                # Not scored: the game is abandoned, both processes start afresh.
                tally.crashes += 1
                tally.games += 1
                tally.terminations["crash"] += 1
                tally.problem("crash", f"{exc} in game {index + 1} ({opening.label})")
                for engine in (one, two):
                    await engine.stop()
                    await engine.start()
                continue
            record(tally, result, reason, engine1_white)
            if not args.quiet:
                w, d, l_ = (tally.engine1[k] for k in "WDL")
                colour = "white" if engine1_white else "black"
                print(
                    f"game {index + 1} ({opening.label}, engine1 {colour}): {result} {reason}; "
                    f"{tally.games} done, engine1 W-D-L {w}-{d}-{l_}, problems {tally.problems}",
                    flush=True,
                )
    finally:
        await one.quit()
        await two.quit()


async def run(args: argparse.Namespace) -> Tally:
    tally = Tally()
    pairs = (args.games + 1) // 2
    openings = load_openings(args.openings, pairs, OpeningSelection(start=args.start))
    queue: asyncio.Queue[int] = asyncio.Queue()
    for index in range(args.games):
        queue.put_nowait(index)
    async with asyncio.TaskGroup() as group:
        for slot in range(max(1, min(args.concurrency, args.games))):
            group.create_task(worker(slot, queue, openings, args, tally))
    return tally


def summary(tally: Tally, args: argparse.Namespace, wall_s: float) -> dict[str, Any]:
    data = asdict(tally)
    replies = sorted(tally.reply_ms)
    del data["reply_ms"]
    if replies:
        data["reply_ms"] = {
            "p50": round(replies[len(replies) // 2], 1),
            "p99": round(replies[len(replies) * 99 // 100], 1),
            "max": round(replies[-1], 1),
        }
    data.update(
        engine1=dict(tally.engine1),
        colours=dict(tally.colours),
        terminations=dict(tally.terminations),
        problems=tally.problems,
        wall_s=round(wall_s, 1),
        tc=f"{args.base:g}+{args.inc:g}",
        concurrency=args.concurrency,
        hash_mb=args.hash,
        threads=args.threads,
        timemargin_ms=args.timemargin_ms,
        engine=args.engine,
        engine2=args.engine2 or args.engine,
        openings=str(args.openings),
    )
    if tally.min_time_left_ms is not None:
        data["min_time_left_ms"] = round(tally.min_time_left_ms, 1)
    return data


def print_summary(data: dict[str, Any]) -> None:
    wdl = data["engine1"]
    colours = data["colours"]
    print(
        f"pv_soak: {data['games']} games at {data['tc']} ({data['concurrency']} at a time, "
        f"Hash {data['hash_mb']}, Threads {data['threads']}), {data['moves']} moves, "
        f"{data['info_lines']} info lines, {data['pv_lines']} PVs, "
        f"{data['pv_moves']} PV moves judged, {data['wall_s']} s"
    )
    print(
        f"problems: {data['problems']}: illegal_pv={data['illegal_pv']} "
        f"illegal_currmove={data['illegal_currmove']} "
        f"illegal_bestmove={data['illegal_bestmove']} illegal_ponder={data['illegal_ponder']} "
        f"info_errors={data['info_errors']} failed_searches={data['failed_searches']} "
        f"stderr_errors={data['stderr_errors']} stderr_warnings={data['stderr_warnings']} "
        f"crashes={data['crashes']} hangs={data['hangs']} time_losses={data['time_losses']} "
        f"(margin {data['timemargin_ms']:g} ms; least time left "
        f"{data['min_time_left_ms']} ms; go to bestmove p50/p99/max "
        f"{'/'.join(str(v) for v in data.get('reply_ms', {}).values())} ms)"
    )
    print(
        f"results: engine1 W-D-L {wdl.get('W', 0)}-{wdl.get('D', 0)}-{wdl.get('L', 0)}; "
        f"white-draw-black {colours.get('1-0', 0)}-{colours.get('1/2-1/2', 0)}-"
        f"{colours.get('0-1', 0)}; terminations {json.dumps(data['terminations'])}"
    )


def option_pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, not {text!r}")
    return name, value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--base", type=float, default=1.0, help="seconds per game (1)")
    parser.add_argument("--inc", type=float, default=0.01, help="seconds added per move (0.01)")
    parser.add_argument("--concurrency", type=int, default=2, help="games at a time (2)")
    parser.add_argument("--hash", type=int, default=16, help="Hash in MiB (16)")
    parser.add_argument("--threads", type=int, default=1, help="Threads (1)")
    parser.add_argument(
        "--option", type=option_pair, action="append", default=[], help="NAME=VALUE, repeatable"
    )
    parser.add_argument("--engine", default="brudno", help="engine 1's command")
    parser.add_argument("--engine2", default=None, help="engine 2's command (engine 1's)")
    parser.add_argument("--openings", type=Path, default=OPENINGS)
    parser.add_argument("--start", type=int, default=1, help="first opening (1-based)")
    parser.add_argument("--max-moves", type=int, default=250, help="move cap: a draw (250)")
    parser.add_argument(
        "--timemargin-ms", type=float, default=0.0, help="lateness forgiven (0, as cutechess)"
    )
    parser.add_argument(
        "--hang-s", type=float, default=10.0, help="wait this long past the flag, then kill"
    )
    parser.add_argument("--quiet", action="store_true", help="no line per game")
    parser.add_argument("--json", action="store_true", help="the summary as one JSON object")
    args = parser.parse_args()
    if args.games < 1:
        parser.error("--games must be at least 1")
    started = time.monotonic()
    tally = asyncio.run(run(args))
    data = summary(tally, args, time.monotonic() - started)
    if args.json:
        print(json.dumps(data, sort_keys=True))
    else:
        print_summary(data)
    return 1 if tally.problems else 0


if __name__ == "__main__":
    sys.exit(main())
