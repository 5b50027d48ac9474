"""Jobs: checking a job's payload, and thinning what its session says into replies."""

from __future__ import annotations

import pytest

from protocol.transports.mqtt.jobs import JobError, ReplyCollector, parse_job


def test_a_good_job_is_split_into_setup_and_go() -> None:
    job = parse_job(
        b"setoption name MultiPV value 2\r\n\nucinewgame\nisready\n"
        b"setoption name UCI_Variant value chess\n"
        b"position startpos moves e2e4\ngo nodes 500\n\n",
        "chess",
    )
    assert job.setup == ("setoption name MultiPV value 2", "position startpos moves e2e4")
    assert job.go == "go nodes 500"
    assert job.limits.nodes == 500
    assert job.new_game
    assert not parse_job(b"go depth 1", "chess").new_game
    assert parse_job(b"go depth 9", "tictactoe").limits.depth == 9
    assert parse_job(b"go wtime 1000 btime 1000", "chess").limits.wtime == 1000


@pytest.mark.parametrize(
    ("payload", "game", "what"),
    [
        (b"go depth 3", "go", "unknown game"),
        (b"\xff\xfe garbage", "chess", "not UTF-8"),
        (b"hello world\ngo depth 1", "chess", "unknown command"),
        (b"position startpos", "chess", "no go command"),
        (b"", "chess", "no go command"),
        (b"go infinite", "chess", "waits for a stop"),
        (b"go ponder movetime 100", "chess", "waits for a stop"),
        (b"go", "chess", "needs a limit"),
        (b"go searchmoves e2e4", "chess", "needs a limit"),
        (b"go depth 2\nposition startpos", "chess", "last command"),
        (b"go depth 2\ngo depth 3", "chess", "last command"),
        (b"go depth x", "chess", "x"),
        (b"stop\ngo depth 1", "chess", "not allowed"),
        (b"quit", "chess", "not allowed"),
        (b"uci\ngo depth 1", "chess", "not allowed"),
        (b"perft 3\ngo depth 1", "chess", "not allowed"),
        (b"setoption name UCI_Variant value tictactoe\ngo depth 1", "chess", "from the topic"),
        (b"x" * 70_000, "chess", "too long"),
    ],
)
def test_bad_jobs_are_refused_with_a_reason(payload: bytes, game: str, what: str) -> None:
    with pytest.raises(JobError) as caught:
        parse_job(payload, game)
    line = caught.value.line()
    assert line.startswith("info string error: ")
    assert what in line
    assert "\n" not in line and line.isprintable()


def test_progress_is_thinned_to_the_last_line_per_depth_and_multipv() -> None:
    sink = ReplyCollector()
    stats = "nodes 10 nps 100 hashfull 0 time 1"
    sink.send(f"info depth 1 seldepth 1 multipv 1 score cp 5 {stats} pv e2e4", droppable=True)
    sink.send("info depth 2 currmove e2e4 currmovenumber 1", droppable=True)
    sink.send(f"info depth 2 seldepth 2 {stats}", droppable=True)
    assert sink.take_ready() == []  # depth 1 still open: a better line may come
    sink.send(
        f"info depth 2 seldepth 2 multipv 1 score cp 9 lowerbound {stats} pv d2d4", droppable=True
    )
    assert sink.take_ready() == [f"info depth 1 seldepth 1 multipv 1 score cp 5 {stats} pv e2e4"]
    assert sink.changed.is_set()
    sink.send(f"info depth 2 seldepth 3 multipv 2 score cp 1 {stats} pv e2e4", droppable=True)
    sink.send(f"info depth 2 seldepth 3 multipv 1 score cp 7 {stats} pv d2d4 d7d5", droppable=True)
    sink.send("info string error: illegal searchmove ignored (zz)")
    assert sink.errors == ["info string error: illegal searchmove ignored (zz)"]
    sink.send(f"info depth 3 seldepth 3 multipv 1 score cp 8 {stats} pv e2e4 e7e5", droppable=True)
    sink.send("bestmove e2e4 ponder e7e5")
    # Whatever was not published yet goes out with the bestmove, in order.
    assert sink.take_ready() == []
    assert sink.final == [
        f"info depth 2 seldepth 3 multipv 1 score cp 7 {stats} pv d2d4 d7d5",
        f"info depth 2 seldepth 3 multipv 2 score cp 1 {stats} pv e2e4",
        "info string error: illegal searchmove ignored (zz)",
        f"info depth 3 seldepth 3 multipv 1 score cp 8 {stats} pv e2e4 e7e5",
        "bestmove e2e4 ponder e7e5",
    ]
