"""The chess evaluation: the fast route equals the feature dictionary, symmetry, signs, the
weights file, and the raw feature counts on hand-made positions."""

from __future__ import annotations

import json
import random
import subprocess
import sys

import chess
import pytest

from engine.eval import LinearEvaluator
from engine.score import MATE_BOUND
from games.chess_game import (
    DEFAULT_WEIGHTS_PATH,
    ChessGame,
    default_evaluator,
    evaluation,
    from_fen,
)
from games.chess_game.evaluation import MOBILITY_COUNTS, TAPER, TAPER_MAX
from games.chess_game.features import game_phase, side_counts
from tests.support.paths import DATA, REPO

CHESS_DATA = DATA / "chess"
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
GROUPS = [
    "material",
    "psqt",
    "mobility",
    "pawns",
    "passed",
    "king",
    "rook",
    "bishop_pair",
    "threats",
]


def random_positions(count: int, seed: int) -> list[chess.Board]:
    """Positions along random games from the start and from Kiwipete (all phases)."""
    rng = random.Random(seed)
    boards: list[chess.Board] = []
    while len(boards) < count:
        board = chess.Board(rng.choice([chess.STARTING_FEN, KIWIPETE]))
        for _ in range(rng.randrange(10, 160)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            if rng.random() < 0.15:
                boards.append(board.copy(stack=False))
    return boards[:count]


def suite_positions() -> list[chess.Board]:
    """Valid positions from the perft, mate and test-suite files."""
    boards = []
    for line in (CHESS_DATA / "perft" / "perft.epd").read_text(encoding="utf-8").splitlines():
        boards.append(chess.Board(line.split(";")[0]))
    for n in (1, 2, 3, 4):
        text = (CHESS_DATA / "mates" / f"mate{n}.fen").read_text(encoding="utf-8")
        boards += [chess.Board(fen) for fen in text.splitlines() if fen.strip()]
    wac = (CHESS_DATA / "suites" / "wacnew.epd").read_text(encoding="utf-8")
    for line in wac.splitlines()[:150]:
        boards.append(chess.Board.from_epd(line)[0])
    return [b for b in boards if b.is_valid()]


RANDOM = random_positions(300, seed=2024)
SUITES = suite_positions()


def expected(game: ChessGame) -> int:
    return game.evaluator.evaluate(game.features())


# -- the two routes agree ----------------------------------------------------------------


def test_fast_evaluation_equals_the_feature_sum_on_random_positions() -> None:
    mismatches = []
    for board in RANDOM:
        game = ChessGame(board)
        if game.evaluate_uncached() != expected(game) or game.evaluate() != expected(game):
            mismatches.append(board.fen())
    assert mismatches == []


def test_the_routes_agree_with_every_weight_distinct_and_nonzero() -> None:
    """A term the shipped table weighs 0 (``threats.eg.weak_queen_protection``, say) would hide
    a disagreement between the routes: here every weight is a nonzero integer, drawn at random."""
    rng = random.Random(11)
    weights = {name: rng.choice((-1, 1)) * rng.randrange(1, 50) for name in all_feature_names()}
    evaluator = LinearEvaluator(weights)
    mismatches = []
    for board in RANDOM[:120] + SUITES[:120]:
        game = ChessGame(board, evaluator=evaluator)
        if game.evaluate_uncached() != evaluator.evaluate(game.features()):
            mismatches.append(board.fen())
    assert mismatches == []


def test_fast_evaluation_equals_the_feature_sum_on_suite_positions() -> None:
    assert len(SUITES) > 500
    mismatches = [
        b.fen() for b in SUITES if ChessGame(b).evaluate_uncached() != expected(ChessGame(b))
    ]
    assert mismatches == []


def test_the_evaluation_cache_is_exact_when_positions_share_a_slot() -> None:
    """The cache is direct-mapped by the key's low bits: a position whose slot another
    position holds must be evaluated, not answered from the slot, and the slot then holds
    it (exactly, by the whole key, negative keys included)."""
    by_slot: dict[int, str] = {}
    pair: tuple[str, str] | None = None
    for board in random_positions(1500, seed=7):  # about 17 shared slots expected
        key = from_fen(board.fen()).key()
        other = by_slot.setdefault(key & evaluation.EVAL_SLOT_MASK, board.fen())
        if from_fen(other).key() != key:
            pair = (other, board.fen())
            break
    assert pair is not None
    first, second = (from_fen(fen) for fen in pair)
    assert first.key() & evaluation.EVAL_SLOT_MASK == second.key() & evaluation.EVAL_SLOT_MASK
    for game in (first, second, first, second):  # each evicts the other
        assert game.evaluate() == game.evaluate_uncached() == expected(game)
        assert game.evaluate() == game.evaluate_uncached()  # now from the cache
    assert any(from_fen(fen).key() < 0 for fen in by_slot.values())


def test_incremental_terms_survive_long_games() -> None:
    """Material and square values are updated per move; compare with a fresh game after
    every move of random games that include castling, promotions and en passant."""
    rng = random.Random(99)
    starts = [
        (chess.STARTING_FEN, False),
        (KIWIPETE, False),
        ("r3k2r/1P6/8/3pP3/8/8/6p1/R3K2R w KQkq d6 0 1", False),
        ("1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1", True),
        (chess.Board.from_chess960_pos(100).fen(shredder=True), True),
    ]
    for start, chess960 in starts:
        game = from_fen(start, chess960)
        for _ in range(150):
            moves = game.legal_moves()
            if not moves:
                break
            game.push(rng.choice(moves))
            fresh = ChessGame(chess.Board(game.fen(), chess960=chess960))
            assert game.evaluate_uncached() == fresh.evaluate_uncached() == expected(fresh)


def test_feature_values_are_exact_binary_fractions() -> None:
    """In 32nds the float sum of the features is exact, so rounding it is reproducible."""
    for board in RANDOM[:100]:
        for value in ChessGame(board).features().values():
            assert (value * TAPER_MAX).is_integer()


def test_halves_round_to_even_in_both_routes() -> None:
    """At phase 12 (taper 16) a middlegame/endgame difference of one centipawn leaves an exact
    half: 1·16/32 = 0.5 rounds to 0, 3·16/32 = 1.5 rounds to 2."""
    board = chess.Board("r2q1k2/8/8/8/8/8/8/R2QK3 w - - 0 1")  # phase 2·2 + 2·4 = 12
    assert TAPER[game_phase(board)] == 16
    for mg, expected in ((1, 0), (3, 2), (-1, 0), (-3, -2), (5, 2), (7, 4)):
        evaluator = LinearEvaluator({"psqt.mg.K.e1": mg})
        game = ChessGame(board, evaluator=evaluator)
        assert game.evaluate() == evaluator.evaluate(game.features()) == expected


def test_fractional_weights_fall_back_to_the_dictionary() -> None:
    weights = dict(default_evaluator().weights)
    weights["tempo"] = 10.5
    weights["mobility.mg.N.4"] = 3.25
    evaluator = LinearEvaluator(weights)
    for board in RANDOM[:40]:
        game = ChessGame(board, evaluator=evaluator)
        assert game.evaluate() == evaluator.evaluate(game.features())


def test_a_custom_integer_evaluator_is_used_exactly() -> None:
    evaluator = LinearEvaluator({"material.mg.Q": 900, "material.eg.Q": 1000})
    no_black_queen = "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
    game = ChessGame(chess.Board(no_black_queen), evaluator=evaluator)
    assert game.evaluate() == 916  # phase 20 is taper 27: (900·27 + 1000·5) / 32 = 915.6
    game.push(game.parse_move("e2e4"))
    assert game.evaluate() == -916


# -- symmetry and signs ------------------------------------------------------------------


def test_colour_mirror_gives_the_same_evaluation() -> None:
    for board in RANDOM + SUITES[:200]:
        game = ChessGame(board)
        mirrored = ChessGame(board.mirror())
        assert mirrored.evaluate() == game.evaluate(), board.fen()
        assert mirrored.features() == game.features(), board.fen()


def test_start_position_is_worth_the_tempo() -> None:
    tempo = default_evaluator().weights["tempo"]
    assert from_fen(chess.STARTING_FEN).evaluate() == tempo
    assert from_fen(chess.STARTING_FEN.replace(" w ", " b ")).evaluate() == tempo


@pytest.mark.parametrize(
    ("fen", "low", "high"),
    [
        ("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 800, 1200),
        ("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1", -1200, -800),
        ("r1bqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 200, 450),
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w Qkq - 0 1", -600, -350),
        ("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", 60, 200),
        ("4k3/4p3/8/8/8/8/8/4K3 w - - 0 1", -200, -60),
    ],
    ids=["queen-up", "queen-up-black-to-move", "knight-up", "rook-down", "pawn-up", "pawn-down"],
)
def test_material_signs(fen: str, low: int, high: int) -> None:
    assert low <= from_fen(fen).evaluate() <= high


def test_passed_pawn_is_worth_more_the_further_it_went() -> None:
    values = [
        from_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 1".replace("8/8/8/8/8/8", rows)).evaluate()
        for rows in ("8/8/8/8/8/P7", "8/8/8/8/P7/8", "8/8/8/P7/8/8", "8/8/P7/8/8/8", "8/P7/8/8/8/8")
    ]
    assert values == sorted(values)
    assert values[-1] - values[0] > 100


def test_evaluation_stays_below_mate_scores() -> None:
    game = ChessGame(chess.Board("QQQQQQQQ/QQQQQQQQ/8/8/8/8/7k/K7 w - - 0 1"))
    assert 8_000 < game.evaluate() < MATE_BOUND


# -- explain and the weights file --------------------------------------------------------


def test_explain_groups_add_up_to_the_evaluation() -> None:
    evaluator = default_evaluator()
    for board in RANDOM[:50]:
        game = ChessGame(board)
        terms = evaluator.explain(game.features())
        assert [t.name for t in terms] == [*GROUPS, "tempo"]
        total = sum(t.contribution for t in terms)
        assert abs(total - game.evaluate()) <= 0.5 + 1e-9


def all_feature_names() -> set[str]:
    names = {"tempo", "bishop_pair.mg", "bishop_pair.eg"}
    for phase in ("mg", "eg"):
        for letter in "PNBRQ":
            names.add(f"material.{phase}.{letter}")
        for letter in "PNBRQK":
            for square in chess.SQUARES:
                if letter == "P" and chess.square_rank(square) in (0, 7):
                    continue
                names.add(f"psqt.{phase}.{letter}.{chess.SQUARE_NAMES[square]}")
        for letter, counts in MOBILITY_COUNTS.items():
            names |= {f"mobility.{phase}.{letter}.{k}" for k in counts}
        for term in ("doubled", "isolated", "backward", "connected"):
            names.add(f"pawns.{phase}.{term}")
        for rank in range(2, 8):
            names.add(f"passed.{phase}.r{rank}")
        names |= {f"passed.{phase}.king_them", f"passed.{phase}.king_us"}
        names |= {f"rook.{phase}.open_file", f"rook.{phase}.semi_open_file"}
        names |= {
            f"threats.{phase}.{by}.{letter}" for by in ("minor", "rook") for letter in "PNBRQ"
        }
        names |= {
            f"threats.{phase}.{term}"
            for term in (
                "king",
                "hanging",
                "weak_queen_protection",
                "restricted",
                "safe_pawn",
                "pawn_push",
                "knight_on_queen",
                "slider_on_queen",
            )
        }
    names |= {f"king.mg.{t}" for t in ("shield1", "shield2", "open_file", "attackers")}
    names |= {"king.mg.zone_attacks", "king.mg.danger"}
    return names


def test_weights_file_is_flat_integer_and_names_every_feature() -> None:
    raw = json.loads(DEFAULT_WEIGHTS_PATH.read_text(encoding="utf-8"))
    assert all(isinstance(v, int) for v in raw.values())
    assert set(raw) == all_feature_names()
    assert LinearEvaluator.from_json(DEFAULT_WEIGHTS_PATH).weights == raw
    assert (raw["material.mg.P"], raw["material.mg.N"], raw["material.mg.Q"]) == (67, 320, 922)


def test_every_produced_feature_has_a_weight() -> None:
    known = set(default_evaluator().weights)
    produced: set[str] = set()
    for board in RANDOM + SUITES:
        produced |= set(ChessGame(board).features())
    assert produced - known == set()
    assert len(produced) > 600


def test_taper_splits_each_count_between_middlegame_and_endgame() -> None:
    game = from_fen("4k3/8/8/8/8/8/8/3QK3 w - - 0 1")
    values = game.features()
    assert (game_phase(game.board), TAPER[4]) == (4, 5)  # 4/24 of the way is 5.33/32
    assert values["material.mg.Q"] == 5 / 32
    assert values["material.eg.Q"] == 27 / 32
    assert values["psqt.mg.Q.d1"] == 5 / 32
    assert values["tempo"] == 1.0
    black = from_fen("4k3/8/8/8/8/8/8/3QK3 b - - 0 1").features()
    assert black["material.eg.Q"] == -27 / 32
    assert tuple(round(p * 32 / 24) for p in range(25)) == TAPER
    assert from_fen(chess.STARTING_FEN).features()["material.eg.P"] == 0.0


# -- raw feature counts ------------------------------------------------------------------


def counts(fen: str, color: chess.Color) -> dict[str, int]:
    return {
        name: value
        for name, value in side_counts(chess.Board(fen), color).items()
        if value and not name.startswith("psqt.")
    }


def test_pawn_structure_counts() -> None:
    """Doubled isolated a-pawns, a c4-d4 phalanx, a passed h6 pawn in a king race; black's b7
    and e6 are isolated.

        . . . . k . . .
        . p . . . . . .
        . . . . p . . P
        . . . . . . . .
        . . P P . . . .
        P . . . . . . .
        P . . . . . . .
        . . . . K . . .
    """
    fen = "4k3/1p6/4p2P/8/2PP4/P7/P7/4K3 w - - 0 1"
    assert counts(fen, chess.WHITE) == {
        "material.P": 5,
        "pawns.doubled": 1,
        "pawns.isolated": 3,
        "pawns.connected": 2,
        "passed.r6": 1,
        # h6 (urgency 12) stops on h7: 3 squares from e8, 6 (capped at 5) from e1.
        "passed.king_them": 12 * 3,
        "passed.king_us": 12 * 5,
        "king.open_file": 2,
    }
    assert counts(fen, chess.BLACK) == {
        "material.P": 2,
        "pawns.isolated": 2,
        "king.shield2": 1,
        "king.open_file": 2,
    }


def test_backward_and_protected_pawns() -> None:
    """d3 cannot be supported (c4 and e4 are ahead of it) and e5 guards d4: backward.  d3
    protects c4 and e4; c4 is passed.

        . . . . k . . .
        . . . . . . . .
        . . . . . . . .
        . . . . p . . .
        . . P . P . . .
        . . . P . . . .
        . . . . . . . .
        . . . . K . . .
    """
    fen = "4k3/8/8/4p3/2P1P3/3P4/8/4K3 w - - 0 1"
    assert counts(fen, chess.WHITE) == {
        "material.P": 3,
        "pawns.backward": 1,
        "pawns.connected": 2,
        "passed.r4": 1,
        # c4 (urgency 2) stops on c5: 3 squares from e8, 4 from e1.
        "passed.king_them": 2 * 3,
        "passed.king_us": 2 * 4,
        "king.shield2": 1,
        "king.open_file": 1,
    }


def test_king_safety_and_mobility_counts() -> None:
    """The knight on f4 hits g2 and the queen on h4 hits f2, both in white's king zone; h3 is
    guarded by g2, g3 by f2, g4 by h3, so the knight has 7 squares in its mobility area and the
    queen 8 (the f4 knight's square counts: a piece the queen defends; the h7 pawn's does not:
    a pawn on its own second rank is out of the area).

        . . . . . . k .
        . . . . . p . p
        . . . . . . . .
        . . . . . . . .
        . . . . . n . q
        . . . . . . . P
        . . . . . P P .
        . . . . . . K .
    """
    fen = "6k1/5p1p/8/8/5n1q/7P/5PP1/6K1 w - - 0 1"
    assert counts(fen, chess.WHITE) == {
        "material.P": 3,
        "pawns.connected": 3,
        "king.shield1": 2,
        "king.shield2": 1,
        "king.attackers": 2,
        "king.zone_attacks": 2,
        # 37 + 81 + 10 + 69·2 (attacks) + 185·2 (g2 and f2 weak) + 792 (a safe Ne2+):
        "king.danger": 1428**2 >> 13,
        # g2-g3 is safe (f2 guards g3) and hits the knight and the queen:
        "threats.pawn_push": 2,
        # f2, g2, g3, g4: attacked by both, not strongly protected (h3 black attacks twice):
        "threats.restricted": 4,
    }
    assert counts(fen, chess.BLACK) == {
        "material.P": 2,
        "material.N": 1,
        "material.Q": 1,
        "mobility.N.7": 1,
        "mobility.Q.8": 1,
        "pawns.isolated": 2,
        "king.shield1": 2,
        "king.open_file": 1,
        "threats.minor.P": 1,  # the knight on the g2 pawn, which only the king guards
        "threats.restricted": 2,  # f2 and g2 (white's pawns strongly protect g3, h3, g4)
    }


def test_threat_counts() -> None:
    """Stockfish's threats, counted by hand.  Black *strongly protects* b6 and g5 (its pawns)
    and the squares it attacks twice and white not (e7, d7, f8, e8, a7, d8, g6, e5), so its
    *weak* men (attacked, not strongly protected) are the queen, the knight and the rook.
    White's g5 knight hits the queen and the rook (``minor``), the f1 rook the queen
    (``rook``); the queen and the rook are attacked twice (``hanging``), the rook only the
    queen guards (``weak_queen_protection``).  The d5 pawn, which nothing attacks, hits the
    knight and the rook (``safe_pawn``); a5-a6 hits no piece and d6 is not safe (the rook
    hits it).  White's rook can reach f2, f3 and f6 on the queen's file, each defended twice
    (``slider_on_queen``).  15 squares both attack that black does not strongly protect
    (``restricted``).  Black's c6 knight hits the a5 pawn and the d4 bishop, weak (nothing
    defends them), and the h6 pawn, safe, hits the g5 knight: three men hanging.  (White is
    in check, which the counts do not look at; a king is never a weak man here.)

        . . . . k . . .
        p . . . . q . .
        . . n . r . . p
        P . . P . . N .
        . . . B . . . .
        . . . . . . . .
        . . . . . . . .
        . . . . K R . .
    """
    fen = "4k3/p4q2/2n1r2p/P2P2N1/3B4/8/8/4KR2 w - - 0 1"
    white = counts(fen, chess.WHITE)
    black = counts(fen, chess.BLACK)
    assert {k: v for k, v in white.items() if k.startswith("threats.")} == {
        "threats.minor.R": 1,
        "threats.minor.Q": 1,
        "threats.rook.Q": 1,
        "threats.hanging": 2,
        "threats.weak_queen_protection": 1,
        "threats.restricted": 15,
        "threats.safe_pawn": 2,
        "threats.slider_on_queen": 3,
    }
    assert {k: v for k, v in black.items() if k.startswith("threats.")} == {
        "threats.minor.P": 1,
        "threats.minor.B": 1,
        "threats.hanging": 3,
        "threats.restricted": 12,
        "threats.safe_pawn": 1,
    }


def test_threats_by_the_king_by_a_push_and_on_the_queen() -> None:
    """White's king hits the f2 knight, which nothing defends (``king``, ``hanging``); c2-c3
    is a safe push that hits the d4 knight (c2-c4 hits nothing); the e5 knight can go to c6
    or f7, each attacked once by black and not strongly protected, to hit the lone queen
    (``knight_on_queen``).

        . . . q k . . .
        . . . . . . . .
        . . . . . . . .
        . . . . N . . .
        . . . n . . . .
        . . . . . . . .
        . . P . . n . .
        . . . . . K . .
    """
    white = counts("3qk3/8/8/4N3/3n4/8/2P2n2/5K2 w - - 0 1", chess.WHITE)
    terms = ("king", "hanging", "pawn_push", "knight_on_queen", "safe_pawn", "slider_on_queen")
    assert {term: white.get(f"threats.{term}", 0) for term in terms} == {
        "king": 1,
        "hanging": 1,
        "pawn_push": 1,
        "knight_on_queen": 2,
        "safe_pawn": 0,
        "slider_on_queen": 0,
    }
    assert not any(name.startswith(("threats.minor", "threats.rook")) for name in white)


def test_rook_files_bishop_pair_and_piece_mobility() -> None:
    """White's rook has the open d-file (and hits d7, d8 beside the black king); black's rook
    the half-open c-file.  The cornered knight reaches two squares, the c1 bishop seven, the f1
    bishop five (with the c4 pawn's square: a pawn free to advance stays in the mobility
    area), the rook eight (with the c1 bishop's square, not the king's).

        . . r . k . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . .
        . . P . . . . .
        . . . . . . . .
        . . . . . . . .
        N . B R K B . .
    """
    fen = "2r1k3/8/8/8/2P5/8/8/N1BRKB2 w - - 0 1"
    white = counts(fen, chess.WHITE)
    assert {k: v for k, v in white.items() if k.startswith("mobility.")} == {
        "mobility.N.2": 1,
        "mobility.B.7": 1,
        "mobility.B.5": 1,
        "mobility.R.8": 1,
    }
    assert white["rook.open_file"] == 1
    assert white["bishop_pair"] == 1
    black = counts(fen, chess.BLACK)
    assert black["rook.semi_open_file"] == 1
    assert (black["king.attackers"], black["king.zone_attacks"]) == (1, 2)
    assert "bishop_pair" not in black


def test_king_danger_counts_stockfish_units_and_squares_them() -> None:
    """Black's queen hits f2 beside white's king (10 + 69 a zone square), f2 is guarded by
    the king alone (weak: 185), and Qd1 is a safe check (772); with the constant 37 that is
    1073 units, and the feature is 1073² >> 13 = 140.  White has no queen: black's king is
    in no danger.

        . . . . . . k .
        . . . . . p p p
        . . . . . . . .
        . . . . . . . .
        . . . q . . . .
        . . . . . . . .
        . . . . . P P P
        . . . . . . K .
    """
    fen = "6k1/5ppp/8/8/3q4/8/5PPP/6K1 w - - 0 1"
    assert counts(fen, chess.WHITE)["king.danger"] == 140
    assert "king.danger" not in counts(fen, chess.BLACK)  # a count of 0 is left out
    guarded = "6k1/5ppp/8/8/3q4/8/5PPP/4R1K1 w - - 0 1"  # the rook shuts the rank
    assert counts(guarded, chess.WHITE)["king.danger"] == (37 + 185 + 79) ** 2 >> 13


def test_absurd_weights_stay_out_of_the_mate_range() -> None:
    """An EvalFile table may be silly; its evaluations must still read as centipawns."""
    weights = dict(default_evaluator().weights)
    weights["material.mg.Q"] = weights["material.eg.Q"] = 10_000
    silly = LinearEvaluator(weights)
    queens = from_fen("QQQQ4/QQQQ4/8/7k/8/8/8/K7 w - - 0 1", evaluator=silly)
    assert silly.evaluate(queens.features()) > 60_000
    assert queens.evaluate() == 20_000
    assert -queens.evaluate() > -MATE_BOUND


def test_pawn_flip_equals_python_chess_s_flip_vertical() -> None:
    # The pawn terms' frame: ranks 2-7 shifted down a rank.
    rng = random.Random(5)
    pawn_ranks = chess.BB_ALL & ~chess.BB_RANK_1 & ~chess.BB_RANK_8
    boards = [0, pawn_ranks, chess.BB_RANK_2, chess.BB_H7, chess.BB_A2 | chess.BB_H7]
    boards += [rng.getrandbits(64) & pawn_ranks for _ in range(200)]
    for bb in boards:
        assert evaluation._flip_ranks_2_to_7(bb >> 8) == chess.flip_vertical(bb) >> 8


def test_shipped_mobility_tables_are_the_scripts() -> None:
    """The tables in the weights file are what ``scripts/mobility_tables.py`` computes from
    Stockfish's and the sample positions (rerun it after changing the area or the samples)."""
    script = REPO / "scripts" / "mobility_tables.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, "the same"), done.stderr


def test_mobility_tables_are_concave_where_stockfish_is() -> None:
    """The first squares are worth the most: a knight's second square gains more than its
    eighth, and a rook shut in for the endgame costs more than a pawn against an active one."""
    weights = default_evaluator().weights
    knight = [weights[f"mobility.mg.N.{k}"] for k in MOBILITY_COUNTS["N"]]
    assert knight[2] - knight[1] > knight[8] - knight[7] > 0
    rook_eg = [weights[f"mobility.eg.R.{k}"] for k in MOBILITY_COUNTS["R"]]
    assert rook_eg[10] - rook_eg[0] > weights["material.eg.P"]
