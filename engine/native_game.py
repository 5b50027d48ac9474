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
:meth:`NativeGame.folded_key`.
"""

from __future__ import annotations

from typing import Any, cast

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
    game's method.  Without :class:`~engine.game.CheckingPush` a push asks ``in_check``
    after it, without :class:`~engine.game.CheckTest` a check test plays the move and looks,
    and without :class:`~engine.game.StaticExchange` every capture keeps material and gains
    without bound.  Only the methods called are looked up (a test's partial game works)."""

    def __init__(self, game: Game[Any]) -> None:
        self.game = game
        self.checking_push = isinstance(game, CheckingPush)
        self.check_test = isinstance(game, CheckTest)
        self.exchange = isinstance(game, StaticExchange)

    def folded_key(self) -> i64:
        return fold_key(self.game.key())

    def is_terminal(self) -> bool:
        return self.game.is_terminal()

    def terminal_value(self) -> int:
        return self.game.terminal_value()

    def in_check(self) -> bool:
        return self.game.in_check()

    def evaluate(self) -> int:
        return self.game.evaluate()

    def legal_moves(self) -> list[Any]:
        return self.game.legal_moves()

    def noisy_moves(self) -> list[Any]:
        return self.game.noisy_moves()

    def quiet_moves(self) -> list[Any]:
        return self.game.quiet_moves()

    def is_noisy(self, move: Any) -> bool:
        return self.game.is_noisy(move)

    def push_check(self, move: Any) -> bool:
        game = self.game
        if self.checking_push:
            return cast(CheckingPush[Any], game).push_check(move)
        game.push(move)
        return game.in_check()

    def pop(self) -> None:
        self.game.pop()

    def can_null_move(self) -> bool:
        return self.game.can_null_move()

    def push_null(self) -> None:
        self.game.push_null()

    def gives_check(self, move: Any) -> bool:
        game = self.game
        if self.check_test:
            return cast(CheckTest[Any], game).gives_check(move)
        game.push(move)
        check = game.in_check()
        game.pop()
        return check

    def see_ge(self, move: Any, threshold: int) -> bool:
        if self.exchange:
            return cast(StaticExchange[Any], self.game).see_ge(move, threshold)
        return True

    def max_gain(self) -> int:
        if self.exchange:
            return cast(StaticExchange[Any], self.game).max_gain()
        return INF
