"""The engines of a match, behind one small interface.

A :class:`Player` is one running engine process.  The match asks it to start a game and to
move in a position under given limits, and learns what it answered (move text, score, depth,
time taken) or how it failed: it crashed (:class:`EngineCrashError`), it did not answer in time
(:class:`EngineTimeoutError`), or its answer was not a legal move (:class:`EngineIllegalMoveError`).
The player never decides a game; the match does, from these facts.

Two implementations:

* :class:`ChessPlayer` speaks through python-chess's asyncio client
  (:func:`chess.engine.popen_uci`), which validates every ``bestmove`` against the board and
  parses ``info`` lines into typed scores.  All games of a match share one event loop, so
  ``--concurrency N`` is N games in flight with no threads.
* :class:`VariantPlayer` is a minimal UCI client for the variants python-chess has no board
  for (tic-tac-toe, connect four): it selects ``UCI_Variant`` and passes move texts through
  unchanged; the match's referee (the game adapter) judges their legality.

Time is measured from just before ``position``/``go`` is written to when ``bestmove`` has
been read, which is what cutechess and fastchess count against the clock.  The ``ucinewgame``
/ ``isready`` round trip is done before the game (:meth:`Player.new_game`), off the clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import chess
import chess.engine

__all__ = [
    "STARTUP_TIMEOUT",
    "ChessPlayer",
    "EngineConfig",
    "EngineCrashError",
    "EngineIllegalMoveError",
    "EngineStartError",
    "EngineTimeoutError",
    "GoLimits",
    "MoveReply",
    "Player",
    "PlayerError",
    "Position",
    "VariantPlayer",
    "start_player",
]

LOGGER = logging.getLogger(__name__)

STARTUP_TIMEOUT = 30.0
"""Seconds an engine may take to answer ``uci`` (Python engines import a lot) or ``isready``."""

RECOVER_TIMEOUT = 3.0
"""Seconds an engine gets to answer ``stop`` after a time forfeit before it is killed."""


class PlayerError(Exception):
    """Base class: the engine did not produce a usable move."""


class EngineStartError(PlayerError):
    """The engine could not be started or did not complete the UCI handshake."""


class EngineCrashError(PlayerError):
    """The engine process exited or closed its output."""


class EngineTimeoutError(PlayerError):
    """No ``bestmove`` before the deadline (the engine is still thinking)."""


class EngineIllegalMoveError(PlayerError):
    """The ``bestmove`` was not a legal move (or no move at all in a live position)."""

    def __init__(self, text: str, detail: str) -> None:
        super().__init__(detail)
        self.text = text


@dataclass(frozen=True, slots=True)
class EngineConfig:
    """How to run one engine: its command line, UCI options, and an optional display name."""

    command: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()
    name: str | None = None


@dataclass(frozen=True, slots=True)
class GoLimits:
    """The arguments of one ``go`` command (times in milliseconds)."""

    wtime: int | None = None
    btime: int | None = None
    winc: int | None = None
    binc: int | None = None
    movestogo: int | None = None
    movetime: int | None = None
    depth: int | None = None
    nodes: int | None = None

    def words(self) -> list[str]:
        """``go`` arguments in the order engines usually log them."""
        out: list[str] = []
        for name in ("wtime", "btime", "winc", "binc", "movestogo", "movetime", "depth", "nodes"):
            value = getattr(self, name)
            if value is not None:
                out += [name, str(max(1, value) if name in ("wtime", "btime") else value)]
        return out

    def to_python_chess(self) -> chess.engine.Limit:
        def seconds(ms: int | None) -> float | None:
            return None if ms is None else ms / 1000.0

        return chess.engine.Limit(
            white_clock=seconds(self.wtime),
            black_clock=seconds(self.btime),
            white_inc=seconds(self.winc),
            black_inc=seconds(self.binc),
            remaining_moves=self.movestogo,
            time=seconds(self.movetime),
            depth=self.depth,
            nodes=self.nodes,
        )


@dataclass(frozen=True, slots=True)
class Position:
    """What an engine is asked to move in: the game's start and the moves since (UCI texts).

    ``board`` is the referee's python-chess board for chess (the chess client needs one; it
    is not modified), None for other variants."""

    start_fen: str | None
    moves: Sequence[str]
    board: chess.Board | None = None


@dataclass(frozen=True, slots=True)
class MoveReply:
    """An engine's answer: its move, its last reported score from its own point of view
    (centipawns, or ``mate`` moves with a sign), its depth, and the seconds it took."""

    move: str
    elapsed: float
    cp: int | None = None
    mate: int | None = None
    depth: int | None = None


class Player(Protocol):
    """One running engine process."""

    @property
    def name(self) -> str:
        """The engine's ``id name`` (or the configured name)."""
        ...

    @property
    def alive(self) -> bool: ...

    async def new_game(self) -> None:
        """``ucinewgame`` then wait for ``readyok`` (off the clock).  Raises PlayerError."""
        ...

    async def go(self, position: Position, limits: GoLimits, timeout: float | None) -> MoveReply:
        """Search ``position`` and return the move; raise EngineTimeoutError when ``timeout``
        seconds pass without one, EngineCrashError, or EngineIllegalMoveError."""
        ...

    async def recover(self) -> bool:
        """After a timeout: stop the search and check that the engine answers again.
        False when it does not (the caller then closes it and starts a new one)."""
        ...

    async def close(self) -> None:
        """``quit``, then kill the process if it does not exit.  Never raises."""
        ...


def _check_value(value: str) -> str:
    lowered = value.lower()
    return lowered if lowered in ("true", "false") else value


# -- chess, through python-chess ----------------------------------------------------------------
class _ErrorWatchingUci(chess.engine.UciProtocol):
    """python-chess's UCI client, keeping the ``info string error`` lines an engine sends.

    python-chess reads those only as unexpected output, so a ``setoption`` the engine
    rejected (a mistyped ``EvalFile``) would go unnoticed and the match would compare the
    engine with itself; :meth:`ChessPlayer.start` checks them after configuring.
    """

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[str] = []

    @classmethod
    async def start(
        cls, command: list[str]
    ) -> tuple[asyncio.SubprocessTransport, _ErrorWatchingUci]:
        """``chess.engine.popen_uci`` for this class: spawn (own process group) and initialize."""
        transport, engine = await cls.popen(command, setpgrp=True)
        try:
            await engine.initialize()
        except BaseException:
            transport.close()
            raise
        return transport, engine

    def line_received(self, line: str) -> None:
        if line.startswith("info string error"):
            self.errors.append(line[len("info string ") :])
        super().line_received(line)


class ChessPlayer:
    """A chess engine driven by python-chess's asyncio UCI client."""

    def __init__(
        self,
        transport: asyncio.SubprocessTransport,
        engine: chess.engine.UciProtocol,
        name: str,
    ) -> None:
        self._transport = transport
        self._engine = engine
        self._name = name
        self._closed = False

    @classmethod
    async def start(cls, config: EngineConfig) -> ChessPlayer:
        try:
            transport, engine = await asyncio.wait_for(
                _ErrorWatchingUci.start(list(config.command)), STARTUP_TIMEOUT
            )
        except (OSError, chess.engine.EngineError, TimeoutError) as exc:
            raise EngineStartError(f"cannot start {' '.join(config.command)!r}: {exc}") from None
        player = cls(transport, engine, config.name or engine.id.get("name", config.command[0]))
        try:
            options: dict[str, str | int | bool | None] = {}
            for name, value in config.options:
                option = engine.options.get(name)
                if option is None:
                    raise EngineStartError(f"{player.name} has no option {name!r}")
                if option.is_managed():
                    raise EngineStartError(f"{name} is set by the match, not by --option")
                options[name] = _check_value(value) if option.type == "check" else value
            await asyncio.wait_for(engine.configure(options), STARTUP_TIMEOUT)
            await asyncio.wait_for(engine.ping(), STARTUP_TIMEOUT)
            if engine.errors:
                raise EngineStartError(f"{player.name} rejected its options: {engine.errors[0]}")
        except (chess.engine.EngineError, TimeoutError) as exc:
            await player.close()
            raise EngineStartError(f"{player.name}: {exc}") from None
        except EngineStartError:
            await player.close()
            raise
        return player

    @property
    def name(self) -> str:
        return self._name

    @property
    def alive(self) -> bool:
        return not self._closed and not self._engine.returncode.done()

    async def new_game(self) -> None:
        if not self.alive:
            raise EngineCrashError("the engine has exited")
        try:
            # python-chess sends ucinewgame itself when play() sees a new `game` token, but
            # then the isready round trip would run on the mover's clock.  Announcing the game
            # here and telling the client it is current keeps it off the clock.
            self._engine.send_line("ucinewgame")
            token = object()
            self._engine.game = token
            self._engine.first_game = False
            await asyncio.wait_for(self._engine.ping(), STARTUP_TIMEOUT)
        except chess.engine.EngineTerminatedError as exc:
            raise EngineCrashError(str(exc)) from None
        except TimeoutError:
            raise EngineTimeoutError("no readyok after ucinewgame") from None

    async def go(self, position: Position, limits: GoLimits, timeout: float | None) -> MoveReply:
        board = position.board
        if board is None:
            raise ValueError("ChessPlayer needs the referee's board")
        if not self.alive:
            raise EngineCrashError("the engine has exited")
        started = time.monotonic()
        try:
            result = await asyncio.wait_for(
                self._engine.play(
                    board,
                    limits.to_python_chess(),
                    game=self._engine.game,
                    info=chess.engine.INFO_BASIC | chess.engine.INFO_SCORE,
                ),
                timeout,
            )
        except TimeoutError:
            raise EngineTimeoutError(f"no move after {time.monotonic() - started:.3f} s") from None
        except chess.engine.EngineTerminatedError as exc:
            raise EngineCrashError(str(exc)) from None
        except chess.engine.EngineError as exc:
            # The client raises this for a bestmove that does not parse or is not legal here.
            if not self.alive:
                raise EngineCrashError(str(exc)) from None
            raise EngineIllegalMoveError(_bad_move_text(exc), str(exc)) from None
        elapsed = time.monotonic() - started
        if result.move is None:
            raise EngineIllegalMoveError("(none)", "bestmove without a move in a live position")
        cp = mate = None
        pov = result.info.get("score")
        if pov is not None:
            score = pov.relative
            if score.is_mate():
                mate = score.mate()
            else:
                cp = score.score()
        depth = result.info.get("depth")
        return MoveReply(result.move.uci(), elapsed, cp, mate, depth)

    async def recover(self) -> bool:
        if not self.alive:
            return False
        # The cancelled play() has already sent `stop`; ping queues behind its bestmove.  On
        # a hang the process is killed *before* the ping is abandoned: cancelling a command of
        # a live engine and then killing it makes python-chess log a spurious error.
        ping = asyncio.ensure_future(self._engine.ping())
        done, _ = await asyncio.wait({ping}, timeout=RECOVER_TIMEOUT)
        if not done:
            with contextlib.suppress(Exception):
                self._transport.kill()
            with contextlib.suppress(Exception):
                await ping
            return False
        return ping.exception() is None

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._engine.quit(), RECOVER_TIMEOUT)
        with contextlib.suppress(Exception):
            self._transport.close()


def _bad_move_text(exc: BaseException) -> str:
    """The offending move as far as python-chess's message reveals it (for the PGN comment)."""
    cause = exc.__context__
    text = str(cause) if cause is not None else str(exc)
    for quote in ("'", '"'):
        _, _, rest = text.partition(quote)
        quoted, closed, _ = rest.partition(quote)
        if closed:
            return quoted
    return text


# -- other variants, through a minimal UCI client ---------------------------------------------
@dataclass(slots=True)
class _Info:
    cp: int | None = None
    mate: int | None = None
    depth: int | None = None


class VariantPlayer:
    """A UCI engine playing a variant python-chess does not know, selected by ``UCI_Variant``.

    Reading is sequential (one request at a time per engine), so no reader task is needed:
    each request reads until the line that ends it.  ``StreamReader.readline`` is safe to
    cancel (the timeout): unread data stays buffered for the next read.
    """

    def __init__(self, proc: asyncio.subprocess.Process, name: str, variant: str) -> None:
        self._proc = proc
        self._name = name
        self._variant = variant
        self._closed = False
        self._searching = False

    @classmethod
    async def start(cls, config: EngineConfig, variant: str) -> VariantPlayer:
        try:
            proc = await asyncio.create_subprocess_exec(
                *config.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise EngineStartError(f"cannot start {' '.join(config.command)!r}: {exc}") from None
        player = cls(proc, config.name or config.command[0], variant)
        try:
            await player._handshake(config)
        except (PlayerError, TimeoutError) as exc:
            await player.close()
            if isinstance(exc, EngineStartError):
                raise
            raise EngineStartError(f"{player.name}: {exc or 'no uciok'}") from None
        return player

    async def _handshake(self, config: EngineConfig) -> None:
        await self._send("uci")
        variants: set[str] = set()
        options: dict[str, str] = {}
        async with asyncio.timeout(STARTUP_TIMEOUT):
            while (line := await self._readline()) != "uciok":
                words = line.split()
                if words[:2] == ["id", "name"] and config.name is None:
                    self._name = line.split(None, 2)[2] if words[2:] else self._name
                elif words[:2] == ["option", "name"] and "type" in words:
                    name = " ".join(words[2 : words.index("type")])
                    options[name.lower()] = words[words.index("type") + 1]
                    if name == "UCI_Variant":
                        variants = {words[i + 1] for i, w in enumerate(words[:-1]) if w == "var"}
        if self._variant not in variants:
            raise EngineStartError(f"{self._name} does not offer UCI_Variant {self._variant}")
        await self._send(f"setoption name UCI_Variant value {self._variant}")
        for name, value in config.options:
            kind = options.get(name.lower())
            if kind is None:
                raise EngineStartError(f"{self._name} has no option {name!r}")
            if name.lower() == "uci_variant":
                raise EngineStartError("UCI_Variant is set by the match (--variant)")
            text = _check_value(value) if kind == "check" else value
            value_part = "" if kind == "button" else f" value {text}"
            await self._send(f"setoption name {name}{value_part}")
        await self._ready(STARTUP_TIMEOUT)

    @property
    def name(self) -> str:
        return self._name

    @property
    def alive(self) -> bool:
        return not self._closed and self._proc.returncode is None

    async def _send(self, line: str) -> None:
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.write((line + "\n").encode())
            await stdin.drain()
        except (ConnectionError, RuntimeError) as exc:
            raise EngineCrashError(f"cannot write to the engine: {exc}") from None

    async def _readline(self) -> str:
        stdout = self._proc.stdout
        assert stdout is not None
        raw = await stdout.readline()
        if not raw:
            raise EngineCrashError("the engine closed its output")
        return raw.decode(errors="replace").strip()

    async def _ready(self, timeout: float) -> None:
        await self._send("isready")
        async with asyncio.timeout(timeout):
            while await self._readline() != "readyok":
                pass

    async def new_game(self) -> None:
        await self._send("ucinewgame")
        try:
            await self._ready(STARTUP_TIMEOUT)
        except TimeoutError:
            raise EngineTimeoutError("no readyok after ucinewgame") from None

    async def go(self, position: Position, limits: GoLimits, timeout: float | None) -> MoveReply:
        where = "startpos" if position.start_fen is None else f"fen {position.start_fen}"
        moves = f" moves {' '.join(position.moves)}" if position.moves else ""
        info = _Info()
        started = time.monotonic()
        await self._send(f"position {where}{moves}")
        await self._send(" ".join(["go", *limits.words()]))
        self._searching = True
        try:
            async with asyncio.timeout(timeout):
                while True:
                    words = (await self._readline()).split()
                    if not words:
                        continue
                    if words[0] == "bestmove":
                        break
                    if words[0] == "info":
                        _parse_info(words, info)
        except TimeoutError:
            raise EngineTimeoutError(f"no move after {time.monotonic() - started:.3f} s") from None
        self._searching = False
        elapsed = time.monotonic() - started
        move = " ".join(words[1:2])  # "" when the engine named no move
        if move in ("", "(none)", "0000", "NULL"):
            raise EngineIllegalMoveError(move, "bestmove without a move")
        return MoveReply(move, elapsed, info.cp, info.mate, info.depth)

    async def recover(self) -> bool:
        if not self.alive:
            return False
        try:
            if self._searching:
                await self._send("stop")
                async with asyncio.timeout(RECOVER_TIMEOUT):
                    while not (await self._readline()).startswith("bestmove"):
                        pass
                self._searching = False
            await self._ready(RECOVER_TIMEOUT)
        except (TimeoutError, PlayerError):
            return False
        return True

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            if self._proc.returncode is None:
                await self._send("quit")
                await asyncio.wait_for(self._proc.wait(), RECOVER_TIMEOUT)
        if self._proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._proc.kill()
            with contextlib.suppress(Exception):
                await self._proc.wait()


def _parse_info(words: list[str], info: _Info) -> None:
    """Keep the depth and score of the main line (``multipv 1`` or no multipv)."""
    try:
        if "multipv" in words and words[words.index("multipv") + 1] != "1":
            return
        if "depth" in words:
            info.depth = int(words[words.index("depth") + 1])
        if "score" in words:
            kind, value = words[words.index("score") + 1 : words.index("score") + 3]
            if kind == "cp":
                info.cp, info.mate = int(value), None
            elif kind == "mate":
                info.cp, info.mate = None, int(value)
    except (ValueError, IndexError):
        LOGGER.debug("unparsable info line: %s", " ".join(words))


async def start_player(config: EngineConfig, variant: str) -> Player:
    """A running engine for ``variant``: python-chess's client for chess, ours otherwise."""
    if variant == "chess":
        return await ChessPlayer.start(config)
    return await VariantPlayer.start(config, variant)
