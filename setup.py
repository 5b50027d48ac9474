"""Compile the chess engine's hot path to C with mypyc when the package is built.

The search spends its time in a handful of modules (move generation, make/unmake, the
evaluation, the static exchange, the transposition table, the search loop itself).  They are
already ``mypy --strict`` clean, so mypyc turns them into C extensions with few changes (a
compiled class cannot be made without ``__init__`` nor subclassed by plain Python, and its
frozen dataclasses pickle by value through ``__reduce__``); ``brudno bench`` searches the same
nodes (the same ``Nodes searched`` signature) 1.45 times as fast.  Why mypyc and not Cython or
hand-written C: it compiles the typed Python we already have and test, nothing is written
twice, and it ships with mypy, which the project already uses.  Every other module stays plain
Python.

``BRUDNO_PURE_PYTHON=1`` skips the compilation: for a machine without a C compiler, or for
working on these modules with an editable install, where the built extensions sit beside the
sources and shadow them until the next ``pip install -e .`` (``tests/test_compiled.py`` fails
on extensions older than their sources).
"""

from __future__ import annotations

import os
import sys

from setuptools import Extension, setup

COMPILED_MODULES = [
    "engine/native_game.py",
    "engine/ordering.py",
    "engine/score.py",
    "engine/search.py",
    "engine/stop.py",
    "engine/tt.py",
    "games/chess_game/adapter.py",
    "games/chess_game/bitboard64.py",
    "games/chess_game/checks.py",
    "games/chess_game/evaluation.py",
    "games/chess_game/make.py",
    "games/chess_game/move_codes.py",
    "games/chess_game/movegen.py",
    "games/chess_game/see.py",
    "games/chess_game/zobrist.py",
    "games/connect4/negamax.py",
]
"""The modules mypyc compiles, as paths; ``tests/test_compiled.py`` reads this list."""


def _extensions() -> list[Extension]:
    if os.environ.get("BRUDNO_PURE_PYTHON", "") not in ("", "0"):
        return []
    from mypyc.build import mypycify  # noqa: PLC0415 (a build-time dependency only)

    extensions = list(mypycify(COMPILED_MODULES, opt_level="3"))
    if sys.platform != "win32":
        # mypyc compiles an i64 product to C's signed multiplication, whose overflow C leaves
        # undefined; the magic bitboards and bit scans need it to wrap modulo 2**64.  CPython's
        # own CFLAGS usually carry -fwrapv already: say so here rather than depend on them
        # (tests/games/test_chess_bitboard64.py checks the products).
        # -fno-semantic-interposition: in position-independent code the loader could
        # replace a global function, so the C compiler inlines none; mypyc makes every
        # compiled function global, and each bit scan, popcount and attack lookup was a full
        # call.  Nothing replaces them: inlined, 0.882x the instructions per node.
        for extension in extensions:
            extension.extra_compile_args += ["-fwrapv", "-fno-semantic-interposition"]
    return extensions


if __name__ == "__main__":
    setup(ext_modules=_extensions())
