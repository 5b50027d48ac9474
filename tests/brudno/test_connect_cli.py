"""`brudno connect` as a GUI sees it, and `brudno ping` beside it, against a real server."""

from __future__ import annotations

import chess
import chess.engine

from tests.support.tcp_helpers import (
    TcpClient,
    env_without_token,
    run_command,
    running_server,
    wait_until,
)


async def test_ping_and_connect_commands_against_a_server(brudno: list[str]) -> None:
    """What a GUI does: launch `brudno connect` and speak UCI to it; the token comes from
    the environment, never the command line."""
    token = "gui-token"
    async with running_server(token=token, max_sessions=2) as server:
        address = f"127.0.0.1:{server.port}"
        code, out, err = await run_command(
            *brudno, "ping", address, env=env_without_token(BRUDNO_TOKEN=token)
        )
        assert code == 0 and out.startswith(f"readyok from {address}"), err
        await wait_until(lambda: server.connections == 0, "the ping's session closed")
        code, _, err = await run_command(
            *brudno, "ping", address, env=env_without_token(BRUDNO_TOKEN="nope")
        )
        assert code == 1 and "authentication failed" in err
        await wait_until(lambda: server.connections == 0, "the ping's session closed")

        _, engine = await chess.engine.popen_uci(
            [*brudno, "connect", address], env=env_without_token(BRUDNO_TOKEN=token)
        )
        try:
            assert engine.id["name"].startswith("Brudno")
            board = chess.Board()
            for _ in range(2):
                result = await engine.play(board, chess.engine.Limit(nodes=200))
                assert result.move in board.legal_moves
                board.push(result.move)
            # With the one other slot taken, the server is busy; --accept-busy says healthy.
            code, _, err = await run_command(
                *brudno,
                "ping",
                address,
                "--accept-busy",
                env=env_without_token(BRUDNO_TOKEN="nope"),
            )
            assert code == 1  # a wrong token is never "busy"
            await wait_until(lambda: server.connections == 1, "the ping's session closed")
            holder = await TcpClient.open(server.port, token=token)
            await holder.exchange()
            code, _, err = await run_command(
                *brudno,
                "ping",
                "--quiet",
                "--accept-busy",
                address,
                env=env_without_token(BRUDNO_TOKEN=token),
            )
            assert code == 0, err
            await holder.close()
        finally:
            await engine.quit()
        await wait_until(lambda: server.connections == 0, "the bridge's session closed")
