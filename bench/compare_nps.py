"""Nodes per second of ``brudno bench`` now against an earlier commit, in one run.

    python bench/compare_nps.py [--ref COMMIT] [--rounds N] [--depth 7]
    python bench/compare_nps.py --instructions [--ref COMMIT] [--depth 5]

Checks the reference commit out into a temporary git worktree, then runs ``brudno bench``
from the reference tree and from this checkout alternately, ``--rounds`` times each (both
searches see the same machine load, interleaved), and prints every run and the median nodes
per second of each side.  The default reference is the commit before issue 16's search and
evaluation work began.  The node counts differ whenever the search or the evaluation changed
(the tree is another one); nodes per second is what the comparison is about.  Run it on a
quiet machine: load shifts both sides, but not always by the same amount.  ``--depth`` makes
each timed run search deeper than the bench's default: the default search takes about a tenth
of a second, which the bench's millisecond clock and the machine's jitter turn into swings of
20-30% between runs, where depth 7 runs for a second or so.

When this checkout runs compiled (mypyc extensions beside its sources, as an editable install
or ``python setup.py build_ext --inplace`` leaves them), the reference tree is compiled the same
way first, so that compiled code is compared with compiled code; ``--build no`` compares with
the reference in pure Python, ``--build yes`` compiles it regardless.

``--instructions`` counts instead of timing, for a machine that is not quiet (a match
running beside it): each tree's ``brudno bench --depth D`` runs once under valgrind's
cachegrind, and so does ``--depth 1`` (imports and start-up), with ``PYTHONHASHSEED=0``.
The difference is the search's instructions; per node it is the speed figure, and it does not
move with the load (repeated runs agree to about 0.01%).  Needs ``valgrind`` on the PATH.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
DEFAULT_REF = "5ae0ffb"
"""The last commit before issue 16 changed the search or the evaluation."""

_NPS = re.compile(r"Nodes/second: (\d+)")
_NODES = re.compile(r"Nodes searched: (\d+)")
_IREFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def _bench(tree: Path, depth: int | None) -> tuple[int, int]:
    """(nodes, nodes per second) of one ``brudno bench`` run from the source tree ``tree``
    (to ``depth``, or the bench's default depth)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    depth_args = [] if depth is None else ["--depth", str(depth)]
    out = subprocess.run(
        [sys.executable, "-m", "brudno", "bench", *depth_args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    nodes, nps = _NODES.search(out), _NPS.search(out)
    if nodes is None or nps is None:
        raise SystemExit(f"no bench summary from {tree}:\n{out}")
    return int(nodes.group(1)), int(nps.group(1))


def _instructions(tree: Path, depth: int) -> tuple[int, int]:
    """(nodes, instructions) of one ``brudno bench --depth`` run under cachegrind."""
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0")
    done = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            # The interpreter itself: a pyenv shim is a shell script valgrind would measure.
            os.path.realpath(sys.executable),
            "-m",
            "brudno",
            "bench",
            "--depth",
            str(depth),
        ],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    nodes, irefs = _NODES.search(done.stdout), _IREFS.search(done.stderr)
    if nodes is None or irefs is None:
        raise SystemExit(f"no bench summary or instruction count from {tree}:\n{done.stderr}")
    return int(nodes.group(1)), int(irefs.group(1).replace(",", ""))


def _git(*args: str) -> str:
    """The output of ``git ARGS`` in this checkout, stripped."""
    return subprocess.run(
        ["git", *args], cwd=HERE, capture_output=True, text=True, check=True
    ).stdout.strip()


def _compiled_in_place(tree: Path) -> bool:
    """Does ``tree`` hold mypyc extensions beside its sources?"""
    return any((tree / "engine").glob("*.so"))


def _build(tree: Path) -> None:
    """Compile ``tree``'s hot path in place, as an editable install would."""
    if not (tree / "setup.py").exists():
        print(f"{tree.name}: no setup.py, runs in pure Python", flush=True)
        return
    print(f"{tree.name}: compiling (python setup.py build_ext --inplace)", flush=True)
    done = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        # The build's own words say what is missing (an old setuptools, no C compiler).
        raise SystemExit(f"{tree.name}: the build failed:\n{done.stderr[-3000:]}")


def _compare_instructions(trees: dict[str, Path], depth: int) -> None:
    per_node: dict[str, float] = {}
    for name, tree in trees.items():
        _, startup = _instructions(tree, 1)
        nodes, total = _instructions(tree, depth)
        search = total - startup
        per_node[name] = search / nodes
        print(
            f"{name}: nodes {nodes} instructions {total:,} start-up {startup:,} "
            f"search {search:,} per node {per_node[name]:,.0f}",
            flush=True,
        )
    (ref_name, ref), (head_name, head) = per_node.items()
    print(f"instructions per node, {head_name} against {ref_name}: {head / ref:.3f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default=DEFAULT_REF, help="the commit to compare with")
    parser.add_argument("--rounds", type=int, default=5, help="bench runs per side")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions under valgrind instead of timing (load does not matter)",
    )
    parser.add_argument(
        "--depth",
        type=int,
        default=None,
        help="bench depth (default: the bench's own when timing, 5 with --instructions)",
    )
    parser.add_argument(
        "--build",
        choices=("auto", "yes", "no"),
        default="auto",
        help="compile the reference tree (auto: when this checkout is compiled)",
    )
    args = parser.parse_args()
    head = _git("rev-parse", "--short", "HEAD")
    if _git("status", "--porcelain", "--untracked-files=no"):
        head += "+changes"  # the working tree, not the commit
    with tempfile.TemporaryDirectory() as tmp:
        ref_tree = Path(tmp) / "ref"
        subprocess.run(
            ["git", "worktree", "add", "-q", "--detach", str(ref_tree), args.ref],
            cwd=HERE,
            check=True,
        )
        try:
            if args.build == "yes" or (args.build == "auto" and _compiled_in_place(HERE)):
                _build(ref_tree)
            if args.instructions:
                _compare_instructions({args.ref: ref_tree, head: HERE}, args.depth or 5)
                return
            runs: dict[str, list[int]] = {args.ref: [], head: []}
            for round_ in range(1, args.rounds + 1):
                for name, tree in ((args.ref, ref_tree), (head, HERE)):
                    nodes, nps = _bench(tree, args.depth)
                    runs[name].append(nps)
                    print(f"round {round_} {name}: nodes {nodes} nps {nps}", flush=True)
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(ref_tree)], cwd=HERE, check=True
            )
    ref_median, head_median = statistics.median(runs[args.ref]), statistics.median(runs[head])
    print(
        f"median nps: {args.ref} {ref_median:.0f}, {head} {head_median:.0f} "
        f"({head_median / ref_median:.3f}x)"
    )


if __name__ == "__main__":
    main()
