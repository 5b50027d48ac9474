"""The chess adapter: a chess position behind the engine's make/unmake contract.

The search plays on native records (:class:`~games.chess_game.bitboard64.Bitboards`, one per
ply: piece sets as 64-bit words, castling rights, en passant square, the halfmove clock), each
made from its parent by the move.  python-chess keeps the rules' reference board for
everything else (FEN, notation, insufficient material, tablebase probes, pickling); it
catches up with the search's moves only when one of those asks (:meth:`ChessGame._synced`),
so a search that never asks never pays python-chess's push and pop.  The adapter adds what a
search needs on every node:

* the Zobrist key (:mod:`games.chess_game.zobrist`), updated from each move's effects;
* the material + piece-square sum of the evaluation, updated the same way, so a static
  evaluation only computes mobility, king safety and (cached) pawn terms;
* a key stack and the number of plies since the last capture, pawn move or null move, so the
  repetition test looks only at positions that can repeat, every second ply.

Syzygy tablebases (:mod:`games.chess_game.tablebase`) are optional: :meth:`ChessGame.use_tablebases`
gives a game the settings, which copies and pickles keep.

All incremental state lives in one undo tuple per ply: ``pop`` restores it in one step.
What a node derives from its position (the king, the checkers, the pinned pieces) lives in
its record too, and every question the node answers reads it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import chess
from librt.vecs import vec
from mypy_extensions import i64

from engine.eval import LinearEvaluator
from engine.game import IllegalMoveError, InvalidPositionError, TablebaseProbing
from engine.native_game import NativeGame
from games.chess_game.bitboard64 import (
    SQUARE,
    Bitboards,
    castling_rook,
    castling_targets,
    msb,
    popcount,
    signed,
    unsigned,
)
from games.chess_game.checks import CheckSquares, check_squares, quick_gives_check
from games.chess_game.evaluation import (
    EVAL_SLOT_MASK,
    EVAL_STORED,
    EvalTables,
    evaluate_fast,
    material_psq,
    psq_index,
)
from games.chess_game.features import features as board_features
from games.chess_game.make import pop_move, push_null, push_plain
from games.chess_game.move_codes import (
    CODE_LIMIT,
    PROMOTION_SHIFT,
    SQUARE_MASK,
    TO_SHIFT,
    SharedMove,
    from_chess,
    shared,
    to_chess,
)
from games.chess_game.movegen import (
    attackers_of,
    legal_evasions,
    legal_moves_not_in_check,
    pinned_pieces,
)
from games.chess_game.notation import board_diagram, describe_status, parse_uci_move
from games.chess_game.see import SEE_VALUES, see_ge
from games.chess_game.tablebase import SyzygySettings, probe_wdl, root_moves
from games.chess_game.zobrist import (
    PIECE_KEYS64,
    TURN_KEY64,
    WHITE_KEYS,
    castling_key64,
    ep_key,
    ep_key_after_double_step,
    zobrist_key,
)

if TYPE_CHECKING:
    from engine.game import CheckingPush, CheckTest, Game, StaticExchange, Tablebase

__all__ = [
    "DEFAULT_WEIGHTS_PATH",
    "ChessGame",
    "default_evaluator",
    "describe_status",
    "from_fen",
]

logger = logging.getLogger(__name__)

DEFAULT_WEIGHTS_PATH: Final = Path(__file__).resolve().parent.parent / "data" / "chess_weights.json"

_RANK_2: Final = signed(chess.BB_RANK_2)
_RANK_7: Final = signed(chess.BB_RANK_7)
_PAWN: Final = chess.PAWN
_ROOK: Final = chess.ROOK
_KING: Final = chess.KING
_QUEEN: Final = chess.QUEEN
_SEE_PAWN: Final = SEE_VALUES[chess.PAWN]
_SEE_BISHOP: Final = max(SEE_VALUES[chess.BISHOP], SEE_VALUES[chess.KNIGHT])
_SEE_ROOK: Final = SEE_VALUES[chess.ROOK]
_SEE_QUEEN: Final = SEE_VALUES[chess.QUEEN]
_KINGS_NEEDED: Final = (
    chess.STATUS_EMPTY
    | chess.STATUS_NO_WHITE_KING
    | chess.STATUS_NO_BLACK_KING
    | chess.STATUS_TOO_MANY_KINGS
)

_EVAL_LIMIT: Final = 20_000
"""Static evaluations are clamped to this, far inside the search's mate scores: an ``EvalFile``
table with absurd weights must not produce a "mate" out of material.  The one place where
``evaluate()`` may differ from ``evaluator.evaluate(features())``, and no real table gets
near it."""


def _clamped(value: int) -> int:
    return _EVAL_LIMIT if value > _EVAL_LIMIT else (-_EVAL_LIMIT if value < -_EVAL_LIMIT else value)


@functools.cache
def _default() -> tuple[LinearEvaluator, EvalTables]:
    evaluator = LinearEvaluator.from_json(DEFAULT_WEIGHTS_PATH)
    return evaluator, EvalTables(evaluator.weights)


def _tables_for(evaluator: LinearEvaluator) -> EvalTables:
    """The evaluation tables of ``evaluator``'s weights, which the evaluator keeps."""
    shared, shared_tables = _default()
    if evaluator is shared:
        return shared_tables
    return evaluator.derived(_make_tables)


def _make_tables(weights: Mapping[str, float]) -> EvalTables:
    tables = EvalTables(weights)
    if not tables.exact:
        logger.warning(
            "chess weights are not all integers: evaluating through the feature dictionary "
            "(slow); round the weights to restore the fast path"
        )
    return tables


def default_evaluator() -> LinearEvaluator:
    """The weights shipped in ``games/data/chess_weights.json``.

    One shared instance (games built with it share their precomputed tables and caches):
    treat it as read-only; to experiment, build ``LinearEvaluator(dict(...weights))``."""
    return _default()[0]


def _noisy_rank(node: Bitboards, move: i64) -> i64:
    """Minus (8 x victim - attacker), queen promotions first, underpromotions last (piece
    types: pawn 1 ... king 6; en passant takes a pawn): the key noisy moves sort by."""
    to_square = (move >> TO_SHIFT) & SQUARE_MASK
    promotion = move >> PROMOTION_SHIFT
    victim = node.piece_type_on(SQUARE[to_square])
    if not victim and to_square == node.ep_square and not promotion:
        victim = _PAWN
    score = 8 * victim - node.piece_type_on(SQUARE[move & SQUARE_MASK])
    if promotion:
        score += 100 if promotion == _QUEEN else -100
    return -score


_RANKS: Final = vec[i64]([0] * 256)
""":func:`_sort_noisy`'s ranks, kept (a chess position has at most 218 legal moves), so
that a sort allocates nothing.  Shared by every search in the process: compiled, the sort
makes no Python call, so it runs whole under the GIL and never re-enters; run as plain
Python, two sessions' searches could interleave here, which changes only the order of their
noisy moves (the sort moves the list's items in step with the ranks, a permutation whatever
the ranks hold)."""


def _sort_noisy(node: Bitboards, moves: list[int]) -> None:
    """Sort ``moves`` by :func:`_noisy_rank`, lowest first, equal ranks in the order they
    came: what the stable ``moves.sort(key=...)`` gives, as an insertion sort over ranks
    computed once each (a handful of moves), without a Python call per move."""
    shared: list[SharedMove] = moves  # the very objects, kept (see take in engine.ordering)
    n: i64 = len(moves)
    ranks = _RANKS if n <= len(_RANKS) else vec[i64]([0] * n)
    i: i64  # native indices: compiled, a tagged int is checked at every step
    for i, move in enumerate(moves):
        ranks[i] = _noisy_rank(node, move)
    for i in range(1, n):
        rank = ranks[i]
        if ranks[i - 1] <= rank:
            continue  # already in place
        moved = shared[i]
        j: i64 = i - 1
        while j >= 0 and ranks[j] > rank:
            ranks[j + 1] = ranks[j]
            shared[j + 1] = shared[j]
            j -= 1
        ranks[j + 1] = rank
        shared[j + 1] = moved


class ChessGame(NativeGame):
    """A chess position with make/unmake, keys, terminal tests and a linear evaluation.

    The board passed in is copied (its move history too: repetitions through it are seen);
    the caller's board is never modified.  ``chess960`` selects Chess960 castling (king takes
    rook in UCI, Shredder-FEN output); a board already in Chess960 mode stays in it.

    The constructor insists only on what the adapter itself needs, one king per side; the
    registry's :func:`from_fen` rejects every position python-chess calls invalid.  The gap
    is deliberate: the classic perft suites contain positions no game can reach (two bishops
    giving check at once), which are fine for counting moves.

    A :class:`~engine.native_game.NativeGame`: compiled in the same build as the search, it
    is asked its per-node questions through the native method table, the key as a native
    word (:meth:`folded_key`).
    """

    __slots__ = (
        "_board",
        "_checks",
        "_checks_key",
        "_current",
        "_evaluator",
        "_nodes",
        "_ply",
        "_psq",
        "_root_ply",
        "_synced_plies",
        "_tables",
        "_tb",
        "_tb_probing",
        "_window",
        "chess960",
    )

    variant: str = "chess"
    moves_interned: bool = True
    """Moves are ints (:mod:`games.chess_game.move_codes`), and every move handed out is the
    shared object of its number."""

    def __init__(
        self,
        board: chess.Board,
        *,
        chess960: bool = False,
        evaluator: LinearEvaluator | None = None,
    ) -> None:
        self.chess960: bool = chess960 or board.chess960
        root = board.root()
        root.chess960 = self.chess960
        status = root.status() & _KINGS_NEEDED
        if status:
            raise InvalidPositionError(
                f"illegal position: {describe_status(status)} ({root.fen(shredder=self.chess960)})"
            )
        if evaluator is None:
            self._evaluator, self._tables = _default()
        else:
            self._evaluator = evaluator
            self._tables = _tables_for(evaluator)
        self._board = root
        self._synced_plies = 0
        self._root_ply = root.ply()
        self._psq = material_psq(root, self._tables)
        self._window = 0
        self._checks: CheckSquares | None = None
        self._checks_key: i64 = -1
        self._ply: i64 = 0
        """Moves played since the root (a native word: every push and pop counts it).  What
        unmaking a move restores is in the child's record (``parent_psq``,
        ``parent_window``)."""
        node = Bitboards(root)
        node.key = signed(zobrist_key(root))
        node.ep_key = signed(ep_key(root))
        node.castling_key = castling_key64(node.castling)
        self._nodes: list[Bitboards] = [node]
        self._current = node
        """The current position's record (``_nodes[_ply]``, kept at hand: every
        question a node answers reads it)."""
        self._know_king(node)
        self._tb: SyzygySettings | None = None
        self._tb_probing: TablebaseProbing | None = None
        for move in board.move_stack:
            if move:
                self.push(from_chess(move))
            else:
                self.push_null()

    # -- moves -----------------------------------------------------------------------------

    @staticmethod
    def _know_king(node: Bitboards) -> None:
        """Fill in the side to move's king square and the pieces checking it."""
        us = node.turn
        king = msb(node.kings & (node.white if us else node.black))
        node.king = king
        node.checkers = attackers_of(node, not us, king, node.occupied)

    def _child(self) -> Bitboards:
        """The record of the next ply, to be made from the current one."""
        nodes = self._nodes
        ply = self._ply + 1
        if ply == len(nodes):
            nodes.append(Bitboards())
        return nodes[ply]

    def _synced(self) -> chess.Board:
        """python-chess's board, brought up to the current position.

        Plays the moves the search made since the board last caught up, with the moving and
        the captured piece read from each ply's record (:func:`push_plain`), so that FEN,
        notation, tablebase probes and the rules python-chess answers see this position; the
        search's own pops take them back (:meth:`pop`).  python-chess's board has the first
        ``_synced_plies`` moves since the root; each ply's record knows the move that made it."""
        board = self._board
        ply = self._ply
        nodes = self._nodes
        while self._synced_plies < ply:
            index = self._synced_plies
            code = nodes[index + 1].move
            if not code:
                push_null(board)
            else:
                node = nodes[index]
                frm = code & SQUARE_MASK
                to = (code >> TO_SHIFT) & SQUARE_MASK
                from_bb: i64 = SQUARE[frm]
                to_bb: i64 = SQUARE[to]
                piece = node.piece_type_on(from_bb)
                ours = node.white if node.turn else node.black
                move = to_chess(code)
                if piece == _KING and castling_rook(ours, frm, to) >= 0:
                    board.push(move)
                else:
                    push_plain(board, move, piece, node.piece_type_on(to_bb & ~ours))
            self._synced_plies = index + 1
        return board

    def _legal(self, from_mask: i64, to_mask: i64) -> list[int]:
        """``list(board.generate_legal_moves(from_mask, to_mask))``, in the same order (the
        masks as native words)."""
        node = self._current
        if not node.pinned_known:
            node.pinned = pinned_pieces(node, node.king)
            node.pinned_known = True
        if not node.checkers:
            return legal_moves_not_in_check(node, node.king, node.pinned, from_mask, to_mask)
        return legal_evasions(node, node.king, node.pinned, node.checkers, from_mask, to_mask)

    def legal_moves(self) -> list[int]:
        return self._legal(-1, -1)

    def noisy_moves(self) -> list[int]:
        """Captures (en passant included) and promotions: queen promotions first, then
        captures by most valuable victim / least valuable attacker, underpromotions last."""
        node = self._current
        us = node.turn
        ours = node.white if us else node.black
        moves = self._legal(-1, node.black if us else node.white)
        ep = node.ep_square
        if ep >= 0:
            moves.extend(self._legal(node.pawns & ours, SQUARE[ep]))  # en passant only
        promoting = node.pawns & ours & (_RANK_7 if us else _RANK_2)
        if promoting:
            moves.extend(self._legal(promoting, ~node.occupied))
        if len(moves) > 1:
            _sort_noisy(node, moves)
        return moves

    def quiet_moves(self) -> list[int]:
        node = self._current
        us = node.turn
        promoting = node.pawns & (node.white if us else node.black) & (_RANK_7 if us else _RANK_2)
        moves = self._legal(~promoting, ~(node.black if us else node.white))
        ep = node.ep_square
        if ep >= 0:
            # Without en passant captures, keeping the very objects (read as ``SharedMove``).
            pawns = node.pawns
            shared_moves: list[SharedMove] = moves
            quiet: list[int] = []
            for i in range(len(moves)):
                move = moves[i]
                if (move >> TO_SHIFT) & SQUARE_MASK != ep or not pawns & SQUARE[move & SQUARE_MASK]:
                    quiet.append(shared_moves[i])
            return quiet
        return moves

    # The search's per-node calls (is_noisy, see_ge, gives_check, push_check) override
    # NativeGame's with the move typed as it types it (``SharedMove``, i.e. ``Any``) and read
    # into an ``i64`` inside: a narrower type (``int``) puts a glue function, which checks
    # and converts the move, in front of every call (0.994 times the instructions per node).

    def is_noisy(self, move: SharedMove) -> bool:
        code: i64 = move
        if code >> PROMOTION_SHIFT:
            return True
        node = self._current
        to = (code >> TO_SHIFT) & SQUARE_MASK
        if (node.black if node.turn else node.white) & SQUARE[to]:
            return True
        return to == node.ep_square and bool(node.pawns & SQUARE[code & SQUARE_MASK])

    def see_ge(self, move: SharedMove, threshold: int) -> bool:
        code: i64 = move
        return see_ge(self._current, code, threshold)

    def max_gain(self) -> int:
        node = self._current
        us = node.turn
        theirs = node.black if us else node.white
        gain = 0
        if node.queens & theirs:
            gain = _SEE_QUEEN
        elif node.rooks & theirs:
            gain = _SEE_ROOK
        elif (node.bishops | node.knights) & theirs:
            gain = _SEE_BISHOP
        elif node.pawns & theirs:
            gain = _SEE_PAWN
        if node.pawns & (node.white if us else node.black) & (_RANK_7 if us else _RANK_2):
            gain += _SEE_QUEEN - _SEE_PAWN
        return gain

    def gives_check(self, move: SharedMove) -> bool:
        """Consecutive questions at one node (the search asks for each quiet move it would
        prune) share the position's check squares, computed at the first."""
        code: i64 = move
        node = self._current
        if node.key != self._checks_key:
            self._checks = check_squares(node)
            self._checks_key = node.key
        info = self._checks
        return info is not None and quick_gives_check(node, code, info)

    def push(self, move: i64) -> None:
        node = self._current
        child = self._child()
        frm = move & SQUARE_MASK
        to = (move >> TO_SHIFT) & SQUARE_MASK
        us = node.turn
        from_bb: i64 = SQUARE[frm]
        to_bb: i64 = SQUARE[to]
        ours = node.white if us else node.black
        if not ours & from_bb:
            raise IllegalMoveError(f"no piece of the side to move on {chess.SQUARE_NAMES[frm]}")
        piece_type = node.piece_type_on(from_bb)
        tables = self._tables
        ours_keys = WHITE_KEYS if us else 0
        theirs_keys = 0 if us else WHITE_KEYS
        psq_table = tables.psq
        ours_psq = psq_index(us, 0, 0)
        theirs_psq = psq_index(not us, 0, 0)
        key = node.key ^ TURN_KEY64 ^ node.ep_key
        psq = self._psq
        reversible = piece_type != _PAWN
        rook_from: i64 = -1
        if piece_type == _KING:
            rook_from = castling_rook(ours, frm, to)
        if rook_from >= 0:
            # Castling, as king-takes-rook (Chess960) or king-two-squares (standard).
            king_to, rook_to = castling_targets(frm, rook_from)
            king_keys = ours_keys + _KING * 64
            rook_keys = ours_keys + _ROOK * 64
            key ^= (
                PIECE_KEYS64[king_keys + frm]
                ^ PIECE_KEYS64[king_keys + king_to]
                ^ PIECE_KEYS64[rook_keys + rook_from]
                ^ PIECE_KEYS64[rook_keys + rook_to]
            )
            king_psq = ours_psq + _KING * 64
            rook_psq = ours_psq + _ROOK * 64
            psq += (
                psq_table[king_psq + king_to]
                - psq_table[king_psq + frm]
                + psq_table[rook_psq + rook_to]
                - psq_table[rook_psq + rook_from]
            )
            child.castle(node, frm, rook_from)
        else:
            captured = 0
            if (node.black if us else node.white) & to_bb:
                captured = node.piece_type_on(to_bb)
                key ^= PIECE_KEYS64[theirs_keys + captured * 64 + to]
                psq -= psq_table[theirs_psq + captured * 64 + to]
                reversible = False
            elif piece_type == _PAWN and to == node.ep_square:
                victim = to - 8 if us else to + 8
                key ^= PIECE_KEYS64[theirs_keys + _PAWN * 64 + victim]
                psq -= psq_table[theirs_psq + _PAWN * 64 + victim]
            promotion = move >> PROMOTION_SHIFT
            new_type = promotion if promotion else piece_type
            key ^= (
                PIECE_KEYS64[ours_keys + piece_type * 64 + frm]
                ^ PIECE_KEYS64[ours_keys + new_type * 64 + to]
            )
            psq += (
                psq_table[ours_psq + new_type * 64 + to]
                - psq_table[ours_psq + piece_type * 64 + frm]
            )
            child.play(node, move, piece_type, captured)
        castle_z = node.castling_key
        if child.castling != node.castling:
            castle_z = castling_key64(child.castling)
            key ^= node.castling_key ^ castle_z
        ep_z: i64 = 0
        if child.ep_square >= 0:
            ep_z = ep_key_after_double_step(
                child.pawns & (child.white if child.turn else child.black), to
            )
            key ^= ep_z
        child.parent_psq = self._psq
        child.parent_window = self._window
        self._ply += 1
        child.move = move
        child.key = key
        child.ep_key = ep_z
        child.castling_key = castle_z
        self._know_king(child)
        self._current = child
        self._psq = psq
        self._window = self._window + 1 if reversible else 0

    def push_check(self, move: SharedMove) -> bool:
        """:meth:`push`, then :meth:`in_check` (:class:`~engine.game.CheckingPush`)."""
        code: i64 = move
        self.push(code)
        return self._current.checkers != 0

    def pop(self) -> None:
        ply = self._ply - 1
        if ply < 0:
            raise IndexError("pop at the root: no move to undo")
        self._ply = ply
        self._current = self._nodes[ply]
        child = self._nodes[ply + 1]
        self._psq = child.parent_psq
        self._window = child.parent_window
        if self._synced_plies > ply:
            pop_move(self._board)
            self._synced_plies -= 1

    def can_null_move(self) -> bool:
        """Not in check, and the side to move has a piece besides pawns and king (pawn
        endings are where zugzwang makes passing unsound)."""
        node = self._current
        if not (node.white if node.turn else node.black) & ~(node.pawns | node.kings):
            return False
        return node.checkers == 0

    def push_null(self) -> None:
        node = self._current
        child = self._child()
        child.pass_turn(node)
        child.parent_psq = self._psq
        child.parent_window = self._window
        self._ply += 1
        child.move = 0
        child.key = node.key ^ TURN_KEY64 ^ node.ep_key
        child.ep_key = 0
        child.castling_key = node.castling_key
        self._window = 0  # positions before a pass are not repetitions of positions after it
        self._know_king(child)
        self._current = child

    # -- state -----------------------------------------------------------------------------

    def is_terminal(self) -> bool:
        """50-move rule, insufficient material, or a position seen before since the last
        capture, pawn move or null move (search treats the first repetition as a draw)."""
        node = self._current
        if node.halfmove >= 100:
            return True
        bare = not (node.pawns | node.rooks | node.queens)
        if bare and self._synced().is_insufficient_material():
            return True
        window = self._window
        if window >= 4:
            # The same side to move 4, 6, ... plies back, within the reversible plies.
            nodes = self._nodes
            ply = self._ply
            key = node.key
            earlier = ply - (window & ~1)
            while earlier <= ply - 4:
                if nodes[earlier].key == key:
                    return True
                earlier += 2
        return False

    def terminal_value(self) -> int:
        """-1 when checkmated (also when the 50-move counter ran out on the mating move),
        0 for stalemate and every draw."""
        if self.in_check() and not self.legal_moves():
            return -1
        return 0

    def in_check(self) -> bool:
        """The answer comes with the node's native boards (``_current``), which the rest of
        the node reuses; the search asks it through :meth:`push_check`."""
        return self._current.checkers != 0

    def key(self) -> int:
        """The Zobrist key (:mod:`games.chess_game.zobrist`: the Polyglot key of a standard
        position) as the signed word the records hold: the transposition table folds keys to
        signed words, so one in that range costs it no conversion (``unsigned`` of it is the
        Polyglot key)."""
        return self._current.key

    def folded_key(self) -> i64:
        """:meth:`key` as the native word it is (:class:`~engine.native_game.NativeGame`)."""
        return self._current.key

    @property
    def side(self) -> int:
        return 0 if self._current.turn else 1

    @property
    def ply(self) -> int:
        return max(0, self._root_ply + self._ply)

    # -- evaluation ------------------------------------------------------------------------

    @property
    def evaluator(self) -> LinearEvaluator:
        return self._evaluator

    def features(self) -> Mapping[str, float]:
        return board_features(self._synced())

    def evaluate(self) -> int:
        tables = self._tables
        if not tables.exact:
            return _clamped(self._evaluator.evaluate(board_features(self._synced())))
        node = self._current
        key = node.key
        slot = key & EVAL_SLOT_MASK
        stored = tables.eval_values[slot]
        if stored and tables.eval_keys[slot] == key:
            return int(stored - EVAL_STORED)
        value = _clamped(evaluate_fast(node, self._psq, tables))
        tables.eval_keys[slot] = key
        tables.eval_values[slot] = value + EVAL_STORED
        return value

    def evaluate_uncached(self) -> int:
        """The fast evaluation without the cache (for measuring and testing it)."""
        if not self._tables.exact:
            return self._evaluator.evaluate(board_features(self._synced()))
        return evaluate_fast(self._current, self._psq, self._tables)

    # -- notation --------------------------------------------------------------------------

    def parse_move(self, text: str) -> SharedMove:
        """UCI long algebraic: ``e2e4``, ``e7e8q``; castling as ``e1g1`` or king-takes-rook
        ``e1h1`` (the only form in Chess960 positions where the two differ)."""
        return from_chess(parse_uci_move(self._synced(), text))

    def format_move(self, move: int) -> str:
        return self._synced().uci(to_chess(move), chess960=self.chess960)

    # -- endgame tablebases (engine.game.Tablebase) ---------------------------------------

    def use_tablebases(self, settings: SyzygySettings | None) -> None:
        """Probe the Syzygy tables ``settings`` name from now on (``None``: no tables).

        Only the settings are kept (directories and numbers): each process opens the tables
        at its first probe, so copies and pickles of the game carry them cheaply."""
        self._tb = settings
        limit = 0 if settings is None else settings.limit
        self._tb_probing = (
            None
            if settings is None or limit <= 0
            else TablebaseProbing(limit, settings.probe_depth, settings.rule50)
        )

    @property
    def tablebases(self) -> SyzygySettings | None:
        """The tablebase settings in use (``None``: no tables)."""
        return self._tb

    def tb_probing(self) -> TablebaseProbing | None:
        return self._tb_probing

    def tb_pieces(self) -> int:
        return int(popcount(self._current.occupied))

    def tb_wdl(self) -> int | None:
        """Probed only right after a capture or pawn move (the counter is 0) and without
        castling rights, the positions the tables' WDL values are exact for."""
        node = self._current
        if node.halfmove or node.castling:
            return None
        probing = self._tb_probing
        settings = self._tb
        if probing is None or settings is None or popcount(node.occupied) > probing.limit:
            return None
        return probe_wdl(settings, self._synced())

    def tb_root_moves(self, rule50: bool) -> list[int] | None:
        b = self._synced()
        probing = self._tb_probing
        settings = self._tb
        if (
            probing is None
            or settings is None
            or b.castling_rights
            or b.occupied.bit_count() > probing.limit
        ):
            return None
        moves = root_moves(settings, b, rule50)
        if moves is None:
            return None
        return [from_chess(m) for m in moves]

    # -- move codes (engine.game.MoveCodec) -------------------------------------------------

    def move_code(self, move: SharedMove) -> SharedMove:
        """The move itself: a move is its code (:mod:`games.chess_game.move_codes`), and the
        object passes through without being unboxed and boxed anew."""
        return move

    def code_move(self, code: int) -> SharedMove:
        return shared(code)

    def history_size(self) -> i64:
        return CODE_LIMIT

    def history_index(self, move: SharedMove) -> i64:
        """The move itself, as a native word: a move is its code.  (``move`` is typed as
        the base class types it: a narrower type would put a glue function, which boxes
        and unboxes the move, in front of every call.)"""
        code: i64 = move
        return code

    def fen(self) -> str:
        return self._synced().fen(shredder=self.chess960)

    def display(self) -> str:
        """The board from white's side (rank 8 on top), then FEN, key and checkers, as
        Stockfish's ``d`` command prints them."""
        return board_diagram(self._synced(), self.fen(), unsigned(self._current.key))

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as start position + moves (a few hundred bytes), not as the board with its
        evaluation tables and caches: games cross process pipes to search workers, and a
        pickle larger than a pipe buffer would block the sender."""
        board = self._synced()
        root = board.root()
        default, _ = _default()
        evaluator = None if self._evaluator is default else self._evaluator
        moves = tuple(move.uci() for move in board.move_stack)
        return (
            _unpickle,
            (root.fen(shredder=self.chess960), moves, self.chess960, evaluator, self._tb),
        )

    def copy(self) -> ChessGame:
        """An independent twin, built as unpickling builds one: from the root position,
        replaying the moves.  (mypyc compiles this class, and a compiled class cannot be
        made without ``__init__``; a copy per ``go`` costs about a millisecond this way.)"""
        twin = ChessGame(self._synced(), chess960=self.chess960, evaluator=self._evaluator)
        twin._tb = self._tb
        twin._tb_probing = self._tb_probing
        return twin

    # -- conveniences beyond the contract --------------------------------------------------

    @property
    def board(self) -> chess.Board:
        """A copy of the python-chess board, history included (for SAN, PGN, book probes)."""
        return self._synced().copy()

    def __repr__(self) -> str:
        return f"ChessGame({self.fen()!r}, chess960={self.chess960})"


def from_fen(
    fen: str, chess960: bool = False, *, evaluator: LinearEvaluator | None = None
) -> ChessGame:
    """The registry's constructor: X-FEN or Shredder-FEN castling when ``chess960``;
    ``evaluator`` replaces the shipped weights (``None``: the shipped ones).

    Raises InvalidPositionError for a FEN that does not parse and for an illegal position
    (python-chess's ``status()`` flags, named)."""
    try:
        board = chess.Board(fen, chess960=chess960)
    except ValueError as exc:
        raise InvalidPositionError(f"malformed FEN: {exc}") from None
    status = board.status()
    if status != chess.STATUS_VALID:
        raise InvalidPositionError(f"illegal position: {describe_status(status)} ({fen})")
    return ChessGame(board, chess960=chess960, evaluator=evaluator)


if TYPE_CHECKING:
    _contract_check: Game[int] = ChessGame(chess.Board())
    _exchange_check: StaticExchange[int] = ChessGame(chess.Board())
    _check_test: CheckTest[int] = ChessGame(chess.Board())
    _checking_push: CheckingPush[int] = ChessGame(chess.Board())
    _tablebase_check: Tablebase[int] = ChessGame(chess.Board())


def _unpickle(
    fen: str,
    moves: tuple[str, ...],
    chess960: bool,
    evaluator: LinearEvaluator | None,
    tablebases: SyzygySettings | None = None,
) -> ChessGame:
    """Rebuild a pickled game (a caller's evaluator unpickles as the one it unpickled last
    when the weights are equal: its tables and their caches carry over between searches)."""
    board = chess.Board(fen, chess960=chess960)
    for text in moves:
        board.push(chess.Move.from_uci(text))
    game = ChessGame(board, chess960=chess960, evaluator=evaluator)
    if tablebases is not None:
        game.use_tablebases(tablebases)
    return game
