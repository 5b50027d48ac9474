"""Shared memory blocks (issue 44): refused before allocating when they do not fit, fully
backed when they do, named after their creator, and swept once the creator is gone.

Blocks are created in a test directory (``ShmPlace``), never in the machine's ``/dev/shm``;
a cap (``max_bytes``) stands for a small ``/dev/shm``, as ``BRUDNO_SHM_MAX_MB`` does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from engine.shm import (
    MARGIN_BYTES,
    SHM_DIR_ENV,
    SHM_MAX_ENV,
    SharedMemoryFullError,
    SharedWords,
    ShmPlace,
    block_owner,
)
from engine.smp.searcher import ParallelSearcher
from engine.tt import TranspositionTable

MIB = 1 << 20

CREATE_AND_WAIT = """
import sys
from engine.shm import SharedWords, ShmPlace
from pathlib import Path
block = SharedWords(words=1024, place=ShmPlace(Path(sys.argv[1])))
print(block.name, flush=True)
sys.stdin.read()
"""
"""A creator process: makes one block, says its name, and waits to be killed."""


def test_a_block_is_named_after_its_creator_and_fully_backed(tmp_path: Path) -> None:
    block = SharedWords(words=MIB // 8, place=ShmPlace(tmp_path))
    path = Path(block.name)
    assert path.parent == tmp_path
    assert block_owner(block.name) == os.getpid()
    # posix_fallocate: every page is allocated now, not at its first touch (a SIGBUS then).
    assert path.stat().st_blocks * 512 >= MIB
    other = SharedWords(name=block.name)  # as a helper attaches
    other.view()[7] = 42
    assert block.view()[7] == 42
    other.close()
    assert path.exists()
    block.close()
    assert not path.exists()


def test_a_block_beyond_the_free_space_is_refused_before_anything_is_allocated(
    tmp_path: Path,
) -> None:
    place = ShmPlace(tmp_path, max_bytes=8 * MIB)
    first = SharedWords(words=6 * MIB // 8, place=place)
    assert place.free_bytes() == 2 * MIB
    with pytest.raises(SharedMemoryFullError) as refused:
        SharedWords(words=4 * MIB // 8, place=place)
    assert refused.value.shortage.needed == 4 * MIB
    assert refused.value.shortage.available == 2 * MIB
    assert str(refused.value) == (
        "a shared table of 4 MiB does not fit in shared memory (2 MiB free)"
    )
    assert [p.name for p in place.blocks()] == [Path(first.name).name]
    first.close()
    assert place.free_bytes() == 8 * MIB


def _free(directory: Path) -> int:
    stat = os.statvfs(directory)
    return stat.f_bavail * stat.f_frsize


def test_the_free_space_keeps_a_margin(tmp_path: Path) -> None:
    # Measured on both sides: other programs write to this file system meanwhile.
    before = _free(tmp_path)
    offered = ShmPlace(tmp_path).free_bytes()
    after = _free(tmp_path)
    assert min(before, after) - MARGIN_BYTES <= offered <= max(before, after) - MARGIN_BYTES


def test_the_place_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SHM_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(SHM_MAX_ENV, "64")
    assert ShmPlace.from_environment() == ShmPlace(tmp_path, 64 * MIB)
    monkeypatch.setenv(SHM_MAX_ENV, "lots")
    with pytest.raises(ValueError, match="BRUDNO_SHM_MAX_MB"):
        ShmPlace.from_environment()


def test_the_sweep_unlinks_the_blocks_of_a_killed_creator_only(tmp_path: Path) -> None:
    place = ShmPlace(tmp_path)
    mine = SharedWords(words=16, place=place)
    creator = subprocess.Popen(
        [sys.executable, "-c", CREATE_AND_WAIT, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert creator.stdout is not None
    name = creator.stdout.readline().strip()
    assert block_owner(name) == creator.pid
    assert place.sweep() == []  # its creator runs
    creator.send_signal(signal.SIGKILL)  # no cleanup runs
    creator.wait()
    assert Path(name).exists()
    assert place.sweep() == [Path(name).name]
    assert [p.name for p in place.blocks()] == [Path(mine.name).name]
    mine.close()


def test_a_stray_file_and_another_namespace_are_left_alone(tmp_path: Path) -> None:
    stranger = tmp_path / "sem.mp-1234"
    other_namespace = tmp_path / "brudno-1-999999999-1-00aa00aa"  # pid 999999999: none here
    for path in (stranger, other_namespace):
        path.write_bytes(b"x")
    assert ShmPlace(tmp_path).sweep() == []
    assert stranger.exists() and other_namespace.exists()


def test_a_creation_sweeps_first(tmp_path: Path) -> None:
    """The space of a killed creator's block counts as free for the next block."""
    place = ShmPlace(tmp_path, max_bytes=2 * MIB)
    creator = subprocess.Popen(
        [sys.executable, "-c", CREATE_AND_WAIT.replace("1024", str(MIB // 8)), str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert creator.stdout is not None
    left = Path(creator.stdout.readline().strip())
    creator.kill()
    creator.wait()
    block = SharedWords(words=(3 * MIB // 2) // 8, place=place)
    assert not left.exists()
    block.close()


def test_the_searcher_falls_back_to_one_thread_with_a_private_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SHM_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(SHM_MAX_ENV, "8")
    searcher = ParallelSearcher(16)
    try:
        with pytest.raises(SharedMemoryFullError):
            searcher.set_threads(2)
        assert searcher.threads == 1 and not searcher.tt.is_shared
        assert searcher.tt.size_mb == 16 and searcher.helper_pids == []
        assert list(tmp_path.iterdir()) == []

        searcher.resize_hash(4)
        searcher.set_threads(2)  # 4 MiB fit
        assert searcher.threads == 2 and searcher.tt.is_shared
        with pytest.raises(SharedMemoryFullError):
            searcher.resize_hash(12)
        assert searcher.threads == 1 and searcher.tt.size_mb == 12
        assert not searcher.tt.is_shared and searcher.helper_pids == []
        assert list(tmp_path.iterdir()) == []
    finally:
        searcher.close()


def test_a_shared_table_is_one_block_of_at_most_its_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the servers' memory budget charges for a table with helpers: its ``Hash``."""
    monkeypatch.setenv(SHM_DIR_ENV, str(tmp_path))
    table = TranspositionTable(8, shared=True)
    shared = table.shared
    assert shared is not None
    assert [str(p) for p in tmp_path.iterdir()] == [shared.name]
    assert 8 * MIB - 4096 < Path(shared.name).stat().st_size <= 8 * MIB
    table.close()
    assert list(tmp_path.iterdir()) == []
