"""Throughput of an MQTT worker fleet: jobs per second with 1, 2 and 4 worker processes.

Command (starts its own Mosquitto on a free loopback port, prints one line per worker count,
then a Markdown table for the issue note):

    python bench/mqtt_throughput.py --table

Against a running broker instead: ``--broker mqtt://HOST:PORT`` (the workers are still started
here, as local ``brudno mqtt`` processes).

Per worker count N: start N ``brudno mqtt --concurrency 1`` processes, wait until all are
``online``, run a warm-up round (each worker's first job starts its search process), then
publish ``--jobs`` jobs at once through one client and time until the last answer. Every job
is ``go nodes K`` on a different position (random but seeded playouts from the start), so the
search work per job is fixed and no job is helped by a table left over from an equal one.
jobs/s = jobs / wall time; cores_used = CPU time of the worker processes (with their search
processes) during the batch / wall time, which shows whether the machine had the cores to give
(Linux's autogroup scheduler shares the CPU per session, so other users' work caps it);
foreign_cores = the CPU time everything else on the machine used meanwhile / wall time (a
measurement is only meaningful when it is near 0). The client, the broker and the workers
share the machine; on an otherwise idle 2-core machine two workers should come close to twice
one worker's rate, and four can add little more.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import chess

from protocol.transports.mqtt.ask import AskClient
from protocol.transports.mqtt.broker import BrokerSettings, parse_broker_url

START_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Result:
    workers: int
    jobs: int
    nodes: int
    seconds: float
    spread: str
    cpu_seconds: float
    """CPU time the worker processes (and their search processes) used during the batch."""
    foreign_seconds: float
    """CPU time everything else on the machine used meanwhile (not workers, broker, client)."""

    @property
    def rate(self) -> float:
        return self.jobs / self.seconds

    def line(self) -> str:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        return (
            f"workers={self.workers} jobs={self.jobs} nodes={self.nodes} "
            f"seconds={self.seconds:.2f} jobs_per_s={self.rate:.2f} "
            f"per_worker={self.spread} cores_used={self.cpu_seconds / self.seconds:.2f} "
            f"foreign_cores={self.foreign_seconds / self.seconds:.2f} load1={load:.1f}"
        )


def machine_busy_seconds() -> float:
    """CPU seconds all CPUs spent busy since boot (Linux /proc/stat; 0 elsewhere)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def tree_cpu_seconds(roots: list[int]) -> float:
    """User + system CPU seconds of ``roots`` and all their descendants (Linux /proc).

    ``cores_used`` (this over wall time) tells whether the fleet got the cores it asked
    for: on a machine busy with other work it stays flat however many workers run."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry.name)] = int(fields[1])
        times[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
    wanted = set(roots)
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in wanted and pid not in wanted:
                wanted.add(pid)
                grew = True
    return sum(times.get(pid, 0.0) for pid in wanted)


def positions(count: int, seed: int) -> list[str]:
    """Distinct middlegame-ish positions: seeded random playouts of 6..20 plies."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < count:
        board = chess.Board()
        for _ in range(rng.randint(6, 20)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if board.is_game_over() or board.fen() in seen:
            continue
        seen.add(board.fen())
        out.append(board.fen())
    return out


def brudno_command() -> list[str]:
    for candidate in (
        Path(sysconfig.get_path("scripts")) / "brudno",
        Path(sys.executable).parent / "brudno",
    ):
        if candidate.exists():
            return [str(candidate)]
    found = shutil.which("brudno")
    if found is None:
        sys.exit("the brudno command is not installed: python -m pip install -e .")
    return [found]


class Broker:
    """A private Mosquitto on loopback (anonymous, no persistence), for the benchmark only."""

    def __init__(self, workdir: Path) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        config = workdir / "mosquitto.conf"
        lines = [
            f"listener {self.port} 127.0.0.1",
            "allow_anonymous true",
            "persistence false",
            "max_queued_messages 100000",
            "log_type error",
        ]
        if os.geteuid() == 0:
            lines.append("user root")
        config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        self.process = subprocess.Popen(
            [binary, "-c", str(config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        self.close()
        sys.exit("mosquitto did not start")

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


async def measure(
    settings: BrokerSettings,
    brudno: list[str],
    *,
    workers: int,
    jobs: int,
    nodes: int,
    fens: list[str],
    logdir: Path,
    broker_pid: int | None,
) -> Result:
    prefix = f"bench-{os.getpid()}-{workers}"
    procs = []
    for n in range(workers):
        log = open(logdir / f"worker-{workers}-{n}.log", "wb")  # noqa: SIM115
        procs.append(
            (
                subprocess.Popen(
                    [
                        *brudno,
                        "mqtt",
                        "--broker",
                        settings.url,
                        "--prefix",
                        prefix,
                        "--id",
                        f"bench-{n}",
                        "--concurrency",
                        "1",
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                ),
                log,
            )
        )
    try:
        async with AskClient(settings, prefix=prefix) as client:
            await client.wait_workers(workers, START_TIMEOUT_S)
            warm = [
                client.ask("chess", f"position fen {fen}\ngo nodes 200", timeout=120)
                for fen in fens[: 2 * workers]
            ]
            await asyncio.gather(*warm)
            batch = fens[2 * workers : 2 * workers + jobs]
            pids = [proc.pid for proc, _ in procs]
            own = [os.getpid(), *([broker_pid] if broker_pid is not None else [])]
            cpu_before = tree_cpu_seconds(pids)
            others_before = machine_busy_seconds() - cpu_before - tree_cpu_seconds(own)
            started = time.perf_counter()
            answers = await asyncio.gather(
                *(
                    client.ask("chess", f"position fen {fen}\ngo nodes {nodes}", timeout=600)
                    for fen in batch
                )
            )
            seconds = time.perf_counter() - started
            cpu_after = tree_cpu_seconds(pids)
            others = machine_busy_seconds() - cpu_after - tree_cpu_seconds(own) - others_before
            cpu = cpu_after - cpu_before
        bad = [a for a in answers if a.error or a.bestmove is None]
        if bad:
            sys.exit(f"{len(bad)} jobs failed: {bad[0].lines}")
        taken = Counter(a.worker for a in answers)
        spread = "/".join(str(taken[f"bench-{n}"]) for n in range(workers))
        return Result(workers, len(batch), nodes, seconds, spread, cpu, max(0.0, others))
    finally:
        for proc, _ in procs:
            proc.send_signal(signal.SIGTERM)
        for proc, log in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()


async def main_async(args: argparse.Namespace) -> int:
    brudno = brudno_command()
    fens = positions(max(args.workers) * 2 + args.jobs, args.seed)
    with tempfile.TemporaryDirectory(prefix="brudno-mqtt-bench-") as tmp:
        workdir = Path(tmp)
        broker = None
        if args.broker is None:
            broker = Broker(workdir)
            settings = BrokerSettings("127.0.0.1", broker.port)
        else:
            host, port, tls = parse_broker_url(args.broker)
            settings = BrokerSettings(host, port, tls=tls)
        try:
            results = []
            for workers in args.workers:
                result = await measure(
                    settings,
                    brudno,
                    workers=workers,
                    jobs=args.jobs,
                    nodes=args.nodes,
                    fens=fens,
                    logdir=workdir,
                    broker_pid=broker.process.pid if broker else None,
                )
                print(result.line(), flush=True)
                results.append(result)
        finally:
            if broker is not None:
                broker.close()
    if args.table:
        base = results[0].rate
        print()
        print(
            f"| workers | jobs/s (go nodes {args.nodes}) | vs. {results[0].workers} | "
            "jobs per worker | cores used | other load (cores) |"
        )
        print("|---:|---:|---:|:---|---:|---:|")
        for result in results:
            print(
                f"| {result.workers} | {result.rate:.2f} | {result.rate / base:.2f}x | "
                f"{result.spread} | {result.cpu_seconds / result.seconds:.2f} | "
                f"{result.foreign_seconds / result.seconds:.2f} |"
            )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1, 2, 4],
        help="worker counts to measure (default: 1 2 4)",
    )
    parser.add_argument("--jobs", type=int, default=60, help="jobs per measurement")
    parser.add_argument("--nodes", type=int, default=2000, help="nodes per job (go nodes)")
    parser.add_argument("--seed", type=int, default=5, help="seed of the positions")
    parser.add_argument("--broker", help="use this broker instead of a private Mosquitto")
    parser.add_argument("--table", action="store_true", help="also print a Markdown table")
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
