"""Find the magic multipliers of the sliding attacks and write ``games/chess_game/magics.py``.

    python scripts/find_magics.py [--seed 46] [--output games/chess_game/magics.py]
    python scripts/find_magics.py --check     # regenerate, compare with the checked-in module

"Fancy" magic bitboards (Pradyumna Kannan's scheme, as Stockfish uses it): for a rook or a
bishop on a square, the squares whose occupancy can change its attacks are its *mask* (its
rays on an empty board without the board's edge beyond them); a magic number ``m`` maps each
of the 2^n subsets of an n-square mask to a table index, ``(subset * m mod 2^64) >> (64 -
n)``, such that two subsets share an index only if they give the same attacks.  One table
of 2^n entries per square, all of them in one array at per-square offsets.

The search here is the classic one: candidates are the AND of three random 64-bit words
(few bits set, which multiply into distinct top bits more often), those that put fewer than
six bits into the product's top byte are skipped at once, and the rest are tried on every
subset until a collision of different attacks rejects them.  Random numbers come from
``random.Random(seed)``: the same seed writes the same module, so ``--check`` can prove the
checked-in numbers are this script's.  It prints how long it took: seed 46 tries 1.17 million
candidates in about 30 s of CPU (the rook squares take nearly all of it).

The attacks each subset must give are python-chess's own tables, which
``games/chess_game/bitboard64.py`` also fills its attack tables from, and which its tests
compare the compiled lookups with.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import chess

HERE = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = HERE / "games" / "chess_game" / "magics.py"
DEFAULT_SEED = 46
_MASK_64 = (1 << 64) - 1
_TOP_BYTE = 0xFF << 56
_MIN_TOP_BITS = 6
"""Candidates that put fewer bits than this into the product's top byte are skipped
(Stockfish's filter: such a product rarely spreads the subsets over the whole table)."""


def subsets(mask: int) -> list[int]:
    """Every subset of ``mask``, the empty one first (the carry-rippler enumeration)."""
    result = []
    subset = 0
    while True:
        result.append(subset)
        subset = (subset - mask) & mask
        if not subset:
            return result


def rook_mask(square: int) -> int:
    return chess.BB_RANK_MASKS[square] | chess.BB_FILE_MASKS[square]


def bishop_mask(square: int) -> int:
    return chess.BB_DIAG_MASKS[square]


def rook_reference(square: int, subset: int) -> int:
    """python-chess's rook attacks from ``square`` with the pieces ``subset`` (inside the
    mask) on the board."""
    return (
        chess.BB_RANK_ATTACKS[square][subset & chess.BB_RANK_MASKS[square]]
        | chess.BB_FILE_ATTACKS[square][subset & chess.BB_FILE_MASKS[square]]
    )


def bishop_reference(square: int, subset: int) -> int:
    return chess.BB_DIAG_ATTACKS[square][subset]


def find_magic(mask: int, attacks: dict[int, int], rng: random.Random) -> tuple[int, int]:
    """A magic for one square: (magic, candidates tried)."""
    bits = mask.bit_count()
    shift = 64 - bits
    items = list(attacks.items())
    # The attacks stored at each index in this trial, valid where ``epoch`` says so.
    seen = [0] * (1 << bits)
    epoch = [0] * (1 << bits)
    trial = 0
    while True:
        magic = rng.getrandbits(64) & rng.getrandbits(64) & rng.getrandbits(64)
        if ((mask * magic) & _TOP_BYTE).bit_count() < _MIN_TOP_BITS:
            continue
        trial += 1
        for subset, attack in items:
            index = ((subset * magic) & _MASK_64) >> shift
            if epoch[index] != trial:
                epoch[index] = trial
                seen[index] = attack
            elif seen[index] != attack:
                break
        else:
            return magic, trial


def find_all(seed: int) -> tuple[list[int], list[int], int]:
    """(rook magics, bishop magics, candidates tried) for every square, in square order."""
    rng = random.Random(seed)
    tried = 0
    magics: dict[str, list[int]] = {"rook": [], "bishop": []}
    for name, mask_of, reference in (
        ("rook", rook_mask, rook_reference),
        ("bishop", bishop_mask, bishop_reference),
    ):
        for square in chess.SQUARES:
            mask = mask_of(square)
            attacks = {subset: reference(square, subset) for subset in subsets(mask)}
            magic, trials = find_magic(mask, attacks, rng)
            magics[name].append(magic)
            tried += trials
    return magics["rook"], magics["bishop"], tried


def module_text(seed: int, rooks: list[int], bishops: list[int]) -> str:
    def rows(values: list[int]) -> str:
        return "".join(f"    0x{value:016X},\n" for value in values)

    return (
        f'"""Magic multipliers of the sliding attacks, one per square (a1 = 0 .. h8 = 63).\n'
        f"\n"
        f"Written by ``python scripts/find_magics.py --seed {seed}`` (see that script for the"
        f" method);\n"
        f"do not edit: :mod:`games.chess_game.bitboard64` builds its attack tables from them"
        f" and\n"
        f"checks at import that no two occupancies with different attacks share an index.\n"
        f'"""\n'
        f"\n"
        f"SEED = {seed}\n"
        f"\n"
        f"ROOK_MAGICS = (\n{rows(rooks)})\n"
        f"\n"
        f"BISHOP_MAGICS = (\n{rows(bishops)})\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument(
        "--check", action="store_true", help="compare with --output instead of writing it"
    )
    args = parser.parse_args()
    start, cpu = time.perf_counter(), time.process_time()
    rooks, bishops, tried = find_all(args.seed)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    text = module_text(args.seed, rooks, bishops)
    print(
        f"seed {args.seed}: {tried} candidates tried, {seconds:.1f} s ({cpu:.1f} s of CPU)",
        flush=True,
    )
    if args.check:
        if args.output.read_text(encoding="utf-8") != text:
            sys.exit(f"{args.output} differs from what seed {args.seed} gives")
        print(f"{args.output} matches")
        return
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
