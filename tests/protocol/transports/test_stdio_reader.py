"""The stdin reader thread (``protocol.transports.stdio._read_lines``) on a real pipe: lines
come out whole and in order however the bytes are chunked, a multi-megabyte line is read (once, not
re-scanned per chunk) and handed on as a prefix the session still refuses as too long, and
the ``brudno`` command answers such a line with ``line too long`` and carries on."""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
from collections.abc import Iterable

from protocol.transports.stdio import READ_CHUNK, _read_lines
from protocol.uci.session import MAX_LINE_LENGTH

DEFAULT_KEPT = 4 * (MAX_LINE_LENGTH + 1)
"""What the reader keeps of an overlong line by default (UTF-8's four bytes per character)."""


async def read_all(pieces: Iterable[bytes], **options: int) -> list[str]:
    """Feed ``pieces`` (one ``write`` each) into a pipe read by ``_read_lines``; every line
    it hands over, up to end of input."""
    read_fd, write_fd = os.pipe()
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    slots = threading.Semaphore(8)  # small: the reader must also cope with backpressure

    def write() -> None:
        with os.fdopen(write_fd, "wb", buffering=0) as pipe:
            for piece in pieces:
                pipe.write(piece)

    writer = threading.Thread(target=write, daemon=True)
    reader = threading.Thread(
        target=_read_lines, args=(read_fd, loop, queue, slots), kwargs=options, daemon=True
    )
    writer.start()
    reader.start()
    lines: list[str] = []
    try:
        while (line := await queue.get()) is not None:
            slots.release()
            lines.append(line)
    finally:
        await asyncio.to_thread(reader.join)
        await asyncio.to_thread(writer.join)
        os.close(read_fd)
    return lines


async def test_lines_split_across_writes_come_out_whole() -> None:
    text = b"uci\nposition startpos moves e2e4\r\n\nisready\nlast line without newline"
    pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
    assert await read_all(pieces) == [
        "uci",
        "position startpos moves e2e4\r",
        "",
        "isready",
        "last line without newline",
    ]


async def test_a_multi_megabyte_line_is_cut_to_a_prefix_still_too_long() -> None:
    huge = b"x" * (5 * 1024 * 1024)
    lines = await read_all([b"uci\n" + huge[:1000], huge[1000:] + b"\nisready\n", b"quit\n"])
    assert lines[0] == "uci"
    assert lines[1] == "x" * DEFAULT_KEPT
    assert len(lines[1]) > MAX_LINE_LENGTH  # the session still refuses it
    assert lines[2:] == ["isready", "quit"]


async def test_a_cut_line_of_wide_characters_still_decodes_too_long() -> None:
    """Four-byte characters: the kept prefix is the fewest characters there can be."""
    king = "\N{NEUTRAL CHESS KING}"  # U+1FA00: four bytes in UTF-8
    wide = king.encode()
    assert len(wide) == 4
    lines = await read_all([wide * (MAX_LINE_LENGTH + 1000) + b"\nisready\n"])
    assert len(lines[0]) > MAX_LINE_LENGTH
    assert set(lines[0]) == {king}
    assert lines[1:] == ["isready"]


async def test_lines_up_to_the_cap_are_kept_exactly() -> None:
    cap = 100
    exact = b"a" * cap
    longer = b"b" * (3 * READ_CHUNK)  # spans several reads, so it is cut while pending
    lines = await read_all(
        [exact + b"\n", b"c" * (cap + 1) + b"\n", longer + b"\n", b"d" * 7], max_line_bytes=cap
    )
    assert lines == ["a" * cap, "c" * cap, "b" * cap, "d" * 7]


def test_brudno_refuses_a_huge_line_and_answers_the_next(brudno: list[str]) -> None:
    huge = b"position startpos moves " + b"e2e4 " * (2 * 1024 * 1024)  # a 10 MB line
    done = subprocess.run(
        brudno,
        input=b"uci\n" + huge + b"\nisready\nquit\n",
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode().splitlines()
    too_long = [line for line in out if "line too long" in line]
    assert len(too_long) == 1 and too_long[0].startswith("info string error:")
    assert out.index(too_long[0]) < out.index("readyok")
