"""The status page's data: what one sample of a service holds, as typed values and as JSON.

A sample is taken at the feed's pace (:mod:`protocol.transports.http.feed`), never per
search event, and is all the page ever sees: positions (as the URL of their picture, see
:mod:`protocol.transports.http.board`), depths, scores, speeds and lines.  Nothing of the
service's configuration is in it, and certainly not its token.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from urllib.parse import urlencode


class ServiceKind(enum.StrEnum):
    """Which service a monitor watches: the ``service`` label of every sample."""

    SERVE = "serve"
    MQTT = "mqtt"


@dataclass(frozen=True, slots=True)
class InfoSample:
    """The fields of a UCI ``info`` line the page and the metrics use; ``None``/0 when the
    line lacks them."""

    depth: int | None = None
    seldepth: int | None = None
    score: str | None = None
    """As UCI writes it: ``cp 34``, ``mate -3``, possibly with ``lowerbound``."""
    nodes: int = 0
    nps: int = 0
    time_ms: int = 0
    pv: tuple[str, ...] = ()


_INT_FIELDS = {"depth", "seldepth", "nodes", "nps", "time"}
_SCORE_WORDS = {"cp", "mate", "lowerbound", "upperbound"}


def parse_info(line: str | None) -> InfoSample:
    """Read an ``info`` line as :func:`protocol.uci.formatting.info_line` writes it.

    Tolerant: unknown fields are skipped and a malformed number leaves its field unset, since
    the page must show what it can rather than fail on one odd line.
    """
    if not line:
        return InfoSample()
    words = line.split()
    ints: dict[str, int] = {}
    score: list[str] = []
    pv: tuple[str, ...] = ()
    i = 1
    while i < len(words):
        word = words[i]
        if word == "pv":
            pv = tuple(words[i + 1 :])
            break
        if word == "string":
            break
        if word == "score":
            i += 1
            while i < len(words) and (words[i] in _SCORE_WORDS or _is_int(words[i])):
                score.append(words[i])
                i += 1
            continue
        if word in _INT_FIELDS and i + 1 < len(words) and _is_int(words[i + 1]):
            ints[word] = int(words[i + 1])
            i += 2
            continue
        i += 1
    return InfoSample(
        depth=ints.get("depth"),
        seldepth=ints.get("seldepth"),
        score=" ".join(score) or None,
        nodes=ints.get("nodes", 0),
        nps=ints.get("nps", 0),
        time_ms=ints.get("time", 0),
        pv=pv,
    )


def _is_int(text: str) -> bool:
    return text.lstrip("-").isdigit()


@dataclass(frozen=True, slots=True)
class SessionStatus:
    """One session (or MQTT job) at the moment of the sample."""

    sid: str
    variant: str
    fen: str
    chess960: bool
    state: str
    """The session's :class:`~protocol.uci.session.State` value (idle, searching, stopping)."""
    info: InfoSample
    """The latest report of its current (or, when idle, last) search."""
    searches: int
    age_s: float

    def board_url(self) -> str:
        """Where the page gets this position's picture: a URL that changes exactly when the
        picture does, so the browser fetches each position once."""
        query = {"variant": self.variant, "fen": self.fen}
        if self.chess960:
            query["chess960"] = "1"
        if self.info.pv:
            query["arrow"] = self.info.pv[0]
        return "board.svg?" + urlencode(query)

    def to_json(self) -> dict[str, object]:
        info = self.info
        return {
            "sid": self.sid,
            "variant": self.variant,
            "fen": self.fen,
            "state": self.state,
            "board": self.board_url(),
            "depth": info.depth,
            "seldepth": info.seldepth,
            "score": info.score,
            "nodes": info.nodes,
            "nps": info.nps,
            "time_ms": info.time_ms,
            "pv": list(info.pv),
            "searches": self.searches,
            "age_s": round(self.age_s, 1),
        }


@dataclass(frozen=True, slots=True)
class FleetStatus:
    """An MQTT worker's view of its fleet: who is online (from the retained presence
    messages), and how fast this worker answers."""

    worker: str
    workers_online: tuple[str, ...]
    jobs_per_s: float
    """This worker's answered jobs per second over the last few seconds."""
    jobs_answered: int
    jobs_running: int

    def to_json(self) -> dict[str, object]:
        return {
            "worker": self.worker,
            "workers_online": list(self.workers_online),
            "jobs_per_s": round(self.jobs_per_s, 2),
            "jobs_answered": self.jobs_answered,
            "jobs_running": self.jobs_running,
        }


@dataclass(frozen=True, slots=True)
class Readiness:
    """Whether the service takes work now (``/readyz``), and if not, why."""

    ready: bool
    reason: str


@dataclass(frozen=True, slots=True)
class StatusSnapshot:
    """One sample of a whole service, as the page receives it."""

    service: ServiceKind
    readiness: Readiness
    sessions: tuple[SessionStatus, ...]
    nps: int
    """The searching sessions' nodes per second, together."""
    searches_finished: int
    fleet: FleetStatus | None
    dropped_updates: int
    """Samples this page's feed replaced before the browser took them (a slow reader)."""

    def to_json(self) -> dict[str, object]:
        return {
            "service": self.service.value,
            "ready": self.readiness.ready,
            "readiness": self.readiness.reason,
            "sessions": [s.to_json() for s in self.sessions],
            "nps": self.nps,
            "searches_finished": self.searches_finished,
            "fleet": None if self.fleet is None else self.fleet.to_json(),
            "dropped_updates": self.dropped_updates,
        }
