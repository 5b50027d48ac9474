"""How much a stream of QoS 0 duplicates of one finished job makes a worker publish.

Command (starts its own Mosquitto on a free loopback port and one ``brudno mqtt`` worker):

    python bench/mqtt_duplicates.py --duplicates 200 --multipv 30

One client publishes a MultiPV job at QoS 0 and waits for its ``done`` reply, then publishes
``--duplicates`` copies of it (the same payload, response topic and correlation data: what a
hostile client or a looping one sends), then one other job and waits for its answer (the
worker answers in order, so every reply to the duplicates has arrived by then). It prints
the bytes the duplicates carried in, the terminal replies and reply bytes that came back for
the job, and their ratio (the amplification).  Run it on two checkouts to compare them.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

import aiomqtt
from paho.mqtt.packettypes import PacketTypes

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mqtt_throughput import Broker, brudno_command

from protocol.transports.mqtt.wire import correlation_of, new_properties, user_properties

FEN = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
PREFIX = "bench-dups"
TIMEOUT_S = 120.0


async def measure(port: int, duplicates: int, multipv: int) -> str:
    replies_topic = f"{PREFIX}/replies/bench"
    job = f"setoption name MultiPV value {multipv}\nposition fen {FEN}\ngo depth 1".encode()
    done: dict[bytes, list[int]] = {b"job": [], b"end": []}
    arrived = asyncio.Event()
    async with aiomqtt.Client("127.0.0.1", port, protocol=aiomqtt.ProtocolVersion.V5) as client:
        await client.subscribe(replies_topic, qos=1)
        await client.subscribe(f"{PREFIX}/workers/+/status", qos=1)

        async def read() -> None:
            async for message in client.messages:
                if message.topic.value.endswith("/status"):
                    arrived.set()
                    continue
                status = user_properties(message.properties).get("status")
                key = correlation_of(message.properties) or b""
                if status in ("done", "error") and key in done:
                    payload = message.payload
                    done[key].append(len(payload) if isinstance(payload, bytes) else 0)
                    arrived.set()

        async def publish(correlation: bytes, payload: bytes, qos: int) -> None:
            props = new_properties(PacketTypes.PUBLISH)
            props.ResponseTopic = replies_topic
            props.CorrelationData = correlation
            await client.publish(f"{PREFIX}/jobs/chess", payload, qos=qos, properties=props)

        async def until(key: bytes, count: int) -> None:
            async with asyncio.timeout(TIMEOUT_S):
                while len(done[key]) < count:
                    arrived.clear()
                    await arrived.wait()

        reader = asyncio.create_task(read())
        async with asyncio.timeout(TIMEOUT_S):
            await arrived.wait()  # the worker's presence: it is online
        await publish(b"job", job, 0)
        await until(b"job", 1)
        for _ in range(duplicates):
            await publish(b"job", job, 0)
        await publish(b"end", b"go depth 1", 1)
        await until(b"end", 1)
        reader.cancel()
    replies = done[b"job"][1:]
    sent = duplicates * len(job)
    return (
        f"duplicates={duplicates} bytes_in={sent} reply_bytes={done[b'job'][0]} "
        f"replies_to_duplicates={len(replies)} bytes_out={sum(replies)} "
        f"amplification={sum(replies) / sent:.1f}x"
    )


async def main_async(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="brudno-mqtt-dups-") as tmp:
        broker = Broker(Path(tmp))
        log = open(Path(tmp) / "worker.log", "wb")  # noqa: SIM115 (closed below)
        worker = await asyncio.create_subprocess_exec(
            *brudno_command(),
            "mqtt",
            "--broker",
            f"mqtt://127.0.0.1:{broker.port}",
            "--prefix",
            PREFIX,
            "--id",
            "bench",
            stdout=log,
            stderr=log,
        )
        try:
            print(await measure(broker.port, args.duplicates, args.multipv), flush=True)
        finally:
            worker.terminate()
            await worker.wait()
            log.close()
            broker.close()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duplicates", type=int, default=200, help="copies sent (default 200)")
    parser.add_argument("--multipv", type=int, default=30, help="MultiPV of the job (default 30)")
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
