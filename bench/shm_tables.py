"""What a ``Threads`` > 1 table costs to make in shared memory, and what a sweep costs.

    python bench/shm_tables.py [--sizes 16 256 1024] [--repeat 5] [--blocks 100] [--dir D]

For each ``--sizes`` MiB: the median wall time of creating the block (the free-space check,
``posix_fallocate`` of every page, the mapping) and of deleting it, over ``--repeat`` runs,
in ``--dir`` (default: ``$BRUDNO_SHM_DIR`` or ``/dev/shm``); and the median time of
:meth:`~engine.shm.ShmPlace.sweep` over a directory holding ``--blocks`` live blocks (what
every creation and every reaped worker pays).  Times depend on the machine and its load:
the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from engine.shm import SharedWords, ShmPlace

MIB = 1 << 20


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 256, 1024])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--blocks", type=int, default=100)
    parser.add_argument("--dir", type=Path, default=None)
    args = parser.parse_args()
    place = ShmPlace(args.dir) if args.dir else ShmPlace.from_environment()
    print(f"directory {place.directory}, load average {os.getloadavg()[0]:.2f}")
    print(f"{'MiB':>6} {'create ms':>10} {'delete ms':>10}")
    for size in args.sizes:
        create, delete = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            block = SharedWords(words=size * MIB // 8, place=place)
            create.append(time.perf_counter() - start)
            start = time.perf_counter()
            block.close()
            delete.append(time.perf_counter() - start)
        print(f"{size:>6} {_median_ms(create):>10.1f} {_median_ms(delete):>10.1f}")
    live = [SharedWords(words=1, place=place) for _ in range(args.blocks)]
    sweeps = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        place.sweep()
        sweeps.append(time.perf_counter() - start)
    for block in live:
        block.close()
    print(f"sweep over {args.blocks} live blocks: {_median_ms(sweeps):.2f} ms (median)")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
