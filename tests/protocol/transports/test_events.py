"""The ``key=value`` log line: client text with line breaks or terminal escapes stays on its
one line, escaped, and splits back into the same pairs (a real worker logging a hostile
topic: tests/brudno/test_log_lines_cli.py)."""

from __future__ import annotations

import shlex

import pytest

from protocol.transports.events import escape_controls, log_line


@pytest.mark.parametrize(
    "hostile",
    [
        "10.0.0.5:1\nevent=auth_ok session=s1 peer=10.0.0.9:2",
        "x\revent=auth_ok",
        "\x1b[2K\x1b[1Aevent=auth_ok",
        "a\x00b\x7fc\x85d\u2028e\u2029f",
        'quote" event=auth_ok x="',
    ],
)
def test_client_text_cannot_forge_a_line_or_a_pair(hostile: str) -> None:
    line = log_line("open", session="s7", peer=hostile, **{"odd\nkey": 1})
    assert line.splitlines() == [line]  # Python splits at \x85, U+2028 and U+2029 too
    assert line.isprintable()  # no terminal escape, no control character left
    pairs = dict(word.split("=", 1) for word in shlex.split(line))
    assert pairs["event"] == "open" and pairs["session"] == "s7"
    assert "auth_ok" not in pairs.values()


def test_plain_text_is_left_alone_and_escapes_are_readable() -> None:
    assert log_line("close", reason="auth failed", n=3) == 'event=close reason="auth failed" n=3'
    assert escape_controls("plain text: ok") == "plain text: ok"
    assert escape_controls("a\nb\rc\td\x1be\u2028") == "a\\nb\\rc\\td\\x1be\\u2028"
