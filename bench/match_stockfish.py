"""Brudno against Debian's Stockfish 15.1 limited to a given strength (``UCI_Elo``).

Commands for issue 3's targets (each prints the ``brudno match`` command it runs on stderr,
then one result line per match on stdout)::

    # score >= 50% against UCI_Elo 1500 at 10+0.1 over 200 games (about an hour with -c 2)
    python bench/match_stockfish.py --elo 1500 --tc 10+0.1 --games 200 --concurrency 2

    # the UCI_Elo at which Brudno scores 50%: a ladder of matches, the next setting where the
    # last match puts Brudno's rating until 50% is bracketed, then by interpolation; the
    # answer is the root of a line fitted through all of them (--known continues a ladder)
    python bench/match_stockfish.py --find-elo --elo 1900 --tc 10+0.1 --games 60 --steps 3

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
them, which is exact; ``--engine-tables`` also gives both engines those tables
(``SyzygyPath``), so neither walks into a drawn 3-4 piece ending that its evaluation
scores as won (a bishop of the wrong colour for the rook's pawn).  Stockfish's ``UCI_Elo``
accepts 1350..2850 (15.1).  Everything else is ``brudno match``'s defaults (time margin
50 ms).  Pass ``--pgn FILE`` to keep the games.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
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
            sys.executable, "-m", "brudno", "match",
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
        if args.engine_tables:
            if not TABLES.is_dir():
                raise SystemExit(f"--engine-tables: no tables at {TABLES}")
            command += ["--each-option", f"SyzygyPath={TABLES}"]
        if args.pgn:
            command += ["--pgn", args.pgn]
        return play_match(command, summary)


@dataclass(frozen=True, slots=True)
class Step:
    """One ladder match: Stockfish's setting and Brudno's measured difference from it."""

    sf_elo: int
    diff: float
    """Brudno minus Stockfish; +/-400 stands for a 100% / 0% score (unbounded)."""
    margin: float
    """Half the 95% interval of ``diff`` (infinite for an unbounded one)."""

    @classmethod
    def of(cls, sf_elo: int, pair: dict[str, Any]) -> Step:
        if pair["elo"] is None:  # 0% or 100%: jump by 400 toward the other side
            return cls(sf_elo, 400.0 if pair["score"] > 0.5 else -400.0, float("inf"))
        return cls(sf_elo, pair["elo"], (pair["elo_upper"] - pair["elo_lower"]) / 2)


def known_step(text: str) -> Step:
    """``--known 1900:-183.2:96.6`` (argparse type)."""
    try:
        elo, diff, margin = text.split(":")
        return Step(int(elo), float(diff), float(margin))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected ELO:DIFF:MARGIN, got {text!r}") from None


def next_setting(steps: list[Step]) -> float:
    """Where to play next: between the closest settings Brudno beat and lost to, by linear
    interpolation of the measured differences (a secant step); before the 50% point is
    bracketed, where the last match says Brudno's rating is.

    Stockfish's ``UCI_Elo`` is not a linear scale (measured here: +413 against 1500 but
    -183 against 1900), so jumping by the last difference alone oscillates around the
    50% point instead of closing in on it."""
    above = [s for s in steps if s.diff > 0]
    below = [s for s in steps if s.diff < 0]
    if not above or not below:
        return steps[-1].sf_elo + steps[-1].diff
    weaker = max(above, key=lambda s: s.sf_elo)
    stronger = min(below, key=lambda s: s.sf_elo)
    span = stronger.sf_elo - weaker.sf_elo
    return weaker.sf_elo + span * weaker.diff / (weaker.diff - stronger.diff)


def fifty_percent_point(steps: list[Step]) -> tuple[float, float]:
    """The setting at which the difference is zero, with half its 95% interval.

    A weighted least-squares line through (setting, difference) of every bounded match
    (weights 1/variance), its root, and the root's standard error by the delta method.  With
    one bounded match, or a fitted line that does not fall as Stockfish gets stronger, the
    answer is the match closest to 50%: its setting plus its difference."""
    bounded = [s for s in steps if math.isfinite(s.margin) and s.margin > 0]
    if len({s.sf_elo for s in bounded}) >= 2:
        weights = [(1.96 / s.margin) ** 2 for s in bounded]
        total = sum(weights)
        mean = sum(w * s.sf_elo for w, s in zip(weights, bounded, strict=True)) / total
        spread = sum(w * (s.sf_elo - mean) ** 2 for w, s in zip(weights, bounded, strict=True))
        slope = (
            sum(w * (s.sf_elo - mean) * s.diff for w, s in zip(weights, bounded, strict=True))
            / spread
        )
        level = sum(w * s.diff for w, s in zip(weights, bounded, strict=True)) / total
        if slope < 0:
            root = mean - level / slope
            variance = (1 / total) / slope**2 + level**2 * (1 / spread) / slope**4
            return root, 1.96 * math.sqrt(variance)
    closest = min(steps, key=lambda s: (abs(s.diff), s.margin))
    return closest.sf_elo + closest.diff, closest.margin


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
    parser.add_argument("--brudno", default=f"{shlex.quote(sys.executable)} -m brudno")
    parser.add_argument("--brudno-option", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--pgn", help="append the games to this file")
    parser.add_argument(
        "--engine-tables",
        action="store_true",
        help="give both engines the 3-4 piece Syzygy tables (SyzygyPath), as a bot operator "
        "would: the search then sees which simplifications win, not only the adjudicator",
    )
    parser.add_argument("--find-elo", action="store_true", help="ladder toward 50%%")
    parser.add_argument("--steps", type=int, default=3, help="matches in the ladder")
    parser.add_argument(
        "--known",
        action="append",
        default=[],
        metavar="ELO:DIFF:MARGIN",
        type=known_step,
        help="a ladder match already played (setting, Brudno's difference, half its 95%% "
        "interval): continue a ladder from it instead of replaying it",
    )
    args = parser.parse_args()
    # The match runs in the repository (for ``python -m brudno``): paths given relative to
    # where this script was started must not land there.
    args.openings = args.openings.resolve()
    if args.pgn:
        args.pgn = str(Path(args.pgn).resolve())

    sf_elo = max(SF_ELO_MIN, min(SF_ELO_MAX, args.elo))
    if not args.find_elo:
        print(result_line(args, sf_elo, run_match(args, sf_elo)), flush=True)
        return 0
    steps: list[Step] = list(args.known)
    if steps:
        sf_elo = max(SF_ELO_MIN, min(SF_ELO_MAX, round(next_setting(steps))))
    for number in range(len(steps) + 1, len(steps) + args.steps + 1):
        result = run_match(args, sf_elo)
        print(f"step {number}: " + result_line(args, sf_elo, result), flush=True)
        steps.append(Step.of(sf_elo, result["pairs"][0]))
        next_elo = max(SF_ELO_MIN, min(SF_ELO_MAX, round(next_setting(steps))))
        if any(step.sf_elo == next_elo for step in steps):
            break
        sf_elo = next_elo
    estimate = fifty_percent_point(steps) if steps else None
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


def play_match(command: list[str], summary: Path) -> dict[str, Any]:
    """Run a ``brudno match`` command line (``python -m brudno match ...``) that writes its
    ``--json`` to ``summary``: echo it, pass its report on to stderr, return the JSON."""
    print("$ " + shlex.join(["brudno", *command[3:]]), file=sys.stderr, flush=True)
    done = subprocess.run(command, cwd=REPO, stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"brudno match failed ({done.returncode})")
    sys.stderr.write(done.stdout)
    result: dict[str, Any] = json.loads(summary.read_text())
    return result


if __name__ == "__main__":
    raise SystemExit(main())
