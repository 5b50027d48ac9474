"""The rules side of a match: which moves are legal, when a game is over, and its PGN.

A referee holds one game's position.  :class:`ChessReferee` uses a python-chess board, which
is also what python-chess's engine client needs; it ends games the way cutechess does
(checkmate, stalemate, insufficient material, the third occurrence of a position, 50 moves
without capture or pawn move) and writes SAN.  :class:`VariantReferee` plays any registered
game through its adapter (:mod:`engine.game`'s contract: ``parse_move``, ``push``,
``legal_moves``, ``is_terminal``, ``terminal_value``) and writes the moves as the engines
sent them.

PGN follows the standard's export format: the seven-tag roster first, then the match's tags;
``FEN``/``SetUp`` when the game does not start from the standard position; ``Variant`` for
games other than chess; one comment per engine move (``{+0.35/12 0.521s}``, as cutechess
writes them) and the reason the game ended as the final comment.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import chess

from brudno.arena.openings import Opening
from brudno.arena.players import Position
from engine.game import Game, IllegalMoveError
from games.registry import get_variant

__all__ = [
    "COLOUR_NAMES",
    "ChessReferee",
    "GameResult",
    "Outcome",
    "Referee",
    "Termination",
    "VariantReferee",
    "format_pgn",
    "make_referee",
]


class Termination(enum.StrEnum):
    """Values of the PGN ``Termination`` tag (PGN standard, section 9.8.1)."""

    NORMAL = "normal"
    TIME_FORFEIT = "time forfeit"
    RULES_INFRACTION = "rules infraction"
    ABANDONED = "abandoned"
    ADJUDICATION = "adjudication"
    UNTERMINATED = "unterminated"


class GameResult(enum.StrEnum):
    """The PGN result tokens (PGN standard, section 8.2.6)."""

    WHITE_WINS = "1-0"
    BLACK_WINS = "0-1"
    DRAW = "1/2-1/2"
    UNFINISHED = "*"


COLOUR_NAMES = ("White", "Black")

_FIFTY_MOVES_PLIES = 100
"""The half-move clock at which the game is drawn by the fifty-move rule."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended: the PGN result, the Termination tag, and the reason in words."""

    result: GameResult
    termination: Termination
    reason: str

    @classmethod
    def win(cls, side: int, termination: Termination, reason: str) -> Outcome:
        return cls(
            GameResult.WHITE_WINS if side == 0 else GameResult.BLACK_WINS, termination, reason
        )

    @classmethod
    def draw(cls, termination: Termination, reason: str) -> Outcome:
        return cls(GameResult.DRAW, termination, reason)

    @property
    def white_points(self) -> float:
        return {GameResult.WHITE_WINS: 1.0, GameResult.BLACK_WINS: 0.0}.get(self.result, 0.5)


class Referee(Protocol):
    variant: str

    @property
    def turn(self) -> int:
        """0 when white (the first player) is to move."""
        ...

    @property
    def fullmove(self) -> int:
        """The current move number (1 at the standard start)."""
        ...

    def position(self) -> Position:
        """The game so far, as the engines are told it."""
        ...

    def play(self, text: str) -> str:
        """Play the engine's move text; returns its PGN notation.  Raises IllegalMoveError."""
        ...

    def outcome(self) -> Outcome | None:
        """The result if the rules end the game here, else None."""
        ...

    def start_fen(self) -> str | None:
        """The FEN the game started from (before book moves), None for the standard start."""
        ...

    def notation(self) -> Sequence[str]:
        """Every move so far in PGN notation, book moves included."""
        ...

    def start_fullmove(self) -> tuple[int, int]:
        """Move number and side to move of the start position (for PGN move numbers)."""
        ...


class ChessReferee:
    """Chess on a python-chess board."""

    variant = "chess"

    def __init__(self, opening: Opening) -> None:
        self._root = chess.Board(opening.fen) if opening.fen else chess.Board()
        self.board = self._root.copy()
        self._moves: list[str] = []
        self._san: list[str] = []
        for text in opening.moves:
            self.play(text)

    @property
    def turn(self) -> int:
        return 0 if self.board.turn == chess.WHITE else 1

    @property
    def fullmove(self) -> int:
        return self.board.fullmove_number

    def position(self) -> Position:
        fen = self._root.fen()
        return Position(None if fen == chess.STARTING_FEN else fen, self._moves, self.board)

    def play(self, text: str) -> str:
        try:
            move = self.board.parse_uci(text)
        except ValueError as exc:
            raise IllegalMoveError(f"illegal move {text}: {exc}") from None
        san = self.board.san(move)
        self.board.push(move)
        self._moves.append(move.uci())
        self._san.append(san)
        return san

    def outcome(self) -> Outcome | None:
        board = self.board
        if board.is_checkmate():
            winner = 1 - self.turn
            return Outcome.win(winner, Termination.NORMAL, f"{COLOUR_NAMES[winner]} mates")
        if board.is_stalemate():
            return Outcome.draw(Termination.NORMAL, "Draw by stalemate")
        if board.is_insufficient_material():
            return Outcome.draw(Termination.NORMAL, "Draw by insufficient mating material")
        if board.halfmove_clock >= _FIFTY_MOVES_PLIES:
            return Outcome.draw(Termination.NORMAL, "Draw by fifty moves rule")
        if board.is_repetition(3):
            return Outcome.draw(Termination.NORMAL, "Draw by 3-fold repetition")
        return None

    def start_fen(self) -> str | None:
        fen = self._root.fen()
        return None if fen == chess.STARTING_FEN else fen

    def notation(self) -> Sequence[str]:
        return self._san

    def start_fullmove(self) -> tuple[int, int]:
        return self._root.fullmove_number, 0 if self._root.turn == chess.WHITE else 1


class VariantReferee:
    """Any registered game, through its adapter."""

    def __init__(self, variant: str, opening: Opening) -> None:
        self.variant = variant
        spec = get_variant(variant)
        self._game: Game[Any] = spec.new(opening.fen)
        self._start_fen = opening.fen
        self._start_ply = self._game.ply
        self._start_side = self._game.side
        self._moves: list[str] = []
        for text in opening.moves:
            self.play(text)

    @property
    def turn(self) -> int:
        return self._game.side

    @property
    def fullmove(self) -> int:
        return 1 + self._game.ply // 2

    def position(self) -> Position:
        return Position(self._start_fen, self._moves)

    def play(self, text: str) -> str:
        move = self._game.parse_move(text)  # raises IllegalMoveError
        notation = self._game.format_move(move)
        self._game.push(move)
        self._moves.append(notation)
        return notation

    def outcome(self) -> Outcome | None:
        game = self._game
        if not game.is_terminal() and game.legal_moves():
            return None
        value = game.terminal_value()
        if value == 0:
            return Outcome.draw(Termination.NORMAL, "Draw by the rules")
        winner = game.side if value > 0 else 1 - game.side
        return Outcome.win(winner, Termination.NORMAL, f"{COLOUR_NAMES[winner]} wins")

    def start_fen(self) -> str | None:
        return self._start_fen

    def notation(self) -> Sequence[str]:
        return self._moves

    def start_fullmove(self) -> tuple[int, int]:
        return 1 + self._start_ply // 2, self._start_side


def make_referee(variant: str, opening: Opening) -> Referee:
    if variant == "chess":
        return ChessReferee(opening)
    return VariantReferee(variant, opening)


def _tag_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _comment(text: str) -> str:
    return "{" + text.replace("}", ")").replace("{", "(") + "}"


def format_pgn(
    tags: Sequence[tuple[str, str]],
    referee: Referee,
    comments: Sequence[str | None],
    result: str,
    final_comment: str | None,
) -> str:
    """The game as PGN export text (ends with a newline; games are separated by a blank line).

    ``comments`` align with the referee's moves (book moves get ``book``); ``final_comment``
    says why the game ended.  Lines are wrapped at 80 columns as the standard asks.
    """
    lines = [f'[{name} "{_tag_value(value)}"]' for name, value in tags]
    number, side = referee.start_fullmove()
    tokens: list[str] = []
    for index, move in enumerate(referee.notation()):
        if side == 0:
            tokens.append(f"{number}.")
        elif index == 0:
            tokens.append(f"{number}...")
        tokens.append(move)
        comment = comments[index] if index < len(comments) else None
        if comment:
            tokens.append(_comment(comment))
        if side == 1:
            number += 1
        side = 1 - side
    if final_comment:
        tokens.append(_comment(final_comment))
    tokens.append(result)
    return "\n".join(lines) + "\n\n" + "\n".join(_wrap(tokens, 80)) + "\n"


def _wrap(tokens: Sequence[str], width: int) -> list[str]:
    """Greedy line filling that never breaks inside a token, so a comment stays on one line
    (readers keep line breaks inside comments, which would change the comment's text)."""
    out: list[str] = []
    line = ""
    for token in tokens:
        if line and len(line) + 1 + len(token) > width:
            out.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    if line:
        out.append(line)
    return out
