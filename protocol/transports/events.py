"""One log line per event, as ``key=value`` pairs: what the servers' operators grep and ship.

``event=open session=s12 peer="10.0.0.5:51234"``: values with blanks, quotes or ``=`` are
quoted (backslash-escaped inside), ``None`` fields are left out, so a line always splits back
into the same pairs.  The TCP server and the MQTT worker both log through it.
"""

from __future__ import annotations


def log_line(event: str, **fields: object) -> str:
    """``event=<event>`` followed by the fields in the order given."""
    parts = [f"event={_value(event)}"]
    for key, value in fields.items():
        if value is not None:
            parts.append(f"{key}={_value(value)}")
    return " ".join(parts)


def _value(value: object) -> str:
    text = str(value)
    if not text or any(c.isspace() or c in '"=' for c in text):
        text = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return text
