"""The transposition table: packing, replacement, hashfull, and honest memory use."""

from __future__ import annotations

import gc
import itertools
import multiprocessing
import random
import tracemalloc
from collections.abc import Callable, Iterator

import chess
import pytest

from engine.score import mate_in, mated_in, to_tt
from engine.tt import (
    EXACT,
    EXHAUSTIVE,
    LOWER,
    UPPER,
    Entry,
    SharedTable,
    TranspositionTable,
    fold_key,
)
from games.chess_game.move_codes import from_chess
from games.registry import GAMES
from tests.support.toy_game import mix


def same_bucket_keys(tt: TranspositionTable, n: int, base: int = 12345) -> list[int]:
    """Keys landing in one bucket (buckets hold two slots: ``entries // 2`` buckets)."""
    buckets = tt.entries // 2
    return [base + i * buckets for i in range(n)]


def test_probe_miss_and_round_trip() -> None:
    tt = TranspositionTable(1)
    assert tt.probe(42) is None
    tt.store(42, "e2e4", -317, 7, LOWER, 55)
    assert tt.probe(42) == Entry("e2e4", -317, 7, LOWER, 55)
    tt.store(43, None, 0, 0, UPPER)
    assert tt.probe(43) == Entry(None, 0, 0, UPPER, None)
    assert tt.probe(44) is None


@pytest.mark.parametrize("score", [mate_in(1), mated_in(2), 29_999, -29_999, 30_001, -30_001])
def test_extreme_scores_survive_packing(score: int) -> None:
    tt = TranspositionTable(1)
    tt.store(7, 3, score, 12, EXACT, -29_000)
    entry = tt.probe(7)
    assert entry is not None
    assert (entry.score, entry.static_eval) == (score, -29_000)


def test_mate_scores_are_stored_node_relative() -> None:
    tt = TranspositionTable(1)
    tt.store(99, 1, to_tt(mate_in(9), 4), 5, EXACT)
    entry = tt.probe(99)
    assert entry is not None and entry.score == mate_in(5)


def test_depth_is_clamped_and_exhaustive_kept() -> None:
    tt = TranspositionTable(1)
    tt.store(1, None, 0, -3, EXACT)
    tt.store(2, None, 0, 400, EXACT)
    tt.store(3, None, 0, EXHAUSTIVE, EXACT)
    assert [tt.probe(k).depth for k in (1, 2, 3)] == [0, EXHAUSTIVE - 1, EXHAUSTIVE]  # type: ignore[union-attr]


def test_keys_wider_than_64_bits_and_zero_key() -> None:
    tt = TranspositionTable(1)
    tt.store(0, 5, 11, 1, EXACT)
    tt.store(-1, 6, 12, 1, EXACT)
    tt.store(1 << 70 | 77, 7, 13, 1, EXACT)
    assert tt.probe(0) == Entry(5, 11, 1, EXACT, None)
    assert tt.probe(-1) == Entry(6, 12, 1, EXACT, None)
    assert tt.probe(1 << 70 | 77) == Entry(7, 13, 1, EXACT, None)


@pytest.mark.parametrize(
    "key",
    [
        0,
        5,
        -1,
        2**62,
        -(2**62) - 1,
        2**63 - 1,
        -(2**63),
        2**63,
        2**64 - 1,
        1 << 70 | 77,
        -(2**64) - 3,
    ],
)
def test_a_key_folds_to_its_low_64_bits_as_a_signed_word(key: int) -> None:
    """Compiled, the fold converts in-range keys natively and catches the overflow of wider
    ones; interpreted, it tests the range.  Both must give the same word, and the table must
    index a key and the same 64 bits read unsigned alike (chess hands it signed keys)."""
    folded = fold_key(key)
    assert -(2**63) <= folded < 2**63
    assert (folded - key) % 2**64 == 0
    tt = TranspositionTable(1)
    # The bucket is the unsigned key's, computed from the signed word.
    assert tt._index(folded) == _slot_word(tt, key % 2**64)
    tt.store(key, 9, 21, 3, LOWER)
    assert tt.probe(key % 2**64) == Entry(9, 21, 3, LOWER, None)
    assert tt.probe(folded) == Entry(9, 21, 3, LOWER, None)


class _WidestCodec:
    """A codec whose every move is the largest code, 65,535."""

    def move_code(self, move: object) -> int:
        return 65_535

    def code_move(self, code: int) -> object:
        return ("move", code)


def test_the_widest_entry_packs_into_a_positive_word() -> None:
    """Every field at its largest (move code 65,535, the last generation, an exhaustive
    draft, EXACT, eval and score at the ends of their range) still packs into 63 bits: a
    data word is never negative, and 0 stays "empty"."""
    tt = TranspositionTable(1)
    tt.use_codec(_WidestCodec())
    for _ in range(31):
        tt.new_search()
    tt.store(-12345, "any", 32_767, EXHAUSTIVE, EXACT, 32_767)
    assert tt.lookup(-12345) > 0
    assert tt.probe(-12345) == Entry(("move", 65_535), 32_767, EXHAUSTIVE, EXACT, 32_767)
    tt.store(-54321, "any", -32_767, 0, UPPER, -32_767)
    assert tt.probe(-54321) == Entry(("move", 65_535), -32_767, 0, UPPER, -32_767)


def test_the_generation_wraps_after_32_searches() -> None:
    """An entry written 32 searches ago counts as the current search's again (five bits of
    generation): deep entries of a long-past search are then kept a little longer, never
    misread."""
    tt = TranspositionTable(1)
    a, b = same_bucket_keys(tt, 2)
    tt.store(a, 1, 1, 20, EXACT)
    for _ in range(32):
        tt.new_search()
    tt.store(b, 2, 2, 1, UPPER)  # shallow, and a looks current: b takes the second slot
    assert tt.probe(a) == Entry(1, 1, 20, EXACT, None)
    assert tt.probe(b) == Entry(2, 2, 1, UPPER, None)


def test_store_without_move_keeps_the_old_move() -> None:
    tt = TranspositionTable(1)
    tt.store(5, "g1f3", 10, 3, LOWER)
    tt.store(5, None, -4, 4, UPPER)
    assert tt.probe(5) == Entry("g1f3", -4, 4, UPPER, None)


def test_same_key_deeper_entry_survives_a_shallow_bound() -> None:
    tt = TranspositionTable(1)
    tt.store(5, 1, 100, 10, LOWER)
    tt.store(5, 2, 50, 3, UPPER)  # much shallower, not exact: ignored
    assert tt.probe(5) == Entry(1, 100, 10, LOWER, None)
    tt.store(5, 2, 50, 8, UPPER)  # within two plies: replaces
    assert tt.probe(5) == Entry(2, 50, 8, UPPER, None)
    tt.store(5, 3, 60, 1, EXACT)  # exact always replaces its own key
    assert tt.probe(5) == Entry(3, 60, 1, EXACT, None)


def test_bucket_keeps_deep_entry_and_newest_entry() -> None:
    tt = TranspositionTable(1)
    a, b, c = same_bucket_keys(tt, 3)
    tt.store(a, 1, 1, 9, EXACT)  # depth-preferred slot
    tt.store(b, 2, 2, 2, LOWER)  # shallower: always-replace slot
    tt.store(c, 3, 3, 1, LOWER)  # shallower again: evicts b, not a
    assert tt.probe(a) is not None
    assert tt.probe(b) is None
    assert tt.probe(c) == Entry(3, 3, 1, LOWER, None)
    tt.store(b, 2, 2, 12, LOWER)  # deeper than a: takes the preferred slot, a is demoted
    assert tt.probe(b) == Entry(2, 2, 12, LOWER, None)
    assert tt.probe(a) == Entry(1, 1, 9, EXACT, None)
    assert tt.probe(c) is None


def test_older_generation_is_replaced_first() -> None:
    tt = TranspositionTable(1)
    a, b = same_bucket_keys(tt, 2)
    tt.store(a, 1, 1, 20, EXACT)
    tt.new_search()
    tt.store(b, 2, 2, 1, UPPER)  # shallow, but a is from an older search
    entry = tt.probe(b)
    assert entry is not None and entry.depth == 1
    assert tt.probe(a) is not None  # demoted to the always-replace slot, not lost


def test_promoting_a_key_from_the_second_slot_leaves_no_duplicate() -> None:
    tt = TranspositionTable(1)
    a, b = same_bucket_keys(tt, 2)
    tt.store(a, 1, 1, 6, EXACT)
    tt.store(b, 2, 2, 2, LOWER)  # second slot
    tt.store(b, None, 5, 7, LOWER)  # deeper now: promoted, keeps its move
    assert tt.probe(b) == Entry(2, 5, 7, LOWER, None)
    assert tt.probe(a) == Entry(1, 1, 6, EXACT, None)


def test_hashfull_counts_current_search_per_mille() -> None:
    tt = TranspositionTable(1)
    assert tt.hashfull() == 0
    for key in range(250):  # consecutive keys: one per bucket, in its preferred slot
        tt.store(key, None, 0, 1, EXACT)
    assert tt.hashfull() == 250  # 250 of the first 1,000 slots
    tt.new_search()
    assert tt.hashfull() == 0  # entries of an older search do not count
    for key in range(1000):
        tt.store(key, None, 0, 1, EXACT)
    assert tt.hashfull() == 500  # 500 buckets: one slot of each


def test_clear_and_resize() -> None:
    tt = TranspositionTable(2)
    assert tt.size_mb == 2
    small = TranspositionTable(1).entries
    assert tt.entries > small
    tt.store(8, "x", 1, 1, EXACT)
    tt.clear()
    assert tt.probe(8) is None and tt.entries > small
    tt.resize(1)
    assert (tt.size_mb, tt.entries) == (1, small)
    tt.resize(0)
    assert tt.size_mb == 1


def test_capacity_grows_with_size() -> None:
    one = TranspositionTable(1).entries
    eight = TranspositionTable(8).entries
    assert one >= 40_000  # 16 bytes per slot after the move share
    assert eight > 8 * one * 0.9
    assert eight * 16 <= 8 << 20


def test_move_interning_budget_degrades_to_no_move() -> None:
    tt = TranspositionTable(1)
    stored_with_move = 0
    for i in range(20_000):
        move = (i, i + 1, i + 2)
        tt.store(i, move, 0, 1, EXACT)
        entry = tt.probe(i)
        assert entry is not None and entry.score == 0
        stored_with_move += entry.move == move
    assert 500 < stored_with_move < 20_000


def fresh_chess_moves() -> Iterator[chess.Move]:
    """A stream of newly allocated moves, as a move generator produces them."""
    while True:
        for promotion in (None, chess.QUEEN, chess.KNIGHT):
            for frm in range(64):
                for to in range(64):
                    if frm != to:
                        yield chess.Move(frm, to, promotion)


def traced_bytes(fill: Callable[[], TranspositionTable]) -> tuple[int, TranspositionTable]:
    """Bytes still allocated (tracemalloc) after ``fill`` built and filled a table."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tt = fill()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before, tt
    finally:
        tracemalloc.stop()


def fill_every_slot(size_mb: int) -> TranspositionTable:
    """Write every slot once: key ``b`` and ``b + buckets`` share bucket ``b``; fresh moves."""
    tt = TranspositionTable(size_mb)
    buckets = tt.entries // 2
    moves = fresh_chess_moves()
    for b in range(buckets):
        tt.store(b, next(moves), b % 2000 - 1000, 9, EXACT, b % 500)
        tt.store(b + buckets, next(moves), -(b % 2000), 3, LOWER, -(b % 500))
    return tt


@pytest.mark.parametrize("size_mb", [1, pytest.param(4, marks=pytest.mark.slow)])
def test_a_full_table_stays_within_its_size(size_mb: int) -> None:
    """Real allocations after writing every slot: arrays, interned moves, everything."""
    used, tt = traced_bytes(lambda: fill_every_slot(size_mb))
    assert tt.hashfull() == 1000
    assert used <= size_mb << 20, f"{used} bytes for a {size_mb} MiB table"
    assert used >= (size_mb << 20) * 0.8  # and it really uses what it was given


@pytest.mark.parametrize("kind", ["int", "tuple", "object"])
def test_interned_moves_of_any_kind_stay_within_the_size(kind: str) -> None:
    """Only interning allocates during stores, so saturate it with far too many moves."""

    class Move:
        def __init__(self, i: int) -> None:
            self.frm = i % 64
            self.to = 1000 + i

        def __hash__(self) -> int:
            return hash((self.frm, self.to))

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Move) and (self.frm, self.to) == (other.frm, other.to)

    def make(i: int) -> object:
        if kind == "int":
            return 100_000 + i
        if kind == "tuple":
            return (i % 64, 5000 + i)
        return Move(i)

    def fill() -> TranspositionTable:
        tt = TranspositionTable(1)
        for i in range(6000):
            tt.store(mix(i), make(i), 0, 1, EXACT)
        return tt

    used, tt = traced_bytes(fill)
    assert used <= 1 << 20, f"{used} bytes for a 1 MiB table"
    assert tt.probe(mix(0)) == Entry(make(0), 0, 1, EXACT, None)  # early moves were interned


# -- shared tables (Lazy SMP) -------------------------------------------------------------------
@pytest.fixture
def shared_pair() -> Iterator[tuple[TranspositionTable, TranspositionTable]]:
    """A shared table and a second mapping of it, as a helper process holds one."""
    owner = TranspositionTable(1, shared=True)
    handle = owner.shared
    assert handle is not None
    attached = TranspositionTable.attach(handle)
    yield owner, attached
    attached.close()
    owner.close()


def test_a_shared_table_is_one_table_for_every_mapping(
    shared_pair: tuple[TranspositionTable, TranspositionTable],
) -> None:
    owner, attached = shared_pair
    owner.store(42, None, 17, 5, EXACT, 3)
    attached.store(43, None, -5, 2, LOWER)
    assert attached.probe(42) == Entry(None, 17, 5, EXACT, 3)
    assert owner.probe(43) == Entry(None, -5, 2, LOWER, None)
    assert attached.entries == owner.entries
    for key in (-1, -(2**63), -987_654_321_987_654_321, 2**64 - 5):  # signed words in the view
        attached.store(key, None, 11, 4, UPPER, -6)
        assert owner.probe(key) == Entry(None, 11, 4, UPPER, -6)


def test_an_attached_table_writes_the_creators_generation(
    shared_pair: tuple[TranspositionTable, TranspositionTable],
) -> None:
    owner, attached = shared_pair
    owner.new_search()
    owner.new_search()
    attached.new_search()  # adopts the creator's generation instead of counting its own
    attached.store(5, None, 1, 1, EXACT)
    assert owner.hashfull() == 1 and attached.hashfull() == 1  # slot 10 of the first 1,000


def test_clearing_a_shared_table_clears_every_mapping(
    shared_pair: tuple[TranspositionTable, TranspositionTable],
) -> None:
    owner, attached = shared_pair
    for key in range(100):
        attached.store(mix(key), None, key, 3, EXACT)
    attached.clear()  # only the creator clears: an attached process has nothing to forget
    assert owner.probe(mix(7)) is not None
    owner.clear()
    assert all(attached.probe(mix(key)) is None for key in range(100))


def test_a_torn_entry_reads_as_a_miss_never_as_another_entry(
    shared_pair: tuple[TranspositionTable, TranspositionTable],
) -> None:
    """Two processes writing one slot can leave one entry's check word beside another's data
    word; the XOR check must turn that into a miss for both keys."""
    owner, _ = shared_pair
    a, b = same_bucket_keys(owner, 2)
    words = owner._view
    assert words is not None
    owner.store(a, None, 111, 9, EXACT)
    check_a, data_a = words[_slot_word(owner, a)], words[_slot_word(owner, a) + 1]
    owner.clear()
    owner.store(b, None, -222, 9, EXACT)
    i = _slot_word(owner, b)
    assert i == _slot_word(owner, a)  # same bucket, same depth-preferred slot
    check_b, data_b = words[i], words[i + 1]
    for check, data in ((check_a, data_b), (check_b, data_a)):
        words[i], words[i + 1] = check, data
        assert owner.probe(a) is None
        assert owner.probe(b) is None
    words[i], words[i + 1] = check_b, data_b
    assert owner.probe(b) == Entry(None, -222, 9, EXACT, None)


def _slot_word(tt: TranspositionTable, key: int) -> int:
    """Index of the check word of ``key``'s depth-preferred slot."""
    return (key % (tt.entries // 2)) * 4


def test_concurrent_writers_never_make_a_wrong_entry() -> None:
    """Real processes hammer one small shared table with entries whose score is a function of
    the key, while this process reads: every hit must carry its own key's score."""
    owner = TranspositionTable(1, shared=True)
    handle = owner.shared
    assert handle is not None
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=hammer, args=(handle, seed, 40_000)) for seed in range(2)]
    for writer in writers:
        writer.start()
    hits = wrong = 0
    try:
        while any(w.is_alive() for w in writers):
            for key in range(1, 3000):
                entry = owner.probe(mix(key))
                if entry is not None:
                    hits += 1
                    wrong += entry.score != key % 1000 or entry.depth != key % 50
    finally:
        for writer in writers:
            writer.join(60)
        owner.close()
    assert [w.exitcode for w in writers] == [0, 0]
    assert hits > 0
    assert wrong == 0


def hammer(handle: SharedTable, seed: int, stores: int) -> None:
    """A writer process: store keys in a small range (so buckets collide), each with a score
    and draft derived from its key."""
    table = TranspositionTable.attach(handle)
    rng = random.Random(seed)
    for _ in range(stores):
        key = rng.randrange(1, 3000)
        table.store(mix(key), None, key % 1000, key % 50, EXACT)
    table.close()


def test_a_shared_table_stores_moves_only_with_a_codec(
    shared_pair: tuple[TranspositionTable, TranspositionTable],
) -> None:
    owner, attached = shared_pair
    owner.store(1, chess.Move.from_uci("e2e4"), 0, 1, EXACT)
    assert owner.probe(1) == Entry(None, 0, 1, EXACT, None)  # no codec: no move, not a wrong one
    game = GAMES["chess"].new()
    owner.use_codec(game)
    attached.use_codec(game)
    promotion = from_chess(chess.Move.from_uci("e7e8q"))  # the chess game's moves are ints
    owner.store(2, promotion, 0, 1, EXACT)
    entry = attached.probe(2)
    assert entry is not None and entry.move is promotion


def test_a_private_table_with_a_codec_stores_every_move_by_number() -> None:
    tt = TranspositionTable(1)
    game = GAMES["chess"].new()
    tt.use_codec(game)
    for i, chess_move in enumerate(itertools.islice(fresh_chess_moves(), 20_000)):
        move = from_chess(chess_move)
        tt.store(mix(i), move, 0, 1, EXACT)
        entry = tt.probe(mix(i))
        assert entry is not None and entry.move is move
