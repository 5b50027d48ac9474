"""The protocol package's exception types.

Bad client input must never take the engine down (DESIGN.md convention 8): the session catches
these, reports ``info string error: <what> (<offending text>)`` and changes nothing.  The
message (``str(error)``) is the *what*, written to name the culprit on its own
(``Hash: 99999 is out of range 1..4096``); the session adds the command line as the offending
text.  The structured attributes exist so callers can react without parsing messages.
"""

from __future__ import annotations


class ProtocolError(Exception):
    """Base class for complaints about what a client sent."""


class OptionError(ProtocolError, ValueError):
    """A ``setoption`` naming an unknown option or carrying a value the option rejects.

    A ``ValueError`` too, so callers that only know "bad value" can catch it generically.
    ``option`` is the option's declared spelling when it is known (else the name as sent);
    ``value`` is the rejected value text (``None`` when it was missing).
    """

    def __init__(self, message: str, *, option: str, value: str | None = None) -> None:
        super().__init__(message)
        self.option = option
        self.value = value


class UnknownOptionError(OptionError, KeyError):
    """An option name that was never declared.

    Also a ``KeyError`` because reading an undeclared option (``options["Foo"]``) is a lookup
    failure; one type lets a caller that looks a name up before setting it catch either way.
    """

    def __str__(self) -> str:
        # KeyError would show repr(message); the message is meant to be read as is.
        return ValueError.__str__(self)
