"""A TCP server or an MQTT worker with its monitoring HTTP server beside it.

The entry points the application calls for ``--metrics-port``: they build the
:class:`~protocol.transports.http.monitor.Monitor`, hand it to the transport as its observer,
and run the HTTP server for exactly as long as the transport serves.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

from protocol.transports.auth_throttle import AuthThrottle
from protocol.transports.http.config import HttpConfig
from protocol.transports.http.monitor import Monitor
from protocol.transports.http.server import HttpServer
from protocol.transports.http.status import ServiceKind
from protocol.transports.http.views import ServiceView, TcpView, WorkerView
from protocol.transports.mqtt.config import WorkerConfig
from protocol.transports.mqtt.presence import FleetPresence
from protocol.transports.mqtt.worker import MqttWorker, serve_mqtt
from protocol.transports.tcp.config import ServerConfig
from protocol.transports.tcp.server import TcpServer, serve_until

MONITOR_SUFFIX = "-monitor"
"""Appended to a worker's id for the connection that follows the fleet's presence."""


@contextlib.asynccontextmanager
async def _serving(
    http: HttpConfig,
    monitor: Monitor,
    view: ServiceView,
    started: Callable[[HttpServer], None] | None,
    throttle: AuthThrottle | None = None,
) -> AsyncIterator[HttpServer]:
    """The HTTP server for as long as the service runs, the monitor reading ``view``;
    ``throttle``: the game port's brute-force limit, to share."""
    monitor.attach(view)
    try:
        async with HttpServer(http, monitor, throttle) as running:
            if started is not None:
                started(running)
            yield running
    finally:
        monitor.detach()


async def serve_tcp_monitored(
    config: ServerConfig,
    http: HttpConfig,
    stop: asyncio.Event,
    *,
    started: Callable[[HttpServer], None] | None = None,
) -> None:
    """:func:`~protocol.transports.tcp.server.serve_until`, with metrics, probes and page."""
    http.check()
    monitor = Monitor(ServiceKind.SERVE)

    def alongside(server: TcpServer) -> contextlib.AbstractAsyncContextManager[HttpServer]:
        return _serving(http, monitor, TcpView(server), started, server.auth_throttle)

    await serve_until(config, stop, observer=monitor, alongside=alongside)


async def serve_mqtt_monitored(
    config: WorkerConfig,
    http: HttpConfig,
    stop: asyncio.Event,
    *,
    started: Callable[[HttpServer], None] | None = None,
) -> None:
    """:func:`~protocol.transports.mqtt.worker.serve_mqtt`, with metrics, probes and a page
    that shows the worker's jobs and the fleet's presence."""
    http.check()
    monitor = Monitor(ServiceKind.MQTT)

    @contextlib.asynccontextmanager
    async def alongside(worker: MqttWorker) -> AsyncIterator[HttpServer]:
        presence = FleetPresence(
            config.broker,
            config.prefix,
            config.worker_id + MONITOR_SUFFIX,
            reconnect_initial_s=config.reconnect_initial_s,
            reconnect_max_s=config.reconnect_max_s,
        )
        presence_stop = asyncio.Event()
        following = asyncio.create_task(presence.run(presence_stop), name="fleet-presence")
        try:
            async with _serving(
                http, monitor, WorkerView(worker, presence.online), started
            ) as running:
                yield running
        finally:
            presence_stop.set()
            await following

    await serve_mqtt(config, stop, observer=monitor, alongside=alongside)
