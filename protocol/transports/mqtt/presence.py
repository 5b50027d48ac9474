"""Which workers of a fleet are online, as their retained presence messages say.

A worker's own connection only takes jobs (every message on it is one), so the status page's
view of the fleet comes from a connection of its own: an :class:`~protocol.transports.mqtt.ask.
AskClient` (which already follows the presence topics for ``mqtt-ask``) under the worker's id
with ``-monitor`` appended, kept up with backoff while the worker runs.  Its ACL needs only
what ``mqtt-ask`` needs (read the status topics, use its own reply topic).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import aiomqtt

from protocol.transports.events import log_line
from protocol.transports.mqtt.ask import AskClient
from protocol.transports.mqtt.backoff import Backoff
from protocol.transports.mqtt.broker import BrokerSettings
from protocol.transports.mqtt.errors import FatalBrokerError
from protocol.transports.mqtt.wire import Presence

log = logging.getLogger(__name__)


class FleetPresence:
    """The fleet's online workers, followed until :meth:`run`'s ``stop`` is set."""

    def __init__(
        self,
        broker: BrokerSettings,
        prefix: str,
        client_id: str,
        *,
        reconnect_initial_s: float = 0.5,
        reconnect_max_s: float = 30.0,
    ) -> None:
        self._broker = broker
        self._prefix = prefix
        self._client_id = client_id
        self._backoff = Backoff(reconnect_initial_s, reconnect_max_s)
        self._client: AskClient | None = None

    def online(self) -> list[str]:
        """The workers whose presence is ``online`` now (empty while not connected)."""
        client = self._client
        if client is None:
            return []
        return sorted(w for w, status in client.workers.items() if status == Presence.ONLINE)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                async with AskClient(
                    self._broker, prefix=self._prefix, client_id=self._client_id
                ) as client:
                    self._client = client
                    self._backoff.reset()
                    await stop.wait()
            except (aiomqtt.MqttError, FatalBrokerError, OSError) as exc:
                log.info("%s", log_line("presence_unavailable", error=str(exc) or "closed"))
            finally:
                self._client = None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self._backoff.next_delay())
