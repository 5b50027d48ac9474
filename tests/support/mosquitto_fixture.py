"""A real Mosquitto broker for the MQTT tests, and helpers around it.

The broker is Debian's ``mosquitto`` (``scripts/test`` installs it).  It listens on a free loopback
port with a generated configuration (anonymous access, persistence only when a test asks for
it).  A missing binary fails the tests: the MQTT transport is not optional.

Timeouts here only keep a broken broker or worker from hanging the suite; no test asserts on
how fast anything is.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, Any, NoReturn

import aiomqtt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from paho.mqtt.packettypes import PacketTypes

from engine.control import SearchControl
from engine.game import Game
from engine.info import InfoCallback, SearchResult
from engine.limits import Limits
from engine.skill import Skill
from protocol.transports.mqtt.ask import AskClient
from protocol.transports.mqtt.broker import BrokerSettings
from protocol.transports.mqtt.config import WorkerConfig
from protocol.transports.mqtt.topics import status_topic
from protocol.transports.mqtt.wire import new_properties
from protocol.transports.mqtt.worker import MqttWorker
from protocol.uci.runner import PRODUCTION, ThreadRunner

HANG_TIMEOUT = 60.0
MOSQUITTO_CANDIDATES = ("/usr/sbin/mosquitto", "/usr/bin/mosquitto")


def mosquitto_binary() -> str:
    found = shutil.which("mosquitto")
    if found is not None:
        return found
    for candidate in MOSQUITTO_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    pytest.fail("mosquitto is not installed (Debian: apt-get install mosquitto; scripts/test does)")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Mosquitto:
    """One broker process on loopback; restartable on the same port (and persistence file)."""

    def __init__(
        self,
        workdir: Path,
        *,
        persistence: bool = False,
        extra_config: Sequence[str] = (),
        listener_config: Sequence[str] = (),
    ) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.persistence = persistence
        self.extra_config = tuple(extra_config)
        self.listener_config = tuple(listener_config)
        self.config_path = workdir / "mosquitto.conf"
        self.log_path = workdir / "mosquitto.log"
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def settings(self, **changes: object) -> BrokerSettings:
        return replace(
            BrokerSettings(host="127.0.0.1", port=self.port, keepalive_s=10, timeout_s=10.0),
            **changes,  # type: ignore[arg-type]
        )

    def _write_config(self) -> None:
        lines = [
            f"listener {self.port} 127.0.0.1",
            *self.listener_config,
            "allow_anonymous true"
            if not any(line.startswith("password_file") for line in self.extra_config)
            else "allow_anonymous false",
            f"persistence {'true' if self.persistence else 'false'}",
            f"persistence_location {self.workdir}/",
            "log_dest stderr",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "log_type information",
            "max_queued_messages 10000",
            *self.extra_config,
        ]
        if os.geteuid() == 0:
            # As root, Mosquitto drops to the 'mosquitto' user, which cannot write here.
            lines.append("user root")
        self.config_path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def start(self) -> None:
        self._write_config()
        self._log = open(self.log_path, "ab")  # noqa: SIM115 (closed in stop)
        self._process = subprocess.Popen(
            [mosquitto_binary(), "-c", str(self.config_path)],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=self._log,
        )
        deadline = time.monotonic() + HANG_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                pytest.fail(f"mosquitto exited at start:\n{self.log_text()}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2),
            ):
                return
            time.sleep(0.02)
        pytest.fail(f"mosquitto did not listen on {self.port}:\n{self.log_text()}")

    def stop(self) -> None:
        """SIGTERM (Mosquitto saves its persistence file on the way out), then reap."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=HANG_TIMEOUT)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""


def unique_prefix() -> str:
    """A topic prefix of one's own, so tests sharing the session broker never cross."""
    return f"test-{uuid.uuid4().hex[:10]}"


async def wait_until(
    condition: Callable[[], bool], what: str, timeout: float = HANG_TIMEOUT
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def running_worker(
    server: Mosquitto, prefix: str, **settings: object
) -> AsyncIterator[MqttWorker]:
    """An in-process worker, connected and subscribed; stopped gracefully on exit."""
    config = replace(
        WorkerConfig(
            broker=server.settings(),
            prefix=prefix,
            worker_id=f"inproc-{uuid.uuid4().hex[:6]}",
            reconnect_initial_s=0.05,
            reconnect_max_s=0.5,
        ),
        **settings,  # type: ignore[arg-type]
    )
    worker = MqttWorker(config)
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop), name="test-worker")
    try:
        waiter = asyncio.ensure_future(worker.connected.wait())
        await asyncio.wait(
            {waiter, task}, timeout=HANG_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        waiter.cancel()
        if task.done():
            task.result()  # raises what stopped it
        assert worker.connected.is_set(), "the worker did not connect"
        yield worker
    finally:
        stop.set()
        await asyncio.wait_for(task, HANG_TIMEOUT)


class WorkerProcess:
    """``brudno mqtt`` as a real process (so it can be killed like a crashed container)."""

    def __init__(
        self,
        brudno: list[str],
        broker: Mosquitto,
        prefix: str,
        worker_id: str,
        workdir: Path,
        *extra: str,
    ) -> None:
        self.worker_id = worker_id
        self.log_path = workdir / f"{worker_id}.log"
        self._log = open(self.log_path, "wb")  # noqa: SIM115 (closed in wait)
        self.process = subprocess.Popen(
            [
                *brudno,
                "--log-level",
                "INFO",
                "mqtt",
                "--broker",
                broker.url,
                "--prefix",
                prefix,
                "--id",
                worker_id,
                "--reconnect-max",
                "0.5",
                "--keepalive",
                "10",
                *extra,
            ],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill(self) -> None:
        """SIGKILL the worker and its search processes (a crash: no goodbye, Will fires)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def terminate(self) -> None:
        self.process.send_signal(signal.SIGTERM)

    def wait(self, timeout: float = HANG_TIMEOUT) -> int:
        try:
            return self.process.wait(timeout=timeout)
        finally:
            self._log.close()

    def log_text(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def close(self) -> None:
        if self.process.poll() is None:
            self.kill()
        self.wait()


async def retained_status(broker: Mosquitto, prefix: str, worker_id: str) -> str | None:
    """The retained presence of a worker, as a fresh subscriber sees it."""
    topic = status_topic(prefix, worker_id)
    async with aiomqtt.Client(
        "127.0.0.1", broker.port, protocol=aiomqtt.ProtocolVersion.V5
    ) as client:
        await client.subscribe(topic, qos=1)
        try:
            async with asyncio.timeout(1.0):
                async for message in client.messages:
                    payload = message.payload
                    return payload.decode() if isinstance(payload, bytes) else None
        except TimeoutError:
            return None
    return None


async def publish_presence(broker: Mosquitto, prefix: str, worker_id: str, status: str) -> None:
    """Set (or, with ``""``, clear) a worker's retained presence, as if that worker had: for
    tests of what clients make of presence without a real worker behind it."""
    async with aiomqtt.Client(
        "127.0.0.1", broker.port, protocol=aiomqtt.ProtocolVersion.V5
    ) as client:
        await client.publish(
            status_topic(prefix, worker_id),
            status,
            qos=1,
            retain=True,
            properties=new_properties(PacketTypes.PUBLISH),
        )


SECRET_PATH = "/srv/brudno-worker/secret_settings.py"
"""A path of the worker's machine that :class:`FailingRunner` puts in its error: it must show
up in the worker's log and never in a reply."""


class FailingRunner(ThreadRunner):
    """A runner that fails as a bug would, with an exception whose text names a file of the
    worker's machine: every search raises, and so does clearing the table (``ucinewgame``).

    A stand-in for a broken game or search (the transport must not care which); the broker,
    the worker and the session around it are the real ones.
    """

    async def search(
        self,
        game: Game[Any],
        limits: Limits,
        control: SearchControl,
        on_info: InfoCallback,
        *,
        multipv: int,
        move_overhead_ms: int,
        algorithm: str = PRODUCTION,
        skill: Skill | None = None,
    ) -> SearchResult:
        _fail("search")

    async def clear(self) -> None:
        _fail("clear")


def _fail(what: str) -> NoReturn:
    raise OSError(f"{what}: cannot read {SECRET_PATH}")


class GatedRunner(ThreadRunner):
    """A real search runner whose searches start only once ``gate`` is set: a test holds a
    worker's slots busy for as long as it likes, without depending on how fast anything is."""

    def __init__(self, gate: asyncio.Event, hash_mb: int = 16) -> None:
        super().__init__(hash_mb)
        self._gate = gate

    async def search(
        self,
        game: Game[Any],
        limits: Limits,
        control: SearchControl,
        on_info: InfoCallback,
        *,
        multipv: int,
        move_overhead_ms: int,
        algorithm: str = PRODUCTION,
        skill: Skill | None = None,
    ) -> SearchResult:
        await self._gate.wait()
        return await super().search(
            game,
            limits,
            control,
            on_info,
            multipv=multipv,
            move_overhead_ms=move_overhead_ms,
            algorithm=algorithm,
            skill=skill,
        )


@contextlib.asynccontextmanager
async def ask_client(broker: Mosquitto, prefix: str) -> AsyncIterator[AskClient]:
    async with AskClient(
        broker.settings(), prefix=prefix, reconnect_initial_s=0.05, reconnect_max_s=0.5
    ) as client:
        yield client


def make_tls_files(directory: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for 127.0.0.1 / localhost, as PEM files:
    (ca.pem, server.pem, server.key)."""
    now = datetime.datetime.now(datetime.UTC)
    validity = (now - datetime.timedelta(hours=1), now + datetime.timedelta(days=1))
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Brudno test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(validity[0])
        .not_valid_after(validity[1])
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(validity[0])
        .not_valid_after(validity[1])
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                ]
            ),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_path, cert_path, key_path = (
        directory / name for name in ("ca.pem", "server.pem", "server.key")
    )
    ca_path.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca_path, cert_path, key_path


def make_password_file(directory: Path, user: str, password: str, **more: str) -> Path:
    """A Mosquitto password file (hashed by mosquitto_passwd, from the same package) for
    ``user`` and any ``more`` accounts (user name = password)."""
    path = directory / "passwd"
    tool = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
    for n, (name, secret) in enumerate({user: password, **more}.items()):
        subprocess.run(
            [tool, "-b", *(["-c"] if n == 0 else []), str(path), name, secret],
            check=True,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=HANG_TIMEOUT,
        )
    return path


@contextlib.contextmanager
def secure_mosquitto(directory: Path) -> Iterator[Mosquitto]:
    """A broker of its own that wants TLS (a throwaway CA: ``directory / "ca.pem"``) and a
    password (user ``bot``, password ``correct horse``); stopped on exit."""
    ca, cert, key = make_tls_files(directory)
    passwd = make_password_file(directory, "bot", "correct horse")
    broker = Mosquitto(
        directory,
        listener_config=[f"cafile {ca}", f"certfile {cert}", f"keyfile {key}"],
        extra_config=[f"password_file {passwd}"],
    )
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()
