"""The game as the search asks it on every node: native methods of a compiled class.

The search asks a game a dozen questions per node (is it over, its key, its evaluation, the
move lists, push and pop, ...).  Through the :class:`~engine.game.Game` protocol each is a
Python-level call of a bound method, 60-80 instructions compiled, and the 64-bit key crosses
as a boxed int.  A game compiled with the engine (mypyc, in the same build) subclasses
:class:`NativeGame`, and the search calls it through the class's native method table, a few
instructions a call, with the key as a native word.  Any other game is wrapped in
:class:`ProtocolGame`, which forwards to the protocol and stands in for the optional
capabilities the game lacks, so that the search has one code path for every game.

The engine stays game-agnostic: it knows this class, never the games that subclass it
(``tests/test_layers.py``).  A subclass keeps the :class:`~engine.game.Game` contract too;
the methods below are the protocol's, with the contracts stated there, plus
:meth:`NativeGame.folded_key` and the history index (:meth:`NativeGame.history_index`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mypy_extensions import i64

from engine.game import CheckingPush, CheckTest, Game, StaticExchange
from engine.score import INF
from engine.tt import fold_key


class NativeGame:
    """The per-node calls of the search, as methods a compiled game overrides.

    Each is the :class:`~engine.game.Game` method of the same name (or of the optional
    capability named): ``see_ge`` and ``max_gain`` (:class:`~engine.game.StaticExchange`),
    ``gives_check`` (:class:`~engine.game.CheckTest`) and ``push_check``
    (:class:`~engine.game.CheckingPush`) must be real here, and the search asks them only
    where its configuration uses them.  The bodies here only raise: a subclass overrides
    every one.
    """

    def folded_key(self) -> i64:
        """``fold_key(key())`` (:func:`engine.tt.fold_key`): the key as the table's signed
        64-bit word, without boxing it."""
        raise NotImplementedError

    def history_size(self) -> i64:
        """How many history indices the game uses: :meth:`history_index` is below this.  The
        search's history tables (:class:`engine.ordering.History`) are allocated this large
        before a search, so that scoring a move allocates nothing."""
        raise NotImplementedError

    def history_index(self, move: Any) -> i64:
        """``move``'s index in the history tables, in ``0 .. history_size() - 1``: the same
        for equal moves, in every position and every search of the game, and different for
        different moves.  Or -1 for a game that numbers no moves: the history then numbers
        them itself, by equality, as they come."""
        raise NotImplementedError

    def is_terminal(self) -> bool:
        raise NotImplementedError

    def terminal_value(self) -> int:
        raise NotImplementedError

    def in_check(self) -> bool:
        raise NotImplementedError

    def evaluate(self) -> int:
        raise NotImplementedError

    def legal_moves(self) -> list[Any]:
        raise NotImplementedError

    def noisy_moves(self) -> list[Any]:
        raise NotImplementedError

    def quiet_moves(self) -> list[Any]:
        raise NotImplementedError

    def is_noisy(self, move: Any) -> bool:
        raise NotImplementedError

    def push_check(self, move: Any) -> bool:
        raise NotImplementedError

    def pop(self) -> None:
        raise NotImplementedError

    def can_null_move(self) -> bool:
        raise NotImplementedError

    def push_null(self) -> None:
        raise NotImplementedError

    def gives_check(self, move: Any) -> bool:
        raise NotImplementedError

    def see_ge(self, move: Any, threshold: int) -> bool:
        raise NotImplementedError

    def max_gain(self) -> int:
        raise NotImplementedError


def native(game: Game[Any] | NativeGame) -> NativeGame:
    """``game`` itself when it is a :class:`NativeGame`, else a :class:`ProtocolGame` of it."""
    if isinstance(game, NativeGame):
        return game
    return ProtocolGame(game)


class ProtocolGame(NativeGame):
    """Any :class:`~engine.game.Game` behind :class:`NativeGame`: each call forwards to the
    game's bound method, looked up once here.  Without :class:`~engine.game.CheckingPush` a
    push asks ``in_check`` after it, without :class:`~engine.game.CheckTest` a check test
    plays the move and looks, and without :class:`~engine.game.StaticExchange` every capture
    keeps material and gains without bound.  Moves have no history index: the history
    numbers them itself."""

    def __init__(self, game: Game[Any]) -> None:
        self.game = game
        self._key = game.key
        self._is_terminal = game.is_terminal
        self._terminal_value = game.terminal_value
        self._in_check = game.in_check
        self._evaluate = game.evaluate
        self._legal_moves = game.legal_moves
        self._noisy_moves = game.noisy_moves
        self._quiet_moves = game.quiet_moves
        self._is_noisy = game.is_noisy
        self._push = game.push
        self._pop = game.pop
        self._can_null_move = game.can_null_move
        self._push_null = game.push_null
        self._push_check: Callable[[Any], bool] | None = (
            game.push_check if isinstance(game, CheckingPush) else None
        )
        self._gives_check: Callable[[Any], bool] | None = (
            game.gives_check if isinstance(game, CheckTest) else None
        )
        exchange = game if isinstance(game, StaticExchange) else None
        self._see_ge: Callable[[Any, int], bool] | None = (
            None if exchange is None else exchange.see_ge
        )
        self._max_gain: Callable[[], int] | None = None if exchange is None else exchange.max_gain

    def folded_key(self) -> i64:
        return fold_key(self._key())

    def history_size(self) -> i64:
        return 0

    def history_index(self, move: Any) -> i64:
        """-1: the history numbers the moves itself, by a dict lookup, which works for any
        game (a :class:`~engine.game.MoveCodec`'s ``move_code`` would be a Python call)."""
        return -1

    def is_terminal(self) -> bool:
        return self._is_terminal()

    def terminal_value(self) -> int:
        return self._terminal_value()

    def in_check(self) -> bool:
        return self._in_check()

    def evaluate(self) -> int:
        return self._evaluate()

    def legal_moves(self) -> list[Any]:
        return self._legal_moves()

    def noisy_moves(self) -> list[Any]:
        return self._noisy_moves()

    def quiet_moves(self) -> list[Any]:
        return self._quiet_moves()

    def is_noisy(self, move: Any) -> bool:
        return self._is_noisy(move)

    def push_check(self, move: Any) -> bool:
        push_check = self._push_check
        if push_check is not None:
            return push_check(move)
        self._push(move)
        return self._in_check()

    def pop(self) -> None:
        self._pop()

    def can_null_move(self) -> bool:
        return self._can_null_move()

    def push_null(self) -> None:
        self._push_null()

    def gives_check(self, move: Any) -> bool:
        gives_check = self._gives_check
        if gives_check is not None:
            return gives_check(move)
        self._push(move)
        check = self._in_check()
        self._pop()
        return check

    def see_ge(self, move: Any, threshold: int) -> bool:
        see_ge = self._see_ge
        return True if see_ge is None else see_ge(move, threshold)

    def max_gain(self) -> int:
        max_gain = self._max_gain
        return INF if max_gain is None else max_gain()
