"""A scripted UCI engine that misbehaves on purpose, for the match runner's tests.

Run as ``python fake_uci_engine.py --mode MODE [--at N] [--sleep MS] [--name NAME]``.  It plays
the first legal move (chess through python-chess; tic-tac-toe by the first empty square
a1, b1, ... c3) except on the N-th ``go`` of each game (counted from ``ucinewgame``), where,
by MODE, it:

* ``normal``: behaves;
* ``slow``: sleeps MS milliseconds before answering (a loss on time under a short clock);
* ``illegal``: answers a move that is not legal (``a1a1`` / ``P@z9``);
* ``none``: answers ``bestmove (none)``;
* ``crash``: exits without answering;
* ``hang``: never answers, not even ``stop`` (the runner must kill it).

It reports ``info depth 1 score cp <CP>`` before every move (``--cp``, default 0), which the
adjudication tests use.
"""

from __future__ import annotations

import argparse
import sys
import time

import chess

_TTT_SQUARES = [f"{f}{r}" for r in "123" for f in "abc"]


def _chess_move(words: list[str]) -> str:
    board = chess.Board()
    if words[1] == "fen":
        end = words.index("moves") if "moves" in words else len(words)
        board = chess.Board(" ".join(words[2:end]))
    if "moves" in words:
        for text in words[words.index("moves") + 1 :]:
            board.push_uci(text)
    moves = sorted(board.legal_moves, key=lambda m: m.uci())
    return moves[0].uci() if moves else "(none)"


def _tictactoe_move(words: list[str]) -> str:
    taken = set()
    if "moves" in words:
        taken = {text[-2:] for text in words[words.index("moves") + 1 :]}
    free = [sq for sq in _TTT_SQUARES if sq not in taken]
    return f"P@{free[0]}" if free else "(none)"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="normal")
    parser.add_argument("--at", type=int, default=1)
    parser.add_argument("--sleep", type=int, default=0)
    parser.add_argument("--name", default="Fake")
    parser.add_argument("--cp", type=int, default=0)
    args = parser.parse_args()
    variant = "chess"
    position: list[str] = ["position", "startpos"]
    gos = 0
    for raw in sys.stdin:
        words = raw.split()
        if not words:
            continue
        command = words[0]
        if command == "uci":
            print(f"id name {args.name}")
            print("option name UCI_Variant type combo default chess var chess var tictactoe")
            print("option name Hash type spin default 16 min 1 max 64")
            print("uciok")
        elif command == "isready":
            print("readyok")
        elif command == "setoption" and "UCI_Variant" in words:
            variant = words[-1]
        elif command == "ucinewgame":
            gos = 0
        elif command == "position":
            position = words
        elif command == "go":
            gos += 1
            misbehave = gos == args.at
            if misbehave and args.mode == "crash":
                return 3
            if misbehave and args.mode == "hang":
                while True:
                    time.sleep(3600)
            if misbehave and args.mode == "slow":
                time.sleep(args.sleep / 1000)
            print(f"info depth 1 score cp {args.cp} nodes 1")
            if misbehave and args.mode == "illegal":
                move = "a1a1" if variant == "chess" else "P@z9"
            elif misbehave and args.mode == "none":
                move = "(none)"
            elif variant == "chess":
                move = _chess_move(position)
            else:
                move = _tictactoe_move(position)
            print(f"bestmove {move}")
        elif command == "quit":
            return 0
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
