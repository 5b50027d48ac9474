"""`brudno healthcheck --pid` against real `brudno serve` processes outside a container.

The container tests (tests/container) check every mode inside the image; this one checks
the server mode with TLS on, which the image's health check must speak too (a plaintext
ping on a TLS port gets no session, and the container would turn unhealthy).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.mosquitto_fixture import free_port
from tests.support.tcp_helpers import run_command, serve_process
from tests.support.tls_certs import Authority

TOKEN = "healthcheck-test-token"


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
async def test_the_health_check_pings_its_server_in_the_server_s_own_protocol(
    brudno: list[str], tmp_path: Path, tls: bool
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    args = ["--port", str(free_port()), "--token-file", str(token_file)]
    if tls:
        pair = Authority(tmp_path, "health").issue("server", names=("brudno.example",))
        args += ["--tls-cert", str(pair.cert), "--tls-key", str(pair.key)]
    async with serve_process(brudno, *args) as server:
        pid = str(server.proc.pid)
        code, out, err = await run_command(*brudno, "healthcheck", "--pid", pid)
        assert (code, err) == (0, ""), out
        assert out.startswith("brudno healthcheck: server: ") and "ready" in out
        assert await server.stop() == 0
