"""Staged, lazy move ordering: the cheapest good guesses first, generation only when needed.

Alpha-beta prunes most when the best move comes first, and a node that cuts off on its first
move never needs the rest of its move list.  So moves are produced in stages:

1. the transposition-table move, before any move generation (the table stores full 64-bit
   keys, so its move is trusted to be legal here; see :mod:`engine.tt`);
2. the noisy moves (captures, promotions), in the game's own order (MVV-LVA for chess);
3. the killer moves of this ply that are legal here (quiet moves that cut off in a sibling),
   then the counter move, the quiet move that last refuted the opponent's previous move
   wherever it was played (a reply to a move tends to stay good across the tree);
4. the remaining quiet moves, by history score, highest first;
5. when the caller passes an exchange test (:class:`~engine.game.StaticExchange`), the noisy
   moves that lose material: a queen taking a defended pawn refutes less often than a
   killer, and trying it second costs a whole subtree.

Quiet moves are generated only when the consumer asks for a move past stage 2, so a cut-off on
the TT move or a capture never pays for quiet move generation.  Each move is yielded with its
stage so the search can tell quiet moves (for reductions, pruning and history) from noisy ones
without asking the game again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterator
from typing import Any, Final

from engine.game import Game

# The stages stay plain ints, not an IntEnum: the search compares the stage of every move it
# tries, and CPython 3.11 specialises comparisons of exact ints only (an IntEnum member makes
# ``STAGE_KILLER <= stage <= STAGE_QUIET`` several times slower).
STAGE_TT: Final = 0
"""The transposition-table move (noisy or quiet: ask ``game.is_noisy`` if it matters)."""
STAGE_NOISY: Final = 1
STAGE_KILLER: Final = 2
STAGE_QUIET: Final = 3
STAGE_LOSING: Final = 4
"""Noisy moves that lose material by static exchange, after the quiet moves."""

History = Counter[Hashable]
"""History scores by move: a ``Counter`` so unknown moves score 0 without being inserted.
The hot paths read it with ``get(move, 0)``: a miss through ``Counter.__getitem__`` runs its
``__missing__``, a Python-level call.  Keyed by the move itself, which hashes in C for every
game here (ints, tuples of ints); python-chess's moves, with a Python-level ``__hash__``,
never reach the search (:mod:`games.chess_game.move_codes`)."""


def staged_moves(
    game: Game[Any],
    tt_move: Hashable | None,
    killer1: Hashable | None,
    killer2: Hashable | None,
    history: History,
    *,
    exchange: Callable[[Any, int], bool] | None = None,
    counter: Hashable | None = None,
    interned: bool = False,
) -> Iterator[tuple[Any, int]]:
    """Yield ``(move, stage)`` for every legal move of ``game`` exactly once, best guess first.

    ``exchange(move, 0)`` (a game's ``see_ge``), when given, sends losing noisy moves to the
    last stage.  ``interned`` says equal moves are the same object (see :func:`take`).
    ``history`` is keyed by the move itself.  The game must not be changed between steps
    except by balanced push/pop pairs.
    """
    tt_noisy = False
    if tt_move is not None:
        yield tt_move, STAGE_TT
    noisy = game.noisy_moves()
    losing: list[Any] = []
    if noisy:
        if tt_move is not None and take(noisy, tt_move, interned):
            tt_noisy = True
        for move in noisy:
            if exchange is not None and not exchange(move, 0):
                losing.append(move)
            else:
                yield move, STAGE_NOISY
    quiets = game.quiet_moves()
    if not quiets:
        for move in losing:
            yield move, STAGE_LOSING
        return
    if tt_move is not None and not tt_noisy:
        take(quiets, tt_move, interned)
    if killer1 is not None and take(quiets, killer1, interned):
        yield killer1, STAGE_KILLER
    if killer2 is not None and take(quiets, killer2, interned):
        yield killer2, STAGE_KILLER
    if counter is not None and take(quiets, counter, interned):
        yield counter, STAGE_KILLER
    if len(quiets) > 1:
        score = history.get
        quiets.sort(key=lambda move: score(move, 0), reverse=True)
    for move in quiets:
        yield move, STAGE_QUIET
    for move in losing:
        yield move, STAGE_LOSING


def take(moves: list[Any], move: Any, interned: bool) -> bool:
    """Remove ``move`` from ``moves`` if it is there, and say whether it was.

    Moves are looked for by identity first: the table, killer and counter moves are usually
    the very objects the game generated, and ``==`` on a move object is a Python-level call
    per list element (python-chess's ``Move.__eq__``), where ``is`` is one pointer compare.
    When ``interned`` (the game hands out one object per move), identity is the whole test;
    otherwise an equal move is looked for too.  A move list holds each move once, so either
    way the same element is removed as by ``list.remove``.
    """
    for i in range(len(moves)):
        if moves[i] is move:
            del moves[i]
            return True
    if interned or move not in moves:
        return False
    moves.remove(move)
    return True


def ordered_moves(
    game: Game[Any],
    tt_move: Hashable | None = None,
    killers: tuple[Hashable | None, Hashable | None] = (None, None),
    history: History | None = None,
) -> list[Any]:
    """All legal moves in staged order, as a list (for the root and for tests)."""
    return [
        move
        for move, _ in staged_moves(
            game,
            tt_move,
            killers[0],
            killers[1],
            Counter() if history is None else history,
        )
    ]
