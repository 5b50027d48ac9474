"""The brute-force curve of `brudno serve`: how many token guesses an attacker on one address
gets checked per second, over time, and how long the right token stays locked out after.

Command (starts its own server, one per target, on free ports; prints one line per time
bucket, then a summary per target):

    python bench/brute_force.py
    python bench/brute_force.py --targets http --seconds 60 --parallel 32 --max-penalty 10

Per target (``http``: ``GET /metrics`` with a wrong bearer token; ``game``: a connection
sending ``auth <wrong>``), ``--parallel`` attacker loops on 127.0.0.1 guess back to back for
``--seconds``.  Each answer is either *checked* (401, ``authentication failed (the first
line …``: the guess was compared with the token), *refused unchecked* (429, ``… too many
failed attempts …``: the address was penalised, the guess was worth nothing) or *other*
(a game connection evicted from the pending-auth budget by the attacker's own flood).  The curve is
checked guesses per second in each ``--bucket``.  Meanwhile a bystander on 127.0.0.2 shows
the right token once a second (``bystander ok`` counts how often it got in).  When the attack
stops, the attacker's address shows the right token every 50 ms: ``lockout`` is how long
until it gets in.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import enum
import os
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import aiohttp

GAME_TOKEN = "bench-game-token-5b8e01"
OPERATOR_TOKEN = "bench-operator-token-c2d917"
ATTACKER, BYSTANDER = "127.0.0.1", "127.0.0.2"
LISTENING = re.compile(rb"event=listening address=(\S+):(\d+)")
HTTP_LISTENING = re.compile(rb"event=http_listening address=(\S+):(\d+)")
THROTTLED = "too many failed attempts"
WRONG = "authentication failed (the first line"


class Outcome(enum.Enum):
    RIGHT = "right"
    WRONG = "wrong"
    """Checked, and wrong."""
    THROTTLED = "throttled"
    """Refused unchecked."""
    OTHER = "other"
    """Neither (a connection evicted from the pending-auth budget, a reset)."""


HANG_S = 60.0
RETRY_S = 0.05


@dataclass
class Tally:
    """What one target's attack got."""

    checked: list[float] = field(default_factory=list)
    """When each checked guess was answered (seconds since the attack began)."""
    refused: int = 0
    other: int = 0
    bystander_ok: int = 0
    bystander_tries: int = 0
    lockout_s: float = 0.0
    throttle_log_lines: int = 0


async def start_server(max_penalty: float) -> tuple[asyncio.subprocess.Process, int, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRUDNO_")}
    env |= {"BRUDNO_TOKEN": GAME_TOKEN, "BRUDNO_METRICS_TOKEN": OPERATOR_TOKEN}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "brudno",
        "serve",
        "--port",
        "0",
        "--metrics-port",
        "0",
        "--auth-max-penalty",
        str(max_penalty),
        "--max-pending-per-address",
        "16",
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    assert proc.stderr is not None
    port = http_port = None
    while port is None or http_port is None:
        raw = await asyncio.wait_for(proc.stderr.readline(), HANG_S)
        if not raw:
            raise RuntimeError("brudno serve exited before listening")
        if match := LISTENING.search(raw):
            port = int(match[2])
        if match := HTTP_LISTENING.search(raw):
            http_port = int(match[2])
    return proc, port, http_port


async def guess_http(client: aiohttp.ClientSession, url: str, token: str) -> Outcome:
    headers = {"Authorization": f"Bearer {token}"}
    async with client.get(url, headers=headers) as response:
        await response.read()
        return {200: Outcome.RIGHT, 401: Outcome.WRONG, 429: Outcome.THROTTLED}.get(
            response.status, Outcome.OTHER
        )


async def guess_game(port: int, token: str, local_host: str) -> Outcome:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(local_host, 0))
    try:
        writer.write(f"auth {token}\nisready\n".encode())
        await writer.drain()
        line = (await asyncio.wait_for(reader.readline(), HANG_S)).decode()
        if line.strip() == "readyok":
            return Outcome.RIGHT
        if THROTTLED in line:
            return Outcome.THROTTLED
        return Outcome.WRONG if WRONG in line else Outcome.OTHER
    except (ConnectionError, OSError):
        return Outcome.OTHER
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await writer.wait_closed()


def _session(local_host: str) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(local_addr=(local_host, 0), force_close=True)
    return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=HANG_S))


async def attack(target: str, port: int, url: str, args: argparse.Namespace) -> Tally:
    tally = Tally()
    began = time.monotonic()
    ends = began + args.seconds

    async def attacker(n: int) -> None:
        async with _session(ATTACKER) as client:
            count = 0
            while time.monotonic() < ends:
                token = f"guess-{n}-{count}"
                count += 1
                if target == "http":
                    result = await guess_http(client, url, token)
                else:
                    result = await guess_game(port, token, ATTACKER)
                if result is Outcome.THROTTLED:
                    tally.refused += 1
                elif result is Outcome.OTHER:
                    tally.other += 1
                else:
                    tally.checked.append(time.monotonic() - began)

    async def bystander() -> None:
        async with _session(BYSTANDER) as client:
            while time.monotonic() < ends:
                if target == "http":
                    outcome = await guess_http(client, url, OPERATOR_TOKEN)
                else:
                    outcome = await guess_game(port, GAME_TOKEN, BYSTANDER)
                tally.bystander_tries += 1
                tally.bystander_ok += outcome is Outcome.RIGHT
                await asyncio.sleep(1.0)

    await asyncio.gather(*(attacker(n) for n in range(args.parallel)), bystander())
    stopped = time.monotonic()
    async with _session(ATTACKER) as client:
        while True:
            if target == "http":
                outcome = await guess_http(client, url, OPERATOR_TOKEN)
            else:
                outcome = await guess_game(port, GAME_TOKEN, ATTACKER)
            if outcome is Outcome.RIGHT:
                break
            await asyncio.sleep(RETRY_S)
    tally.lockout_s = time.monotonic() - stopped
    return tally


async def run_target(target: str, args: argparse.Namespace) -> Tally:
    proc, port, http_port = await start_server(args.max_penalty)
    assert proc.stderr is not None
    log = asyncio.create_task(proc.stderr.read())
    try:
        tally = await attack(target, port, f"http://127.0.0.1:{http_port}/metrics", args)
    finally:
        proc.terminate()
        await proc.wait()
    tally.throttle_log_lines = (await log).count(b"event=auth_throttled")
    return tally


def report(target: str, tally: Tally, args: argparse.Namespace) -> None:
    buckets = int(args.seconds // args.bucket) + 1
    counts = [0] * buckets
    for when in tally.checked:
        counts[min(buckets - 1, int(when // args.bucket))] += 1
    for i, count in enumerate(counts[: int(args.seconds // args.bucket)]):
        start = i * args.bucket
        print(
            f"target={target} t={start:g}-{start + args.bucket:g}s "
            f"checked_per_s={count / args.bucket:.2f}",
            flush=True,
        )
    print(
        f"target={target} parallel={args.parallel} seconds={args.seconds:g} "
        f"checked={len(tally.checked)} refused_unchecked={tally.refused} other={tally.other} "
        f"checked_per_s_overall={len(tally.checked) / args.seconds:.2f} "
        f"bystander_ok={tally.bystander_ok}/{tally.bystander_tries} "
        f"lockout_after_attack_s={tally.lockout_s:.2f} "
        f"auth_throttled_log_lines={tally.throttle_log_lines}",
        flush=True,
    )


async def main(args: argparse.Namespace) -> int:
    print(
        f"# cpus={os.cpu_count()} load={os.getloadavg()[0]:.2f} "
        f"max_penalty={args.max_penalty:g}s python={sys.version.split()[0]}",
        flush=True,
    )
    for target in args.targets:
        report(target, await run_target(target, args), args)
    return 0


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--targets", nargs="+", choices=("http", "game"), default=["http", "game"])
    parser.add_argument("--seconds", type=float, default=30.0, help="attack length")
    parser.add_argument("--parallel", type=int, default=8, help="attacker loops at once")
    parser.add_argument("--bucket", type=float, default=2.0, help="curve resolution (s)")
    parser.add_argument(
        "--max-penalty", type=float, default=10.0, help="the server's --auth-max-penalty"
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(asyncio.run(main(parse_args())))
