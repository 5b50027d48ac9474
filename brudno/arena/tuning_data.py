"""Data for Texel tuning: quiet chess positions labelled by a reference engine's evaluation.

This is the arena's side of ``brudno tune`` (:mod:`brudno.commands.tune` is the command): it
runs another engine (Stockfish) over positions, as the EPD suites do, and the fit step reads
the result back.  :func:`generate` samples opening positions deterministically (a seeded
shuffle of the opening files; by default every ``*.pgn`` / ``*.epd`` in ``chess/openings`` of
the shared data directory, found as :func:`find_data_dir` says), extends each by 0..P plies of
seeded random *quiet* play (no captures, promotions or checks, so the openings spread into
middlegames without turning into blunders), keeps only quiet positions (see
:func:`is_quiet`), and labels each by the engine at ``go depth D`` (fresh hash per position,
one thread: the labels are reproducible), converted to the side to move's win probability
``1 / (1 + 10^(-cp/400))`` (mates: 1 or 0).  Each line is ``FEN ; target``; the header
comments record the command that made the file.  :func:`read_data` turns such a file into
the samples :mod:`engine.tune` fits.

Positions from real play (:func:`generate` with ``played``): instead of openings extended at
random, every quiet position along the games of PGN files (the ``--pgn`` of ``brudno match``:
self-play at varied openings), each position once, a seeded sample of them.  Such positions
are what the evaluation meets in its own games, and each comes with the game's result, which
can be blended into the label: target = ``(1 - w)·engine + w·result`` (``w = 1`` labels by
results alone and needs no labelling engine).  With ``game_evals`` the engine's part is the
score the game itself recorded for the position (``[%eval]`` comments, which ``brudno tune
games`` writes for every position Stockfish moved from): the label costs no second search,
and positions without such a score are left out.
"""

from __future__ import annotations

import math
import os
import random
import shlex
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine
import chess.pgn

from brudno.arena.openings import FEN_FIELDS
from engine.tune import Sample
from games.chess_game import ChessGame

__all__ = [
    "DATA_DIR_ENV",
    "DEFAULT_STOCKFISH",
    "OPENINGS_SUBDIR",
    "DataConfig",
    "TuneDataError",
    "add_quiet_plies",
    "find_data_dir",
    "generate",
    "is_quiet",
    "label_to_target",
    "opening_entries",
    "opening_files",
    "read_data",
    "reference_engine",
    "start_board",
]

DATA_DIR_ENV = "BRUDNO_DATA_DIR"
"""Environment variable naming the shared data directory (the one holding ``chess/``)."""
OPENINGS_SUBDIR = Path("chess") / "openings"
"""Where the opening files lie inside the shared data directory."""
_SOURCE_ROOT = Path(__file__).resolve().parents[2]
"""The repository checkout when running from source (an editable install); after a normal
install this is ``site-packages``, which :func:`find_data_dir` must never search."""
DEFAULT_STOCKFISH = "/usr/games/stockfish"
"""Where Debian installs Stockfish (``apt-get install stockfish``), the labelling engine."""
_VALUE = {
    chess.PAWN: 1,
    chess.KNIGHT: 3,
    chess.BISHOP: 3,
    chess.ROOK: 5,
    chess.QUEEN: 9,
    chess.KING: 100,
}


_WHITE_SCORE = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
"""A finished game's result as White's score (an unfinished game, ``*``, is not used)."""


class TuneDataError(ValueError):
    """A data file that cannot be read, or a labelling engine that cannot be run."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A position to label, the side to move's score in the game it was played in (``None``
    for a position from an opening file: no game was played from it), and the game's own
    evaluation of it as the side to move's win probability (``None``: the game had none)."""

    fen: str
    result: float | None = None
    evaluation: float | None = None


def is_quiet(board: chess.Board) -> bool:
    """Texel's filter: not in check, not over, and no capture or promotion that wins material
    by a simple test (the victim is worth more than the attacker, or it is undefended).

    A static evaluation cannot see pending tactics, so positions with one only teach the
    tuner noise; this cheap test removes most of them without a quiescence search.
    """
    if board.is_check() or board.is_game_over():
        return False
    enemy = not board.turn
    for move in board.generate_legal_captures():
        if move.promotion is not None:
            return False
        victim = board.piece_type_at(move.to_square)
        if victim is None:  # en passant
            victim = chess.PAWN
        attacker = board.piece_type_at(move.from_square)
        assert attacker is not None
        if _VALUE[victim] > _VALUE[attacker] or not board.is_attacked_by(enemy, move.to_square):
            return False
    promotions = board.generate_legal_moves(board.pawns, chess.BB_RANK_1 | chess.BB_RANK_8)
    return next(iter(promotions), None) is None


def label_to_target(score: chess.engine.PovScore) -> float:
    """A side-to-move score as a win probability: logistic in centipawns, mates 1 or 0."""
    relative = score.relative
    mate = relative.mate()
    if mate is not None:
        return 1.0 if mate > 0 else 0.0
    cp = relative.score()
    assert cp is not None
    return 1.0 / (1.0 + math.pow(10.0, -cp / 400.0))


def _quiet_moves(board: chess.Board) -> list[chess.Move]:
    """The legal moves that neither capture, promote nor give check."""
    return [
        move
        for move in board.legal_moves
        if move.promotion is None and not board.is_capture(move) and not board.gives_check(move)
    ]


def add_quiet_plies(board: chess.Board, rng: random.Random, plies: int) -> None:
    """Play 0..``plies`` (seeded) random quiet moves on ``board``: openings spread into
    middlegames without turning into blunders; stops early where no quiet move is left."""
    for _ in range(rng.randint(0, plies)):
        moves = _quiet_moves(board)
        if not moves:
            return
        board.push(rng.choice(moves))


def find_data_dir(
    explicit: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    source_root: Path | None = _SOURCE_ROOT,
) -> Path:
    """The shared data directory (the one holding ``chess/openings``).

    Where the package's files lie says nothing about where the data is once it is installed
    (``site-packages/../shared/data`` is no place at all), so the data is looked for where
    the user works: ``explicit`` (``--data-dir``) or else ``$BRUDNO_DATA_DIR`` when given,
    and only there (a named directory that is wrong is an error, not a reason to guess);
    otherwise ``../shared/data`` from the current directory (the layout beside a checkout),
    then beside ``source_root`` when that is a checkout (it holds ``pyproject.toml``), which
    finds the data when running from source anywhere.  TuneDataError says where it looked.
    """
    environ = os.environ if environ is None else environ
    named = explicit if explicit is not None else environ.get(DATA_DIR_ENV) or None
    if named is not None:
        where = Path(named).expanduser()
        origin = "--data-dir" if explicit is not None else f"${DATA_DIR_ENV}"
        if not (where / OPENINGS_SUBDIR).is_dir():
            raise TuneDataError(f"{origin} {where}: no {OPENINGS_SUBDIR} directory in it")
        return where
    candidates = [(Path.cwd() if cwd is None else cwd) / ".." / "shared" / "data"]
    if source_root is not None and (source_root / "pyproject.toml").is_file():
        candidates.append(source_root / ".." / "shared" / "data")
    for candidate in candidates:
        if (candidate / OPENINGS_SUBDIR).is_dir():
            return candidate.resolve()
    looked = ", ".join(str(c.resolve() / OPENINGS_SUBDIR) for c in candidates)
    raise TuneDataError(
        f"no shared data found (looked for {looked}); give --data-dir DIR (the directory "
        f"holding {OPENINGS_SUBDIR}), set {DATA_DIR_ENV}, or name opening files with --games"
    )


def opening_files(games: Sequence[Path] | None, data_dir: Path | None) -> list[Path]:
    if games:
        return list(games)
    openings = find_data_dir(data_dir) / OPENINGS_SUBDIR
    files = sorted(path for path in openings.iterdir() if path.suffix.lower() in (".pgn", ".epd"))
    if not files:
        raise TuneDataError(f"no .pgn or .epd files in {openings}")
    return files


def opening_entries(path: Path) -> list[int] | list[str]:
    """A PGN file's game offsets (found without parsing moves) or an EPD file's lines."""
    try:
        if path.suffix.lower() == ".pgn":
            offsets: list[int] = []
            with path.open(encoding="utf-8-sig") as handle:
                while True:
                    offset = handle.tell()
                    if not chess.pgn.skip_game(handle):
                        return offsets
                    offsets.append(offset)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TuneDataError(f"cannot read openings file {path}: {exc}") from None
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] not in "#%"]


def start_board(path: Path, entry: int | str) -> chess.Board | None:
    """The position at the end of an opening entry, or None for one that is unusable (bad,
    or a game already over): a data set skips it rather than stopping."""
    try:
        if isinstance(entry, int):
            with path.open(encoding="utf-8-sig") as handle:
                handle.seek(entry)
                game = chess.pgn.read_game(handle)
            if game is None or game.errors:
                return None
            board = game.end().board()
        else:
            parts = entry.split()
            if len(parts) >= FEN_FIELDS and parts[4].isdigit() and parts[5].rstrip(";").isdigit():
                board = chess.Board(" ".join([*parts[:5], parts[5].rstrip(";")]))
            else:
                board = chess.Board.from_epd(entry)[0]
    except (ValueError, OSError):
        return None
    if not board.is_valid() or board.is_game_over():
        return None
    return board


def _candidates(files: Sequence[Path], positions: int, plies: int, seed: int) -> list[Candidate]:
    """Quiet FENs, unique, in a deterministic order: each file's entries in a seeded shuffle,
    extended by seeded quiet plies, until the file has given its share (twice what is
    wanted, because the quiet filter and duplicates drop some) or runs out."""
    rng = random.Random(seed)
    per_file = -(-positions * 2 // len(files))
    fens: list[str] = []
    seen: set[str] = set()
    for path in files:
        entries = opening_entries(path)
        order = list(range(len(entries)))
        rng.shuffle(order)
        taken = 0
        for index in order:
            if taken == per_file:
                break
            board = start_board(path, entries[index])
            if board is None:
                continue
            taken += 1
            add_quiet_plies(board, rng, plies)
            epd = board.epd()
            if epd in seen or not is_quiet(board):
                continue
            seen.add(epd)
            fens.append(board.fen())
    if not fens:
        raise TuneDataError("the opening files gave no usable quiet positions")
    rng.shuffle(fens)
    return [Candidate(fen) for fen in fens[:positions]]


def _recorded_target(node: chess.pgn.GameNode, turn: chess.Color) -> float | None:
    """The ``[%eval]`` a game recorded where ``node``'s position stands, as the side to
    move's win probability (``turn`` moves there), or None when it recorded none."""
    score = node.eval()
    return None if score is None else label_to_target(chess.engine.PovScore(score.pov(turn), turn))


def _played_positions(path: Path) -> Iterator[Candidate]:
    """Every quiet position after a move of every finished game in a PGN file, with the
    game's result and its recorded evaluation of the position (if any)."""
    try:
        with path.open(encoding="utf-8-sig") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                white_score = _WHITE_SCORE.get(game.headers.get("Result", "*"))
                if white_score is None or game.errors:
                    continue
                board = game.board()
                for node in game.mainline():
                    board.push(node.move)
                    if is_quiet(board):
                        score = white_score if board.turn == chess.WHITE else 1.0 - white_score
                        evaluation = _recorded_target(node, board.turn)
                        yield Candidate(board.fen(), score, evaluation)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise TuneDataError(f"cannot read games file {path}: {exc}") from None


def _played_candidates(
    files: Sequence[Path], positions: int, seed: int, *, evaluated: bool = False
) -> list[Candidate]:
    """A seeded sample of the quiet positions of played games, each position once (the first
    game it occurred in gives its result: openings repeat, and one game's say is enough);
    ``evaluated``: only positions the game recorded an evaluation of."""
    seen: set[str] = set()
    found: list[Candidate] = []
    for path in files:
        for candidate in _played_positions(path):
            if evaluated and candidate.evaluation is None:
                continue
            epd = candidate.fen.rsplit(" ", 2)[0]
            if epd not in seen:
                seen.add(epd)
                found.append(candidate)
    if not found:
        raise TuneDataError("the games gave no usable quiet positions")
    random.Random(seed).shuffle(found)
    return found[:positions]


@dataclass(frozen=True, slots=True)
class DataConfig:
    """What ``brudno tune data`` labels: how many positions, at which Stockfish depth, from
    which games (``played`` PGN files, else openings of ``games`` or the shared data in
    ``data_dir`` extended by up to ``plies`` random quiet plies), with which seed, blending
    ``result_weight`` of the game's result into the label, the engine's part taken from the
    games' recorded evaluations when ``game_evals``; ``command`` is recorded in the file's
    header."""

    positions: int
    depth: int
    plies: int = 8
    seed: int = 1
    games: Sequence[Path] | None = None
    played: Sequence[Path] | None = None
    result_weight: float = 0.0
    game_evals: bool = False
    data_dir: Path | None = None
    stockfish: str = DEFAULT_STOCKFISH
    command: str = ""


def generate(out: Path, config: DataConfig) -> int:
    """Write a labelled data set to ``out``; return how many positions it holds.

    The positions are those along the games of the PGN files ``config.played`` when given,
    else openings extended by random quiet plies: the openings of ``games``, else those of
    the shared data (``data_dir`` or as :func:`find_data_dir` finds it).  ``result_weight``
    (for played positions) blends the game's result into the engine's label; at 1 no engine
    runs, nor with ``game_evals`` (the games' ``[%eval]`` comments are the engine's label).
    """
    positions, plies, seed, played = config.positions, config.plies, config.seed, config.played
    result_weight, stockfish, command = config.result_weight, config.stockfish, config.command
    if not 0.0 <= result_weight <= 1.0:
        raise TuneDataError(f"result weight {result_weight} outside [0, 1]")
    if config.game_evals and not played:
        raise TuneDataError("game evaluations need played games (--played)")
    if played:
        candidates = _played_candidates(
            played, positions, seed, evaluated=config.game_evals and result_weight < 1.0
        )
    else:
        candidates = _candidates(
            opening_files(config.games, config.data_dir), positions, plies, seed
        )
        result_weight = 0.0
    header = [
        "# Brudno Texel tuning data: FEN ; side-to-move win probability",
        f"# made by: {command}" if command else "# made by: brudno tune data",
    ]
    if result_weight == 1.0:
        lines = [*header, "# labels: the game's result from the side to move's view"]
        lines += [f"{c.fen} ; {c.result:.4f}" for c in candidates]
    elif config.game_evals:
        lines = [*header, _recorded_labels_line(result_weight)]
        lines += [f"{c.fen} ; {_blend(c, result_weight):.4f}" for c in candidates]
    else:
        lines = header + _engine_labels(candidates, config.depth, result_weight, stockfish)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(candidates)


def _blend(candidate: Candidate, result_weight: float) -> float:
    """A played candidate's label: its recorded evaluation blended with its game's result."""
    assert candidate.evaluation is not None and candidate.result is not None
    return (1.0 - result_weight) * candidate.evaluation + result_weight * candidate.result


def _recorded_labels_line(result_weight: float) -> str:
    line = (
        "# labels: the games' recorded evaluations ([%eval], the position's own search), "
        "target = 1/(1+10^(-cp/400)), mate = 1 or 0"
    )
    if result_weight:
        line += f", blended {1 - result_weight:g}·engine + {result_weight:g}·result"
    return line


@contextmanager
def reference_engine(stockfish: str) -> Iterator[chess.engine.SimpleEngine]:
    """The reference engine (Stockfish, or the command ``stockfish`` names) with one thread
    and a 16 MiB hash, so that what it labels or plays can be made again; a failure to start
    or while in use becomes a TuneDataError, and the engine is quit on the way out."""
    try:
        engine = chess.engine.SimpleEngine.popen_uci(shlex.split(stockfish))
    except (OSError, chess.engine.EngineError) as exc:
        raise TuneDataError(f"cannot run {stockfish!r}: {exc}") from None
    try:
        engine.configure({"Threads": 1, "Hash": 16})
        yield engine
    except chess.engine.EngineError as exc:
        raise TuneDataError(f"{stockfish!r} failed: {exc}") from None
    finally:
        engine.quit()


def _engine_labels(
    candidates: Sequence[Candidate], depth: int, result_weight: float, stockfish: str
) -> list[str]:
    """The header line saying how the labels were made, then ``FEN ; target`` lines."""
    with reference_engine(stockfish) as engine:
        blend = f", blended {1 - result_weight:g}·engine + {result_weight:g}·result"
        lines = [
            f"# labels: {engine.id.get('name', stockfish)} go depth {depth}, Threads=1, "
            "fresh hash per position, target = 1/(1+10^(-cp/400)), mate = 1 or 0"
            + (blend if result_weight else "")
        ]
        for number, candidate in enumerate(candidates):
            board = chess.Board(candidate.fen)
            info = engine.analyse(board, chess.engine.Limit(depth=depth), game=number)
            score = info.get("score")
            if score is None:
                raise TuneDataError(f"{stockfish!r} gave no score for {candidate.fen}")
            target = label_to_target(score)
            if result_weight and candidate.result is not None:
                target = (1.0 - result_weight) * target + result_weight * candidate.result
            lines.append(f"{candidate.fen} ; {target:.4f}")
    return lines


def read_data(path: Path) -> tuple[list[Sample], int]:
    """Samples (chess features, target) from a ``FEN ; target`` file, and how many lines were
    skipped as not quiet (a hand-made file need not have been filtered)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TuneDataError(f"cannot read {path}: {exc}") from None
    samples: list[Sample] = []
    skipped = 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fen, sep, value = line.rpartition(";")
        try:
            if not sep:
                raise ValueError("expected 'FEN ; target'")
            target = float(value)
            if not 0.0 <= target <= 1.0:
                raise ValueError(f"target {target} outside [0, 1]")
            board = chess.Board(fen.strip())
        except ValueError as exc:
            raise TuneDataError(f"{path}:{number}: {exc}") from None
        if not is_quiet(board):
            skipped += 1
            continue
        samples.append((dict(ChessGame(board).features()), target))
    if not samples:
        raise TuneDataError(f"{path}: no quiet positions")
    return samples, skipped
