"""`brudno bench`: the node count is a signature of the search, so it must not change between
runs, processes or hash seeds; the output ends with Stockfish's two closing lines."""

from __future__ import annotations

import os
import re
import subprocess

import pytest

HANG = 600.0


def bench(brudno: list[str], hash_seed: str, *args: str) -> list[str]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [*brudno, "bench", *args],
        capture_output=True,
        text=True,
        timeout=HANG,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.slow
def test_bench_node_signature_is_deterministic(brudno: list[str]) -> None:
    # Different string-hash seeds: a signature that depended on hash() order would differ.
    first = bench(brudno, "1", "--depth", "3")
    second = bench(brudno, "2", "--depth", "3")
    for lines in (first, second):
        assert re.fullmatch(r"Nodes searched: [1-9]\d*", lines[-2]), lines[-2]
        assert re.fullmatch(r"Nodes/second: \d+", lines[-1]), lines[-1]
    assert first[-2] == second[-2]
    per_position = [line for line in first if line.startswith("Position ")]
    assert len(per_position) == 5
    nodes = [int(re.findall(r": (\d+) nodes", line)[0]) for line in per_position]
    assert sum(nodes) == int(first[-2].split(": ")[1])
    # and the per-position counts and best moves agree too, not only their sum
    strip_time = [re.sub(r", \d+ ms,", ",", line) for line in per_position]
    assert strip_time == [
        re.sub(r", \d+ ms,", ",", line) for line in second if line.startswith("Position ")
    ]


def test_bench_other_game_prints_the_same_closing_lines(brudno: list[str]) -> None:
    lines = bench(brudno, "0", "--game", "tictactoe", "--depth", "4")
    assert re.fullmatch(r"Nodes searched: [1-9]\d*", lines[-2])
    assert re.fullmatch(r"Nodes/second: \d+", lines[-1])
