"""TLS for the game port and the HTTP port: server contexts that can be renewed, and clients.

:class:`ServerTls` holds the certificate generation new connections get: a server that
starts each handshake itself (the game port) takes :attr:`ServerTls.context`; a listening
socket that does it for us (the HTTP port) keeps one *front* context for its whole life; its
SNI callback (called on every handshake, with or without a server name) hands each new
connection the current generation's context. :meth:`ServerTls.reload` builds a fresh context
from the files and swaps it in only if it loads: a broken renewal keeps the old pair, and
open connections keep the context they started with either way.

Defaults for both sides: TLS 1.2 or newer, no compression (``ssl``'s defaults, stated).
"""

from __future__ import annotations

import logging
import ssl
from dataclasses import dataclass
from pathlib import Path

from protocol.transports.events import log_line

__all__ = ["ServerTls", "TlsError", "TlsFiles", "client_context", "log"]

log = logging.getLogger(__name__)
"""Certificate renewals are logged here (``event=tls_reloaded`` / ``tls_reload_failed``)."""

DEFAULT_HANDSHAKE_TIMEOUT_S = 10.0
"""A client that has not finished its TLS handshake by then is cut off (a plaintext client
on a TLS port, a silent socket): it holds a descriptor meanwhile, never a session."""


class TlsError(ValueError):
    """A certificate/key pair (or CA file) that cannot be used; the message says why."""


@dataclass(frozen=True, slots=True)
class TlsFiles:
    """A PEM certificate chain and its private key, re-read on every (re)load."""

    cert: Path
    key: Path


def _modern(context: ssl.SSLContext) -> ssl.SSLContext:
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.options |= ssl.OP_NO_COMPRESSION
    return context


def _load(files: TlsFiles) -> ssl.SSLContext:
    context = _modern(ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER))
    try:
        context.load_cert_chain(files.cert, files.key)
    except FileNotFoundError as exc:
        raise TlsError(f"no such file: {exc.filename}") from None
    except PermissionError as exc:
        raise TlsError(f"cannot read {exc.filename}: permission denied") from None
    except ssl.SSLError as exc:
        reason = exc.reason or str(exc)
        if "KEY_VALUES_MISMATCH" in reason.upper():
            raise TlsError(f"{files.key} is not the key of {files.cert}") from None
        raise TlsError(
            f"{files.cert} / {files.key}: not a PEM certificate and key ({reason})"
        ) from None
    except OSError as exc:
        raise TlsError(f"cannot read {files.cert} / {files.key}: {exc}") from None
    return context


class ServerTls:
    """The server side of TLS for one or more listening sockets, renewable in place.

    Raises :class:`TlsError` at construction when the pair cannot be loaded.
    """

    def __init__(self, files: TlsFiles) -> None:
        self.files = files
        self._current = _load(files)
        self.generation = 1
        """Counts successful loads (the first is 1)."""

    @property
    def context(self) -> ssl.SSLContext:
        """The current generation's context (for a handshake started on an accepted socket)."""
        return self._current

    def listening_context(self) -> ssl.SSLContext:
        """A context for a listening socket: every handshake it starts is given the current
        generation's certificate (see the module docstring)."""
        front = self._current
        front.sni_callback = self._select
        return front

    def _select(
        self, connection: ssl.SSLObject | ssl.SSLSocket, _name: str | None, _ctx: ssl.SSLContext
    ) -> None:
        connection.context = self._current

    def reload(self) -> None:
        """Re-read the files; on success new connections get the new pair.  On
        :class:`TlsError` nothing changes (the old pair stays in use)."""
        fresh = _load(self.files)
        self._current = fresh
        self.generation += 1

    def renew(self) -> bool:
        """:meth:`reload`, logged (what ``SIGHUP`` does); False when the old pair stays."""
        try:
            self.reload()
        except TlsError as exc:
            log.warning("%s", log_line("tls_reload_failed", error=str(exc), kept=self.generation))
            return False
        log.info("%s", log_line("tls_reloaded", generation=self.generation))
        return True


def client_context(cafile: Path | None = None) -> ssl.SSLContext:
    """A client context that verifies the server's chain and host name: against ``cafile``
    (a private CA) when given, else the system's trust store.  :class:`TlsError` when the
    CA file cannot be used."""
    try:
        context = ssl.create_default_context(cafile=cafile)
    except FileNotFoundError:
        raise TlsError(f"no such CA file: {cafile}") from None
    except (ssl.SSLError, OSError) as exc:
        raise TlsError(f"cannot use CA file {cafile}: {exc}") from None
    return _modern(context)


def loopback_self_check_context() -> ssl.SSLContext:
    """A client context for a process checking its own server on loopback (the container's
    health check): TLS without verifying the chain or the name, as the certificate is made
    for the server's public name, not for ``127.0.0.1``, and the connection never leaves the
    host.  Never use it for a connection that crosses a network."""
    context = _modern(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context
