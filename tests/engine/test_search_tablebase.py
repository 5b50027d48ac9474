"""The production search with Syzygy tables (a chess game with ``use_tablebases``): the root
plays what the tables say, WDL probes inside the tree score wins below mates, the fifty-move
rule option, and a search without tables visits exactly the nodes it did before.

``endgame.epd`` (../shared/data/syzygy) holds 200 positions of 3 and 4 pieces with their WDL
and DTZ values; a move is right when the result it keeps under the fifty-move rule (judged
here with python-chess's own probes) is the best the position offers.
"""

from __future__ import annotations

from typing import Any

import chess
import chess.syzygy
import pytest

from engine.info import SearchInfo, SearchResult
from engine.limits import Limits
from engine.score import TB_BOUND, TB_WIN, Cp, Mate, from_tt
from engine.search import Searcher
from games.chess_game import ChessGame, from_fen
from games.chess_game.tablebase import SyzygySettings, find_tables
from tests.support.paths import DATA

SYZYGY = DATA / "syzygy"
REGULAR = SYZYGY / "regular"

ROOK_TRADE = "8/8/8/4k3/8/2r5/2R1P3/4K3 w - - 0 1"
"""Five pieces (beyond the tables); Rxc3 captures into KRPvK, a win the tables know."""


@pytest.fixture(scope="module")
def settings() -> SyzygySettings:
    return SyzygySettings.from_found(
        find_tables([REGULAR]), probe_depth=1, probe_limit=7, rule50=True
    )


@pytest.fixture(scope="module")
def tables() -> chess.syzygy.Tablebase:
    return chess.syzygy.open_tablebase(str(REGULAR))


def search(
    game: ChessGame | CursedChess, depth: int, *, multipv: int = 1, **limits: int
) -> tuple[SearchResult, list[SearchInfo]]:
    infos: list[SearchInfo] = []
    result = Searcher(1).search(
        game, Limits(depth=depth, **limits), on_info=infos.append, multipv=multipv
    )
    return result, infos


def result_after(tables: chess.syzygy.Tablebase, board: chess.Board, move: chess.Move) -> int:
    """What ``move`` keeps for the side playing it, Syzygy's scale under the fifty-move rule
    (2 win, 1 win the rule spoils, 0 draw, ...), from python-chess's probes alone."""
    board = board.copy()
    clock = board.halfmove_clock
    zeroing = board.is_zeroing(move)
    board.push(move)
    if board.is_checkmate():
        return 2
    if zeroing:
        return -tables.probe_wdl(board)
    dtz = tables.probe_dtz(board)  # plies to zeroing for the side now to move
    if dtz == 0:
        return 0
    in_time = abs(dtz) + clock + 1 <= 100
    return (-2 if in_time else -1) if dtz > 0 else (2 if in_time else 1)


def test_every_endgame_epd_position_gets_a_move_that_keeps_its_result(
    settings: SyzygySettings, tables: chess.syzygy.Tablebase
) -> None:
    lines = (SYZYGY / "endgame.epd").read_text(encoding="utf-8").splitlines()
    wrong = []
    tally = {2: 0, 0: 0, -2: 0}
    searcher = Searcher(1)
    for line in lines:
        fields = line.split(maxsplit=4)
        fen = " ".join(fields[:4]) + " 0 1"
        ops = dict(op.strip().split(" ", 1) for op in fields[4].split(";") if op.strip())
        board = chess.Board(fen)
        game = from_fen(fen)
        game.use_tablebases(settings)
        result = searcher.search(game, Limits(depth=2))
        assert result.best is not None
        got = result_after(tables, board, chess.Move.from_uci(result.best))
        if got != int(ops["wdl"]):
            wrong.append(f"{fen}: {result.best} keeps {got}, the position {ops['wdl']}")
        else:
            tally[got] += 1
    print(
        f"endgame.epd: {len(lines)} positions, {len(lines) - len(wrong)} correct moves "
        f"({tally[2]} wins kept, {tally[0]} draws held, {tally[-2]} losses)"
    )
    assert not wrong, wrong
    assert len(lines) == 200


def test_mates_are_still_found_among_the_moves_the_tables_allow(
    settings: SyzygySettings,
) -> None:
    game = from_fen("k7/8/1K6/8/8/8/8/6Q1 w - - 0 1")
    game.use_tablebases(settings)
    result, infos = search(game, 3)
    assert (result.best, result.score) == ("g1g8", Mate(1))
    assert infos[-1].tbhits == len(game.legal_moves())  # the root's moves were ranked
    result, _ = search(game, 5, mate=1)  # a proof search too
    assert (result.best, result.score) == ("g1g8", Mate(1))


def test_the_root_is_ranked_only_with_time_for_it(settings: SyzygySettings) -> None:
    """Ranking a root by DTZ may take a tenth of a second in pure Python: not in the last
    moments on the clock (the budget, not the clock, decides: no wall-clock dependence)."""
    game = from_fen("k7/8/1K6/8/8/8/8/6Q1 w - - 0 1")
    game.use_tablebases(settings)
    _, infos = search(game, 1, movetime=1000)
    assert infos[-1].tbhits == 25
    _, infos = search(game, 1, movetime=100)
    assert infos[-1].tbhits == 0


def test_a_capture_into_the_tables_is_scored_as_a_tablebase_win(
    settings: SyzygySettings,
) -> None:
    game = from_fen(ROOK_TRADE)
    game.use_tablebases(settings)
    result, infos = search(game, 3)
    assert result.best == "c2c3"
    assert result.score == Cp(TB_WIN - 1)  # the win, one ply away: below mates, reported cp
    assert infos[-1].tbhits > 0
    plain, plain_infos = search(from_fen(ROOK_TRADE), 3)
    assert plain.best == "c2c3" and isinstance(plain.score, Cp)
    assert plain.score.value < TB_BOUND and plain_infos[-1].tbhits == 0


def test_tablebase_results_are_stored_node_relative(settings: SyzygySettings) -> None:
    """Found one ply from the root, the win after Rxc3 is stored as a loss right there for
    the side to move (``-TB_WIN``), not at the root's distance: a transposition at another
    ply, or the next move's search, reads the distance from where it stands."""
    game = from_fen(ROOK_TRADE)
    game.use_tablebases(settings)
    searcher = Searcher(1)
    result = searcher.search(game, Limits(depth=3))
    assert result.score == Cp(TB_WIN - 1)
    game.push(game.parse_move("c2c3"))
    entry = searcher.tt.probe(game.key())
    assert entry is not None
    assert entry.score == -TB_WIN
    assert from_tt(entry.score, 3) == 3 - TB_WIN  # as if reached three plies deep


class CursedChess:
    """Every win and loss the tables report is one the fifty-move rule spoils (WDL ±1).

    A wrapper around the game, not a subclass: mypyc compiles :class:`ChessGame`, and an
    interpreted class cannot inherit from a compiled one."""

    def __init__(self, game: ChessGame) -> None:
        self._game = game

    def __getattr__(self, name: str) -> Any:
        return getattr(self._game, name)

    def tb_wdl(self) -> int | None:
        wdl = self._game.tb_wdl()
        return None if wdl is None else (wdl + 1) // 2 if wdl > 0 else -((1 - wdl) // 2)


@pytest.mark.parametrize("rule50", [True, False])
def test_syzygy50moverule_decides_whether_a_cursed_win_is_a_win(
    settings: SyzygySettings, rule50: bool
) -> None:
    game = CursedChess(ChessGame(chess.Board(ROOK_TRADE)))
    game.use_tablebases(
        SyzygySettings.from_found(
            find_tables([REGULAR]), probe_depth=1, probe_limit=7, rule50=rule50
        )
    )
    result, infos = search(game, 3)
    assert infos[-1].tbhits > 0
    assert isinstance(result.score, Cp)
    if rule50:
        assert result.score.value < TB_BOUND  # a draw by the rule: Rxc3 wins nothing
    else:
        assert result.score == Cp(TB_WIN - 1)


def test_the_probe_limit_and_depth_switch_probes_off(settings: SyzygySettings) -> None:
    game = from_fen(ROOK_TRADE)
    for probe_limit, probe_depth in ((3, 1), (0, 1), (4, 100)):
        game.use_tablebases(
            SyzygySettings(
                settings.directories,
                settings.pieces,
                settings.stamp,
                probe_depth=probe_depth,
                probe_limit=probe_limit,
            )
        )
        _, infos = search(game, 3)
        assert infos[-1].tbhits == 0, (probe_limit, probe_depth)


def test_multipv_and_searchmoves_search_every_root_move(settings: SyzygySettings) -> None:
    game = from_fen("8/8/R2k4/8/8/K7/8/4r3 b - - 0 1")  # KRvKR, drawn
    game.use_tablebases(settings)
    result, _ = search(game, 2, multipv=3)
    assert len(result.lines) == 3


def test_a_search_without_tables_is_unchanged(settings: SyzygySettings) -> None:
    """The same nodes with tables in use where none can be probed (more pieces than any
    table): the capability costs the tree nothing."""
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
    plain, _ = search(from_fen(fen), 4)
    game = from_fen(fen)
    game.use_tablebases(settings)
    probed, infos = search(game, 4)
    assert (probed.best, probed.score, probed.nodes) == (plain.best, plain.score, plain.nodes)
    assert infos[-1].tbhits == 0
