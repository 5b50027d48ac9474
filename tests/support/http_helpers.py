"""Helpers for the monitoring tests: a real HTTP client and the Prometheus text parser.

Every request goes through aiohttp's client over a real socket to the real server; metrics
are read with prometheus-client's own parser, so a malformed exposition fails the test.
"""

from __future__ import annotations

import asyncio
import re
import ssl
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from tests.support.tcp_helpers import HANG_TIMEOUT

HTTP_LISTENING = re.compile(r"event=http_listening address=(\S+):(\d+)")


@dataclass(frozen=True)
class ClientSide:
    """Where a request comes from: a source address (any 127.x.y.z is this machine, so one
    test can be several clients) and, for ``https://``, the context that verifies the server."""

    local_host: str | None = None
    tls: ssl.SSLContext | None = None


@dataclass
class Reply:
    status: int
    text: str
    headers: dict[str, str] = field(default_factory=dict)


async def get(
    url: str,
    *,
    token: str | None = None,
    headers: dict[str, str] | None = None,
    client: ClientSide = ClientSide(),
) -> Reply:
    """One GET with a fresh client (no cookies carried over)."""
    sent = dict(headers or {})
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    return await request("GET", url, headers=sent, client=client)


async def request(
    method: str,
    url: str,
    *,
    headers: dict[str, str] | None = None,
    form: dict[str, str] | None = None,
    client: ClientSide = ClientSide(),
) -> Reply:
    """One request with a fresh client (no cookies carried over, no redirects followed)."""
    sent = dict(headers or {})
    timeout = aiohttp.ClientTimeout(total=HANG_TIMEOUT)
    connector = aiohttp.TCPConnector(
        local_addr=None if client.local_host is None else (client.local_host, 0),
        ssl=True if client.tls is None else client.tls,
    )
    async with (
        aiohttp.ClientSession(timeout=timeout, connector=connector) as session,
        session.request(method, url, headers=sent, data=form, allow_redirects=False) as response,
    ):
        return Reply(response.status, await response.text(), dict(response.headers))


def samples(exposition: str) -> dict[str, float]:
    """Every sample of a Prometheus exposition by name and labels: ``name{a="b"}`` → value."""
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(exposition):
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            values[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return values


async def metrics(base: str, token: str | None = None) -> dict[str, float]:
    reply = await get(f"{base}/metrics", token=token)
    assert reply.status == 200, reply
    assert reply.headers["Content-Type"].startswith("text/plain"), reply.headers
    return samples(reply.text)


async def wait_for_file_line(path: Path, pattern: re.Pattern[str]) -> re.Match[str]:
    """The first line of a growing log file that matches ``pattern`` (fails after the hang
    timeout, never passes by waiting)."""
    async with asyncio.timeout(HANG_TIMEOUT):
        while True:
            text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
            if found := pattern.search(text):
                return found
            await asyncio.sleep(0.05)
