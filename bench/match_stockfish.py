"""Brudno against Debian's Stockfish 15.1 limited to a given strength (``UCI_Elo``).

Commands for issue 3's targets (each prints the ``brudno match`` command it runs on stderr,
then one result line per match on stdout)::

    # score >= 50% against UCI_Elo 1500 at 10+0.1 over 200 games (about an hour with -c 2)
    python bench/match_stockfish.py --elo 1500 --tc 10+0.1 --games 200 --concurrency 2

    # the UCI_Elo at which Brudno scores 50%: a ladder of matches, each starting where the
    # previous one estimated Brudno's rating (Stockfish's UCI_Elo + the measured difference)
    python bench/match_stockfish.py --find-elo --elo 1500 --tc 10+0.1 --games 100 --steps 3

    # never lose on time: 200 games at 2+0.02 (the time-loss count is in the result line)
    python bench/match_stockfish.py --elo 1500 --tc 2+0.02 --games 200 --concurrency 2

The result line::

    match tc=10+0.1 games=200 sf_elo=1500 W-D-L=80-40-80 score=50.0% elo=+0.0+/-40.1
    los=50.0% ptnml=[..] brudno_time_losses=0 brudno_illegal=0 brudno_crashes=0 sf_time_losses=0

(one line; ``elo`` is Brudno minus Stockfish with its 95% interval).  ``--find-elo`` adds a
line per step and ends with ``uci_elo_at_50%=N +/- M tc=...`` (or says that the 50%
point lies outside Stockfish's UCI_Elo range).  Openings are the shared noob book
(EPD, each played with both colours) in a fixed shuffled order (``--seed``); positions that
Syzygy tables in ``../shared/data/syzygy/regular`` cover (3-4 pieces) are adjudicated by
them, which is exact.  Stockfish's ``UCI_Elo`` accepts 1350..2850 (15.1).  Everything else
is ``brudno match``'s defaults (time margin 50 ms).  Pass ``--pgn FILE`` to keep the games.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
OPENINGS = DATA / "chess" / "openings" / "noob_3moves_every30th.epd"
TABLES = DATA / "syzygy" / "regular"
SF_ELO_MIN, SF_ELO_MAX = 1350, 2850


def stockfish() -> str:
    found = shutil.which("stockfish") or "/usr/games/stockfish"
    if not Path(found).exists():
        raise SystemExit("stockfish not found (apt-get install stockfish)")
    return found


def run_match(args: argparse.Namespace, sf_elo: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        summary = Path(tmp) / "result.json"
        command = [
            sys.executable, "-m", "protocol", "match",
            "--engine", args.brudno, "--name", "Brudno",
            *[word for option in args.brudno_option for word in ("--option", option)],
            "--engine", stockfish(), "--name", f"Stockfish {sf_elo}",
            "--option", "UCI_LimitStrength=true", "--option", f"UCI_Elo={sf_elo}",
            "--option", "Threads=1", "--option", "Hash=16",
            "--tc", args.tc, "--games", str(args.games),
            "--concurrency", str(args.concurrency),
            "--openings", str(args.openings), "--openings-order", "random",
            "--seed", str(args.seed),
            "--json", str(summary), "--report-every", "10",
        ]  # fmt: skip
        if TABLES.is_dir():
            command += ["--tb", str(TABLES)]
        if args.pgn:
            command += ["--pgn", args.pgn]
        print("$ " + shlex.join(["brudno", *command[3:]]), file=sys.stderr, flush=True)
        done = subprocess.run(command, cwd=REPO, stdout=subprocess.PIPE, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"brudno match failed ({done.returncode})")
        sys.stderr.write(done.stdout)
        result: dict[str, Any] = json.loads(summary.read_text())
        return result


def result_line(args: argparse.Namespace, sf_elo: int, result: dict[str, Any]) -> str:
    pair = result["pairs"][0]
    brudno, sf = result["engines"]
    elo = pair["elo"]
    low, high = pair["elo_lower"], pair["elo_upper"]
    margin = (high - low) / 2 if low is not None and high is not None else float("inf")
    if elo is None:  # a 0% or 100% score: the difference is unbounded
        elo_text = "+inf" if pair["score"] > 0.5 else "-inf"
    else:
        elo_text = f"{elo:+.1f}+/-{margin:.1f}"
    return (
        f"match tc={args.tc} games={pair['games']} sf_elo={sf_elo} "
        f"W-D-L={pair['wins']}-{pair['draws']}-{pair['losses']} "
        f"score={100 * pair['score']:.1f}% elo={elo_text} los={100 * pair['los']:.1f}% "
        f"ptnml={json.dumps(pair['ptnml']).replace(' ', '')} "
        f"brudno_time_losses={brudno['time_losses']} brudno_illegal={brudno['illegal_moves']} "
        f"brudno_crashes={brudno['crashes']} sf_time_losses={sf['time_losses']}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--elo", type=int, default=1500, help="Stockfish's UCI_Elo")
    parser.add_argument("--tc", default="10+0.1", help="time control (default 10+0.1)")
    parser.add_argument("--games", type=int, default=200, help="games per match")
    parser.add_argument("--concurrency", type=int, default=1, help="games at once")
    parser.add_argument("--openings", type=Path, default=OPENINGS, help="EPD or PGN book")
    parser.add_argument("--seed", type=int, default=1, help="opening order seed")
    parser.add_argument("--brudno", default=f"{shlex.quote(sys.executable)} -m protocol")
    parser.add_argument("--brudno-option", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--pgn", help="append the games to this file")
    parser.add_argument("--find-elo", action="store_true", help="ladder toward 50%%")
    parser.add_argument("--steps", type=int, default=3, help="matches in the ladder")
    args = parser.parse_args()

    sf_elo = max(SF_ELO_MIN, min(SF_ELO_MAX, args.elo))
    if not args.find_elo:
        print(result_line(args, sf_elo, run_match(args, sf_elo)), flush=True)
        return 0
    estimate = None
    for step in range(1, args.steps + 1):
        result = run_match(args, sf_elo)
        print(f"step {step}: " + result_line(args, sf_elo, result), flush=True)
        pair = result["pairs"][0]
        if pair["elo"] is None:  # 0% or 100%: jump by 400 toward the other side
            diff = 400.0 if pair["score"] > 0.5 else -400.0
            margin = float("inf")
        else:
            diff = pair["elo"]
            margin = (pair["elo_upper"] - pair["elo_lower"]) / 2
        estimate = (sf_elo + diff, margin)
        next_elo = max(SF_ELO_MIN, min(SF_ELO_MAX, round(sf_elo + diff)))
        if next_elo == sf_elo:
            break
        sf_elo = next_elo
    if estimate is not None:
        value, margin = estimate
        if margin == float("inf"):
            side = "below" if value < sf_elo else "above"
            text = f"{side} {sf_elo} (a {'0' if side == 'below' else '100'}% score there)"
        elif value < SF_ELO_MIN or value > SF_ELO_MAX:
            side = "below" if value < SF_ELO_MIN else "above"
            limit = SF_ELO_MIN if side == "below" else SF_ELO_MAX
            text = (
                f"{side} {limit}, the range of UCI_Elo (extrapolated {value:.0f} +/- {margin:.0f})"
            )
        else:
            text = f"{value:.0f} +/- {margin:.0f}"
        print(f"uci_elo_at_50%={text} tc={args.tc}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
