"""Running the lab: every algorithm at every depth on a source (:func:`run_lab`), or every
parallel scheme on every processor count (:func:`run_parallel`), with progress on a stream."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TextIO

from brudno.lab.sources import LabError, Source
from engine.game import Game
from engine.lab.classic import (
    ALGORITHMS,
    CHANCE_ALGORITHMS,
    DEFAULT_WINDOW,
    DETERMINISTIC_ALGORITHMS,
    ClassicResult,
    MoveOrder,
    search,
)
from engine.lab.parallel import SCHEMES, ParallelResult, simulate
from engine.lab.trees import UniformTree, effective_branching_factor

__all__ = ["LabConfig", "LabRow", "Progress", "check_algorithms", "run_lab", "run_parallel"]


@dataclass(frozen=True, slots=True)
class LabRow:
    """One algorithm at one depth."""

    result: ClassicResult
    time_ms: float
    best: str
    pv: tuple[str, ...]
    score: str

    @property
    def ebf(self) -> float:
        return effective_branching_factor(self.result.leaves, self.result.depth)


class Progress:
    """Reports a long run on stderr; silent for runs under a second."""

    def __init__(self, stream: TextIO | None, clock: Callable[[], float] = time.monotonic):
        self._stream = stream
        self._clock = clock
        self._tty = stream is not None and stream.isatty()
        self._every = 0.5 if self._tty else 10.0
        self._label = ""
        self._started = 0.0
        self._last = 0.0
        self._shown = False

    def start(self, label: str) -> None:
        self._label = label
        self._started = self._last = self._clock()
        self._shown = False

    def poll(self, nodes: int) -> bool:
        """The search's poll callback: never stops the search, only reports."""
        stream = self._stream
        if stream is None:
            return False
        now = self._clock()
        if now - self._last >= self._every and now - self._started >= 1.0:
            self._last = now
            text = f"lab: {self._label}: {nodes:,} nodes, {now - self._started:.0f} s"
            if self._tty:
                stream.write(f"\r{text}\x1b[K")
            else:
                stream.write(text + "\n")
            stream.flush()
            self._shown = True
        return False

    def done(self) -> None:
        if self._stream is not None and self._shown and self._tty:
            self._stream.write("\r\x1b[K")
            self._stream.flush()


@dataclass(frozen=True, slots=True)
class LabConfig:
    """What a lab run searches with: the algorithms, the depths (depth-major order), the
    move order, a first guess and window for the MTD family, and whether each depth is
    reached by iterative deepening (as an engine does, counting every iteration)."""

    algorithms: tuple[str, ...]
    depths: tuple[int, ...]
    order: MoveOrder = MoveOrder.TACTICAL
    guess: int | None = None
    window: int = DEFAULT_WINDOW
    iterative: bool = False


def run_lab(
    source: Source,
    config: LabConfig,
    *,
    progress: Progress | None = None,
    rows: list[LabRow] | None = None,
) -> list[LabRow]:
    """Search ``source`` with every algorithm at every depth of ``config``.

    With ``config.iterative`` each depth is reached by iterative deepening (depths 1, 2, ...
    each guessing from the previous value, the MT table kept between iterations); the row
    then counts the work of all iterations.  Rows are appended to ``rows`` as they finish
    (so an interrupted run keeps them)."""
    check_algorithms(config.algorithms, chance=source.chance)
    out = [] if rows is None else rows
    poll = None if progress is None else progress.poll
    for depth in config.depths:
        for algorithm in config.algorithms:
            game = source.position(depth)
            if progress is not None:
                progress.start(f"{algorithm} depth {depth}")
            started = time.perf_counter()
            if config.iterative:
                result = _deepen(algorithm, game, depth, config, poll)
            else:
                result = search(
                    algorithm,
                    game,
                    depth,
                    order=config.order,
                    guess=config.guess,
                    window=config.window,
                    poll=poll,
                )
            elapsed = (time.perf_counter() - started) * 1000.0
            if progress is not None:
                progress.done()
            pv = _pv_text(game, result.pv)
            out.append(LabRow(result, elapsed, pv[0] if pv else "", pv, source.score(result.value)))
    return out


def _deepen(
    algorithm: str,
    game: Game[Any],
    depth: int,
    config: LabConfig,
    poll: Callable[[int], bool] | None,
) -> ClassicResult:
    """Iterative deepening to ``depth``: the last iteration's result with every count summed
    over the iterations."""
    table: dict[tuple[int, int], list[Any]] = {}
    totals = [0, 0, 0, 0]
    guess: int | None = None
    result: ClassicResult | None = None
    for d in range(1, depth + 1):
        result = search(
            algorithm,
            game,
            d,
            order=config.order,
            guess=guess,
            window=config.window,
            tt=table,
            poll=poll,
        )
        guess = result.value if isinstance(result.value, int) else None
        for i, count in enumerate((result.nodes, result.leaves, result.passes, result.researches)):
            totals[i] += count
    assert result is not None  # depth >= 1
    return replace(
        result,
        nodes=totals[0],
        leaves=totals[1],
        passes=totals[2],
        researches=totals[3],
        tt_entries=len(table),
    )


def check_algorithms(algorithms: Sequence[str], *, chance: bool) -> None:
    """Raise :class:`LabError` for unknown names or algorithms that do not fit the source."""
    if not algorithms:
        raise LabError("no algorithms given")
    unknown = [name for name in algorithms if name not in ALGORITHMS]
    if unknown:
        raise LabError(f"unknown algorithm {', '.join(unknown)} (known: {', '.join(ALGORITHMS)})")
    fitting = CHANCE_ALGORITHMS if chance else DETERMINISTIC_ALGORITHMS
    misfits = [name for name in algorithms if name not in fitting]
    if misfits:
        kind = "has chance nodes" if chance else "has no chance nodes"
        raise LabError(
            f"{', '.join(misfits)} cannot search this: it {kind} (use {', '.join(fitting)})"
        )


def _pv_text(game: Game[Any], moves: Sequence[Any]) -> tuple[str, ...]:
    texts = []
    for move in moves:
        texts.append(game.format_move(move))
        game.push(move)
    for _ in moves:
        game.pop()
    return tuple(texts)


def run_parallel(
    tree: UniformTree, schemes: Sequence[str], processors: Sequence[int]
) -> list[ParallelResult]:
    """Every scheme on every processor count (scheme-major order)."""
    unknown = [name for name in schemes if name not in SCHEMES]
    if unknown or not schemes:
        raise LabError(
            f"unknown parallel scheme {', '.join(unknown) or '(none)'} "
            f"(known: {', '.join(SCHEMES)})"
        )
    return [simulate(scheme, tree, p) for scheme in schemes for p in processors]
