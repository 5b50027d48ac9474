"""One log line per event, as ``key=value`` pairs: what the servers' operators grep and ship.

``event=open session=s12 peer="10.0.0.5:51234"``: values with blanks, quotes or ``=`` are
quoted (backslash-escaped inside), ``None`` fields are left out, so a line always splits back
into the same pairs.  Control characters (``\\n``, ``\\r``, ``\\x1b``…) are escaped wherever
they appear, so text from a client (a peer, an MQTT topic) can neither end the line and forge
another nor drive the operator's terminal.  The TCP server and the MQTT worker both log
through it.
"""

from __future__ import annotations

import unicodedata

_BYTE = 0xFF
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def log_line(event: str, **fields: object) -> str:
    """``event=<event>`` followed by the fields in the order given."""
    parts = [f"event={_value(event)}"]
    for key, value in fields.items():
        if value is not None:
            parts.append(f"{escape_controls(key)}={_value(value)}")
    return " ".join(parts)


def escape_controls(text: str) -> str:
    """``text`` with every control or line-separating character (Unicode categories Cc, Zl,
    Zp) written as a backslash escape; plain text is returned as it is."""
    if all(c.isprintable() or c == " " for c in text):
        return text
    return "".join(_escape(c) for c in text)


def _escape(c: str) -> str:
    if c in _NAMED:
        return _NAMED[c]
    if unicodedata.category(c) in ("Cc", "Zl", "Zp"):
        code = ord(c)
        return f"\\x{code:02x}" if code <= _BYTE else f"\\u{code:04x}"
    return c


def _value(value: object) -> str:
    text = str(value)
    if not text or any(c.isspace() or c in '"=' or not c.isprintable() for c in text):
        text = '"' + escape_controls(text.replace("\\", "\\\\").replace('"', '\\"')) + '"'
    return text
