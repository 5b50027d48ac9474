"""`brudno ping`, the health check: what the real command says and how it exits."""

from __future__ import annotations

from brudno.commands.serve import TOKEN_ENV
from protocol.transports.connect import PingStatus, ping
from tests.support.tcp_helpers import env_without_token, run_command, running_server, wait_until

EXIT_FAILED = 1


async def test_ping_without_a_token_says_the_server_wants_one(brudno: list[str]) -> None:
    """Issue 12: no token given to a server that wants one is not "authentication failed"
    (which suggests a wrong secret) but a plain "requires a token", naming where to put it."""
    async with running_server(token="wanted-token") as server:
        address = f"127.0.0.1:{server.port}"
        code, out, err = await run_command(*brudno, "ping", address, env=env_without_token())
        assert code == EXIT_FAILED and out == ""
        assert err.strip() == (
            f"brudno ping: the server at {address} requires a token and none was given; "
            f"set {TOKEN_ENV} or pass --token-file (or --token)"
        )
        assert "authentication failed" not in err
        await wait_until(lambda: server.connections == 0, "the ping's session closed")
        code, _, err = await run_command(
            *brudno,
            "ping",
            "--accept-busy",
            "--token-env",
            "MY_TOKEN",
            address,
            env=env_without_token(),
        )
        assert code == EXIT_FAILED and "set MY_TOKEN or pass" in err  # never "busy"
        await wait_until(lambda: server.connections == 0, "the ping's session closed")
        # The library tells a missing token apart; the command names where to put one.
        status, message = await ping("127.0.0.1", server.port)
        assert (status, message) == (
            PingStatus.TOKEN_REQUIRED,
            f"the server at 127.0.0.1:{server.port} requires a token and none was given",
        )
        await wait_until(lambda: server.connections == 0, "the ping's session closed")
        # A token that is given but wrong is still called what it is.
        status, message = await ping("127.0.0.1", server.port, token="wrong")
        assert status is PingStatus.FAILED and "authentication failed" in message
        await wait_until(lambda: server.connections == 0, "the ping's session closed")
