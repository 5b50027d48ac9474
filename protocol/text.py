"""Client or job text made safe to echo back or to log: the one place this is done, so
errors, logs and replies all show foreign text the same way."""

from __future__ import annotations


def printable(text: str, limit: int | None = None) -> str:
    """``text`` with every non-printable character (control bytes, line breaks) shown as
    ``?``, cut to at most ``limit`` characters (``…`` marks a cut): echoed raw, a CR or a NUL
    would corrupt the line framing of the client's protocol or of the log."""
    shown = "".join(c if c.isprintable() else "?" for c in text)
    if limit is not None and len(shown) > limit:
        shown = shown[: limit - 1] + "…"
    return shown
