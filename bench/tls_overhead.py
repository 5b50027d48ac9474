"""What TLS costs on `brudno serve`'s game port: the handshake and a `go movetime` round trip.

Command (starts two servers on free loopback ports, one plain and one with a throwaway
self-signed certificate made with the ``openssl`` command, and prints medians):

    python bench/tls_overhead.py --rounds 50

Per transport, ``--rounds`` times each (the two transports take turns, round by round):

* connect — a fresh connection until it is usable: TCP connect (plain), or TCP connect and
  the TLS handshake with certificate verification (TLS);
* first readyok — a fresh connection, then ``isready`` until ``readyok`` (what
  ``brudno ping`` measures);
* go movetime — on one open session, ``go movetime T`` (``--movetime``, 100 ms) until
  ``bestmove``: the search time plus the transport's share.

The client shares the machine with the servers; figures include its own scheduling delays.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

LISTENING = re.compile(rb"event=listening address=(\S+):(\d+)")
HANG_S = 60.0
_DRAINING: set[asyncio.Task[bytes]] = set()
"""Tasks reading the servers' logs to their end (so a full pipe never blocks them)."""


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed EC certificate for 127.0.0.1 (it is its own CA): (cert, key)."""
    cert, key = directory / "server.crt", directory / "server.key"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
            "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


async def start_server(*extra: str) -> tuple[asyncio.subprocess.Process, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRUDNO_TOKEN")}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "brudno", "serve", "--port", "0", *extra,
        stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    assert proc.stderr is not None
    while True:
        raw = await asyncio.wait_for(proc.stderr.readline(), HANG_S)
        if not raw:
            raise RuntimeError("brudno serve exited before listening")
        if match := LISTENING.search(raw):
            _DRAINING.add(asyncio.create_task(proc.stderr.read()))
            return proc, int(match[2])


async def _open(
    port: int, tls: ssl.SSLContext | None
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port, ssl=tls)


async def _until(reader: asyncio.StreamReader, prefix: bytes) -> None:
    while not (await asyncio.wait_for(reader.readline(), HANG_S)).startswith(prefix):
        pass


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.write(b"quit\n")
    writer.close()
    with contextlib.suppress(ConnectionError, OSError):
        await writer.wait_closed()


async def connect_round(port: int, tls: ssl.SSLContext | None) -> tuple[float, float]:
    """(connect, first readyok) of one fresh connection, in seconds."""
    started = time.perf_counter()
    reader, writer = await _open(port, tls)
    connected = time.perf_counter() - started
    writer.write(b"isready\n")
    await _until(reader, b"readyok")
    ready = time.perf_counter() - started
    await _close(writer)
    return connected, ready


async def search_round(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, ms: int
) -> float:
    started = time.perf_counter()
    writer.write(f"go movetime {ms}\n".encode())
    await _until(reader, b"bestmove")
    return time.perf_counter() - started


async def measure(
    ports: dict[str, tuple[int, ssl.SSLContext | None]], args: argparse.Namespace
) -> dict[str, dict[str, float]]:
    """Both transports, round by round in turn, so both see the same machine."""
    samples: dict[str, dict[str, list[float]]] = {
        name: {"connect": [], "first_readyok": [], "go_movetime": []} for name in ports
    }
    for _ in range(args.rounds):
        for name, (port, tls) in ports.items():
            connected, ready = await connect_round(port, tls)
            samples[name]["connect"].append(connected)
            samples[name]["first_readyok"].append(ready)
    sessions = {name: await _open(port, tls) for name, (port, tls) in ports.items()}
    for reader, writer in sessions.values():  # a session's worker starts with its first search
        await search_round(reader, writer, args.movetime)
    for _ in range(args.rounds):
        for name, (reader, writer) in sessions.items():
            samples[name]["go_movetime"].append(await search_round(reader, writer, args.movetime))
    for _, writer in sessions.values():
        await _close(writer)
    return {
        name: {k: statistics.median(v) * 1000.0 for k, v in figures.items()}
        for name, figures in samples.items()
    }


async def main(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = make_certificate(Path(tmp))
        client = ssl.create_default_context(cafile=cert)
        plain, plain_port = await start_server()
        secure, tls_port = await start_server("--tls-cert", str(cert), "--tls-key", str(key))
        try:
            results = await measure({"plain": (plain_port, None), "tls": (tls_port, client)}, args)
        finally:
            for proc in (plain, secure):
                proc.terminate()
                await proc.wait()
    print(f"rounds={args.rounds} movetime_ms={args.movetime} (medians, ms)")
    for name, figures in results.items():
        print(name, " ".join(f"{k}={v:.2f}" for k, v in figures.items()))
    overhead = {k: results["tls"][k] - results["plain"][k] for k in results["plain"]}
    print("tls-plain", " ".join(f"{k}={v:+.2f}" for k, v in overhead.items()))
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--movetime", type=int, default=100, metavar="MS")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args())))
