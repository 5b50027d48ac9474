"""The monitoring HTTP server: health probes, Prometheus metrics and the live status page.

Routes: ``/healthz`` (liveness), ``/readyz`` (readiness: 200, else 503 with the reason),
``/metrics`` (Prometheus text), ``/`` with ``/events``, ``/status.json``, ``/board.svg`` and
``/assets/…`` (the status page), ``POST /login`` and ``POST /logout`` (``GET`` gets 405).

Guarantees: HTTPS when the config carries a :class:`~protocol.transports.tls.ServerTls`; at
most ``max_connections`` open, a newcomer closing the oldest *idle* one (:class:`_CappedSite`),
idle ones closed after ``keepalive_timeout_s``.  With a token everything but the probes, the
login form and the assets needs it (:mod:`protocol.transports.http.auth`): 401 without it,
429 with ``Retry-After`` while the address is throttled
(:class:`~protocol.transports.auth_throttle.AuthThrottle`, shared with the game port).  A
failing handler is logged with its traceback; the client gets a bare ``500 internal error``.
Handlers are short and never wait for a search.

Why (aiohttp, open probes): docs/deploy.md, *Monitoring: metrics, health probes, a live status
page* and *Why the services are built as they are*.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from importlib import resources
from types import TracebackType
from typing import Final, Self

from aiohttp import web
from aiohttp.typedefs import Handler
from aiohttp.web_protocol import RequestHandler
from prometheus_client import CONTENT_TYPE_LATEST

from protocol.transports.auth_throttle import AuthThrottle
from protocol.transports.events import log_line
from protocol.transports.http.auth import COOKIE, Access, shown_token
from protocol.transports.http.board import BoardError, render
from protocol.transports.http.config import HttpConfig
from protocol.transports.http.feed import Feed
from protocol.transports.http.monitor import Monitor
from protocol.transports.observer import AuthFailure

log = logging.getLogger(__name__)

LOGIN_FAILURE_DELAY_S: Final = 0.25
"""A wrong token is answered after this pause, as on the game port: guessing is slow."""
SHUTDOWN_TIMEOUT_S: Final = 2.0
"""How long closing waits for requests in flight (the page's streams end at once)."""
MAX_QUERY_CHARS: Final = 2048
"""``/board.svg``'s query: a FEN is under 100 characters."""
ASSETS: Final = {
    "status.js": "text/javascript",
    "status.css": "text/css",
}
SECURITY_HEADERS: Final = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
"""Everything the page uses comes from this server (no CDN); nothing else may run."""

_ACCESS: Final = web.AppKey("access", Access)
_THROTTLE: Final = web.AppKey("throttle", AuthThrottle)
_SECURE_COOKIE: Final = web.AppKey("secure_cookie", bool)
_MONITOR: Final = web.AppKey("monitor", Monitor)
_FEED: Final = web.AppKey("feed", Feed)
_CLOSING: Final = web.AppKey("closing", asyncio.Event)
_BUSY: Final = web.AppKey("busy", set[object])
"""The connections (their request handlers) with a request in progress."""


def _asset(name: str) -> bytes:
    return (resources.files(__package__) / "assets" / name).read_bytes()


# -- middleware -----------------------------------------------------------------------------
@web.middleware
async def _mark_busy(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Note the connection as busy while its request is handled (see :class:`_CappedSite`)."""
    busy = request.app[_BUSY]
    busy.add(request.protocol)
    try:
        return await handler(request)
    finally:
        busy.discard(request.protocol)


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Security headers on every answer; a failing handler becomes a bare 500."""
    try:
        response = await handler(request)
    except (web.HTTPException, asyncio.CancelledError):
        raise
    except Exception:
        log.exception("%s", log_line("http_failed", method=request.method, path=request.path))
        response = web.Response(status=500, text="internal error\n")
    if not response.prepared:
        response.headers.update(SECURITY_HEADERS)
    return response


async def _refusal(request: web.Request, *, page: bool = False) -> web.Response | None:
    """``None`` when the request may see protected pages (no token, a live login session,
    the right token), else the answer: 401 (for the page, its login form), or 429."""
    access = request.app[_ACCESS]
    if access.open or access.session_alive(request.cookies):
        return None
    given = shown_token(request.headers)
    if given is None:
        return _no_store(_html("login.html", status=401)) if page else _unauthorized()
    return await _try_token(request, given, page=page)


async def _try_token(request: web.Request, given: str, *, page: bool) -> web.Response | None:
    """Check a token the client showed, under the brute-force limit: ``None`` when right."""
    throttle = request.app[_THROTTLE]
    monitor = request.app[_MONITOR]
    host = request.remote or ""
    wait = throttle.blocked_for(host)
    if wait > 0:
        monitor.auth_failed(AuthFailure.THROTTLED)
        return _too_many(wait, page=page)
    if request.app[_ACCESS].token_matches(given):
        throttle.succeeded(host)
        return None
    # Counted before the pause, with no await since the check above: guesses sent in
    # parallel see each other's failures, so the penalty holds however many there are.
    failure = throttle.failed(host)
    await asyncio.sleep(LOGIN_FAILURE_DELAY_S)
    monitor.auth_failed(AuthFailure.WRONG_TOKEN)
    if failure.report:
        log.info("%s", log_line("http_auth_failed", peer=host, path=request.path))
        if failure.penalty_s > 0:
            log.info(
                "%s",
                log_line(
                    "auth_throttled",
                    address=failure.address,
                    failures=failure.failures,
                    penalty_s=f"{failure.penalty_s:g}",
                ),
            )
    if page:
        return _no_store(_html("login.html", status=401, note="Wrong token."))
    return _unauthorized()


def _unauthorized() -> web.Response:
    return web.Response(
        status=401,
        text="token required\n",
        headers={"WWW-Authenticate": 'Bearer realm="brudno"'},
    )


def _too_many(wait_s: float, *, page: bool) -> web.Response:
    """429: the address sent too many wrong tokens; its next one is checked after this."""
    seconds = math.ceil(wait_s)
    headers = {"Retry-After": str(seconds)}
    if page:
        note = f"Too many wrong tokens from your address: try again in {seconds} s."
        response = _html("login.html", status=429, note=note)
        response.headers.update(headers)
        return _no_store(response)
    return web.Response(
        status=429, text="too many wrong tokens; try again later\n", headers=headers
    )


def _no_store(response: web.Response) -> web.Response:
    response.headers["Cache-Control"] = "no-store"
    return response


# -- probes and metrics ---------------------------------------------------------------------
async def _healthz(_request: web.Request) -> web.Response:
    return _no_store(web.Response(text="ok\n"))


async def _readyz(request: web.Request) -> web.Response:
    readiness = request.app[_MONITOR].readiness()
    status = 200 if readiness.ready else 503
    word = "ready" if readiness.ready else "not ready"
    return _no_store(web.Response(status=status, text=f"{word}: {readiness.reason}\n"))


async def _metrics(request: web.Request) -> web.Response:
    if refused := await _refusal(request):
        return refused
    body = request.app[_MONITOR].metrics.exposition()
    response = web.Response(body=body)
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST
    return _no_store(response)


# -- the page -------------------------------------------------------------------------------
async def _page(request: web.Request) -> web.Response:
    if refused := await _refusal(request, page=True):
        return refused
    return _no_store(_html("index.html"))


def _html(name: str, *, status: int = 200, note: str = "") -> web.Response:
    text = _asset(name).decode("utf-8").replace("{{note}}", note)
    return web.Response(status=status, text=text, content_type="text/html", charset="utf-8")


async def _login(request: web.Request) -> web.Response:
    access = request.app[_ACCESS]
    if access.open:
        return _see_other()
    form = await request.post()
    given = form.get("token")
    if refused := await _try_token(
        request, given.strip() if isinstance(given, str) else "", page=True
    ):
        return refused
    response = _see_other()
    response.set_cookie(
        COOKIE,
        access.log_in(),
        max_age=math.ceil(access.session_ttl_s),
        httponly=True,
        samesite="Strict",
        secure=request.app[_SECURE_COOKIE],
        path="/",
    )
    return response


async def _logout(request: web.Request) -> web.Response:
    """``POST`` only: revokes the login session (the cookie alone would outlive a delete)."""
    request.app[_ACCESS].log_out(request.cookies)
    response = _see_other()
    response.del_cookie(COOKIE, path="/")
    return response


def _see_other() -> web.Response:
    """303 to the page (after the login form: a reload does not post the token again)."""
    return _no_store(web.Response(status=303, headers={"Location": "/"}))


async def _asset_handler(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    kind = ASSETS.get(name)
    if kind is None:
        return web.Response(status=404, text="not found\n")
    response = web.Response(body=_asset(name), content_type=kind, charset="utf-8")
    response.headers["Cache-Control"] = "no-cache"
    return response


async def _status_json(request: web.Request) -> web.Response:
    if refused := await _refusal(request):
        return refused
    return _no_store(web.json_response(request.app[_MONITOR].snapshot().to_json()))


async def _board(request: web.Request) -> web.Response:
    if refused := await _refusal(request):
        return refused
    if len(request.query_string) > MAX_QUERY_CHARS:
        return web.Response(status=414, text="query too long\n")
    query = request.query
    try:
        svg = render(
            query.get("variant", ""),
            query.get("fen", ""),
            chess960=query.get("chess960") == "1",
            arrow=query.get("arrow"),
        )
    except BoardError as exc:
        return web.Response(status=400, text=f"bad position: {exc}\n")
    response = web.Response(text=svg, content_type="image/svg+xml", charset="utf-8")
    response.headers["Cache-Control"] = "private, max-age=3600"  # a URL names one picture
    return response


async def _events(request: web.Request) -> web.StreamResponse:
    """Server-sent events: one ``data:`` message per sample, until the page goes away or the
    server closes (see :mod:`protocol.transports.http.feed`)."""
    if refused := await _refusal(request):
        return refused
    closing = request.app[_CLOSING]
    with request.app[_FEED].subscribe() as box:
        if box is None:
            return web.Response(status=503, text="too many status pages open\n")
        response = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-store",
                "X-Accel-Buffering": "no",
                **SECURITY_HEADERS,
            }
        )
        await response.prepare(request)
        ending = asyncio.ensure_future(closing.wait())
        try:
            while not closing.is_set():
                taking = asyncio.ensure_future(box.take())
                done, _ = await asyncio.wait({taking, ending}, return_when=asyncio.FIRST_COMPLETED)
                if taking not in done:
                    taking.cancel()
                    break
                await response.write(b"data: " + taking.result() + b"\n\n")
        except (ConnectionError, OSError):
            pass  # the page went away
        finally:
            ending.cancel()
        return response


def build_app(
    config: HttpConfig, monitor: Monitor, feed: Feed, throttle: AuthThrottle
) -> web.Application:
    app = web.Application(middlewares=[_mark_busy, _guard], client_max_size=16 * 1024)
    app[_ACCESS] = Access(config.guard_token, session_ttl_s=config.session_ttl_s)
    app[_THROTTLE] = throttle
    app[_SECURE_COOKIE] = config.tls is not None
    app[_MONITOR] = monitor
    app[_FEED] = feed
    app[_CLOSING] = asyncio.Event()
    app[_BUSY] = set()
    app.router.add_get("/healthz", _healthz)
    app.router.add_get("/readyz", _readyz)
    app.router.add_get("/metrics", _metrics)
    app.router.add_get("/", _page)
    app.router.add_post("/login", _login)
    app.router.add_post("/logout", _logout)
    app.router.add_get("/events", _events)
    app.router.add_get("/status.json", _status_json)
    app.router.add_get("/board.svg", _board)
    app.router.add_get("/assets/{name}", _asset_handler)
    return app


class _CappedSite(web.BaseSite):
    """A TCP site with TLS (renewable, through its listening context), a TLS handshake
    timeout and a cap on open connections: a newcomer beyond ``config.max_connections``
    closes the oldest idle connection (or, when every one is busy, the oldest)."""

    def __init__(self, runner: web.AppRunner, config: HttpConfig, busy: set[object]) -> None:
        super().__init__(runner)
        self._config = config
        self._busy = busy
        self._arriving: dict[RequestHandler, float] = {}
        """Handlers accepted but not registered with the server yet, with when."""
        self.evicted = 0

    @property
    def name(self) -> str:
        scheme = "https" if self._config.tls is not None else "http"
        return f"{scheme}://{self._config.host}:{self._config.port}"

    async def start(self) -> None:
        await super().start()
        config = self._config
        tls = config.tls
        self._server = await asyncio.get_running_loop().create_server(
            self._accept,
            config.host,
            config.port,
            ssl=None if tls is None else tls.listening_context(),
            ssl_handshake_timeout=None if tls is None else config.tls_handshake_timeout_s,
            reuse_address=True,
        )

    def _accept(self) -> RequestHandler:
        """The protocol factory: called on accept, before any TLS handshake."""
        server = self._runner.server
        assert isinstance(server, web.Server)
        registered = server.connections
        # A handler is registered only once its connection is made (a loop turn later, or
        # after the TLS handshake): until then it is counted as arriving.
        now = asyncio.get_running_loop().time()
        known = set(registered)
        expiry = self._config.tls_handshake_timeout_s + 1.0
        self._arriving = {
            h: t for h, t in self._arriving.items() if h not in known and now - t < expiry
        }
        open_now = [h for h in registered if h.transport is not None]
        if len(open_now) + len(self._arriving) >= self._config.max_connections and open_now:
            idle = [h for h in open_now if h not in self._busy]
            victim = (idle or open_now)[0]
            victim.force_close()
            self.evicted += 1
            log.info(
                "%s",
                log_line(
                    "http_evicted",
                    connections=len(open_now) + len(self._arriving),
                    idle=len(idle),
                ),
            )
        handler = server()
        self._arriving[handler] = now
        return handler

    @property
    def address(self) -> tuple[str, int]:
        assert self._server is not None
        sockets = getattr(self._server, "sockets", ())
        if not sockets:
            raise RuntimeError("the HTTP server is not listening")
        host, port = sockets[0].getsockname()[:2]
        return str(host), int(port)


class HttpServer:
    """The monitoring server of one service; an async context manager.

    ``async with HttpServer(config, monitor) as http:`` listens on entry (``http.port`` is
    the port bound) and closes on exit, ending the pages' streams first.  ``throttle``: the
    game port's brute-force limit, so both ports count one address's wrong tokens together
    (else one of its own, from ``config.auth_throttle``).
    """

    def __init__(
        self, config: HttpConfig, monitor: Monitor, throttle: AuthThrottle | None = None
    ) -> None:
        config.check()
        self.config = config
        self.monitor = monitor
        self.feed = Feed(
            monitor.snapshot,
            config.sample_interval_s,
            config.max_page_clients,
            monitor.metrics.page_updates_dropped.inc,
        )
        self.auth_throttle = (
            throttle if throttle is not None else AuthThrottle(config.auth_throttle)
        )
        self._app = build_app(config, monitor, self.feed, self.auth_throttle)
        self._runner: web.AppRunner | None = None
        self._site: _CappedSite | None = None
        self._feeding: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        runner = web.AppRunner(
            self._app,
            access_log=None,
            handle_signals=False,
            shutdown_timeout=SHUTDOWN_TIMEOUT_S,
            keepalive_timeout=self.config.keepalive_timeout_s,
        )
        await runner.setup()
        self._runner = runner
        try:
            site = _CappedSite(runner, self.config, self._app[_BUSY])
            await site.start()
            self._site = site
        except BaseException:
            await runner.cleanup()
            self._runner = None
            raise
        self._feeding = asyncio.create_task(self.feed.run(), name="status-feed")
        host, port = self.address
        log.info(
            "%s",
            log_line(
                "http_listening",
                address=f"{host}:{port}",
                auth=_auth_mode(self.config),
                tls="on" if self.config.tls is not None else "off",
                max_connections=self.config.max_connections,
            ),
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._app[_CLOSING].set()
        if self._feeding is not None:
            self._feeding.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._feeding
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
            self._site = None

    @property
    def address(self) -> tuple[str, int]:
        """The address actually bound (the port is useful with ``port=0``)."""
        if self._site is None:
            raise RuntimeError("the HTTP server is not listening")
        return self._site.address

    @property
    def port(self) -> int:
        return self.address[1]


def _auth_mode(config: HttpConfig) -> str:
    """The ``auth=`` of the listening line: which token guards the port."""
    if config.operator_token is not None:
        return "operator_token"
    return "token" if config.token is not None else "none"
