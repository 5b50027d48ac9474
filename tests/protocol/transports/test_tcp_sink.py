"""TcpSink: bounded output that drops search ``info`` first and never a ``bestmove``."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from protocol.transports.tcp.sink import TcpSink


class StuckTransport:
    """A transport whose peer reads nothing until told to."""

    def __init__(self) -> None:
        self.size = 0
        self.written = bytearray()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        del high, low

    def get_write_buffer_size(self) -> int:
        return self.size

    def is_closing(self) -> bool:
        return False

    def write(self, data: bytes) -> None:
        self.written += data
        self.size += len(data)


class StuckWriter:
    def __init__(self) -> None:
        self.transport = StuckTransport()
        self.reading = asyncio.Event()

    @property
    def written(self) -> bytearray:
        return self.transport.written

    def write(self, data: bytes) -> None:
        self.transport.write(data)

    async def drain(self) -> None:
        await self.reading.wait()
        self.transport.size = 0


def _sink(writer: StuckWriter, lost: list[str], high: int = 200) -> TcpSink:
    return TcpSink(cast(Any, writer), high_water=high, write_timeout_s=3600.0, on_lost=lost.append)


async def test_infos_are_dropped_but_bestmove_is_kept() -> None:
    writer = StuckWriter()
    lost: list[str] = []
    sink = _sink(writer, lost)
    running = asyncio.create_task(sink.run())
    for depth in range(1, 41):
        sink.send(f"info depth {depth} score cp 10 pv e2e4", droppable=True)
        await asyncio.sleep(0)
    assert sink.dropped > 0
    assert sink.buffered <= 200
    sink.send("bestmove e2e4 ponder e7e5")
    sink.send("readyok")
    assert sink.peak <= 200 + len("bestmove e2e4 ponder e7e5\nreadyok\n")
    assert not sink.writable()  # the connection stops reading this client for now
    writer.reading.set()  # the client starts reading again
    sink.close()
    await running
    assert sink.writable()
    text = writer.written.decode()
    assert text.endswith("bestmove e2e4 ponder e7e5\nreadyok\n")
    delivered = [line for line in text.splitlines() if line.startswith("info")]
    # The first six (33 bytes each) fit under the 200-byte mark; the rest were dropped.
    assert delivered == [f"info depth {d} score cp 10 pv e2e4" for d in range(1, 7)]
    assert len(delivered) + sink.dropped == 40
    assert lost == []


async def test_queued_infos_make_room_for_a_bestmove() -> None:
    writer = StuckWriter()
    sink = _sink(writer, [], high=100)
    sink.send("x" * 120)  # over the mark: the writer must wait for the client
    sink.send("readyok")  # so this one queues
    writer.transport.size = 0  # the client read, but the writer has not looked yet
    for depth in range(1, 3):  # queued behind "readyok", in order
        sink.send(f"info depth {depth}", droppable=True)
    writer.transport.size = 90  # the client stalls again
    sink.send("bestmove a2a3")
    writer.reading.set()
    sink.close()
    await sink.run()
    assert writer.written.decode().splitlines()[1:] == ["readyok", "bestmove a2a3"]
    assert sink.dropped == 2


async def test_replies_are_never_dropped_even_past_the_mark() -> None:
    writer = StuckWriter()
    sink = _sink(writer, [], high=50)
    running = asyncio.create_task(sink.run())
    for _ in range(20):
        sink.send("readyok")
    assert sink.dropped == 0
    writer.reading.set()
    sink.close()
    await running
    assert writer.written.decode().splitlines() == ["readyok"] * 20


async def test_a_reader_that_never_reads_is_cut_off_after_the_write_timeout() -> None:
    writer = StuckWriter()
    lost: list[str] = []
    sink = TcpSink(cast(Any, writer), high_water=100, write_timeout_s=0.05, on_lost=lost.append)
    running = asyncio.create_task(sink.run())
    sink.send("info string " + "x" * 200, droppable=False)
    await running
    assert sink.lost is not None and lost == [sink.lost]
    sink.send("readyok")  # after the loss, output goes nowhere and nothing accumulates
    assert sink.buffered == writer.transport.size
