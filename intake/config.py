"""The intake service's YAML (``badge-agent intake -c FILE``): venue, redis, listen, tokens, limits, kiosk."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec
from msgspec import Meta

from core import validate
from core.errors import ConfigError, JobError
from core.settings import Strict, host_port, read_config_mapping
from protocol.jobs import ZONE_NAME, parse_job
from protocol.keys import PRINTER_RE
from protocol.redis_config import RedisConfig, venue_name


class LimitsConfig(Strict, kw_only=True):
    #: Largest request body; a larger one answers 413.
    max_body_bytes: Annotated[int, Meta(ge=1024, le=16 * 1024 * 1024)] = 256 * 1024
    #: Most jobs in one ``{"jobs": [...]}`` request; more answers 413.
    max_batch: Annotated[int, Meta(ge=1, le=10_000)] = 500
    #: Requests per second one token may make (a token bucket of ``burst``); over it answers 429 with Retry-After.
    rate: Annotated[float, Meta(gt=0, le=100_000)] = 50.0
    burst: Annotated[int, Meta(ge=1, le=100_000)] = 100
    #: Reprints a job may have before ``"force": true`` is needed.
    reprint_cap: Annotated[int, Meta(ge=0, le=100)] = 2
    #: SSE streams plus ``?wait=`` long-polls one token may hold open at once (one more answers 429), and the
    #: whole process (one more answers 503).
    watch_per_token: Annotated[int, Meta(ge=1, le=100_000)] = 10
    watch_total: Annotated[int, Meta(ge=1, le=100_000)] = 500
    #: Seconds between an SSE stream's keep-alive comments: a client that left is noticed when one cannot be sent,
    #: and the stream's token is looked at again (a revoked one ends it).
    keepalive: Annotated[float, Meta(ge=0.1, le=60)] = 5.0
    #: The longest one SSE stream lasts, in seconds (a browser's EventSource reconnects, with Last-Event-ID).
    stream_seconds: Annotated[float, Meta(ge=1, le=86_400)] = 600.0
    #: Redis requests in flight at once for desks and staff, and for everyone else (kiosks, viewers, /metrics):
    #: two lanes, so kiosks never make a desk wait; together below the Redis client's pool of 100 connections.
    desk_lane: Annotated[int, Meta(ge=1, le=48)] = 32
    public_lane: Annotated[int, Meta(ge=1, le=48)] = 32
    #: Seconds a connection may take to send a request's headers (or, idle between requests, to start the next);
    #: a slower one is closed. And the seconds a request may take to send its body (408 past it).
    header_timeout: Annotated[float, Meta(ge=0.5, le=300)] = 10.0
    body_timeout: Annotated[float, Meta(ge=0.5, le=300)] = 10.0
    #: Connections held at once (below the 1024 descriptors a process gets by default); past it, the oldest
    #: connection that is not inside a request makes room.
    max_connections: Annotated[int, Meta(ge=8, le=60_000)] = 768
    #: Requests whose bodies have not arrived yet (a body sent with its headers is not counted) held at once: per
    #: token (429 past it); for kiosks, viewers and callers without a token per address (429) and all together
    #: (503). Desks and staff keep the rest of the connections, so slow kiosks never turn a desk away.
    bodies_per_token: Annotated[int, Meta(ge=1, le=10_000)] = 4
    bodies_per_address: Annotated[int, Meta(ge=1, le=60_000)] = 32
    bodies_public: Annotated[int, Meta(ge=1, le=60_000)] = 128
    #: Attendee lookups, searches and badge requests per second one token may make (a bucket of ``lookup_burst``):
    #: a ticket code is a credential, and codes must not be tried fast.
    lookup_rate: Annotated[float, Meta(gt=0, le=10_000)] = 5.0
    lookup_burst: Annotated[int, Meta(ge=1, le=10_000)] = 30
    #: Failed attendee lookups (a code not on the list) per second each token, and each client address, may make
    #: (a bucket of ``miss_burst`` each); past it every lookup and badge request of that token or address answers
    #: 429 until the bucket refills: many kiosk tokens on one machine cannot try codes together. Behind a proxy
    #: the address is the proxy's, shared by every client behind it.
    miss_rate: Annotated[float, Meta(gt=0, le=10_000)] = 0.5
    miss_burst: Annotated[int, Meta(ge=1, le=10_000)] = 20


class KioskConfig(Strict, kw_only=True):
    #: A JavaScript file that sets ``window.KIOSK_STRINGS`` (a translation of intake/kiosk/strings.js).
    strings: Path | None = None
    #: With an attendee list loaded, a kiosk prints only listed tickets; true lets it type a name for any code.
    allow_unlisted: bool = False
    #: The ticket type (``fields.ticket_type``) of a badge typed at a kiosk (no list, or ``allow_unlisted``); "" for
    #: none. A kiosk sets no role, layout or field itself: venues give badge types room access.
    walk_in_type: Annotated[str, Meta(max_length=120)] = ""
    #: Seconds the kiosk shows an answer before it clears itself for the next attendee.
    reset_after: Annotated[float, Meta(ge=3, le=600)] = 20.0
    #: Minutes of expected wait in the kiosk's zone (eventday/counts.py) above which its answer says about how long;
    #: 0 says it whenever there is a wait to say.
    say_wait_after: Annotated[float, Meta(ge=0, le=240)] = 5.0


def _printer_names(values: list[str]) -> list[str]:
    for value in values:
        if not PRINTER_RE.match(value):
            raise ValueError(f"{value!r} is not a printer name (lowercase letters, digits, - and _)")
    return values


def _zone_names(zones: dict[str, ZoneConfig]) -> dict[str, ZoneConfig]:
    # A zone's name goes on each of its badge jobs (protocol/jobs.py checks it there too).
    for name in zones:
        if not ZONE_NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not a zone name (letters, digits, '-', '_' or '.', at most 64 characters)")
    return zones


class ZoneConfig(Strict, kw_only=True):
    """A named set of printers (``Hall A``'s two) and the kiosk and desk tokens near them: those tokens' attendee
    badges are pinned to the zone printer that can print with the least waiting, and go to the pool (anywhere) only
    when none of them can print."""

    printers: Annotated[list[str], Meta(min_length=1, extra={"check": _printer_names})]
    #: Token names (``intake token add NAME``) bound to this zone; a token added with ``--zone`` is bound by that.
    tokens: list[str] = msgspec.field(default_factory=list)


class IntakeConfig(Strict, kw_only=True):
    venue: Annotated[str, Meta(extra={"check": venue_name})]
    redis: RedisConfig = msgspec.field(default_factory=RedisConfig)
    listen: Annotated[str, Meta(extra={"check": host_port})] = "127.0.0.1:8080"
    #: The token file (hashes only; written by ``badge-agent intake token add``, mode 0600).
    tokens: Path
    limits: LimitsConfig = msgspec.field(default_factory=LimitsConfig)
    kiosk: KioskConfig = msgspec.field(default_factory=KioskConfig)
    zones: Annotated[dict[str, ZoneConfig], Meta(extra={"check": _zone_names})] = msgspec.field(default_factory=dict)

    def zone_of(self, token: str, bound: str = "") -> ZoneConfig | None:
        """The zone a token is bound to, or None: the one it was added with (``token add --zone``: ``bound``), else
        the zone whose ``tokens`` name it. A bound zone this config no longer defines is no zone."""
        name = self.zone_name_of(token, bound)
        return None if name is None else self.zones[name]

    def zone_name_of(self, token: str, bound: str = "") -> str | None:
        """The name of the zone ``zone_of`` answers, or None."""
        if bound:
            return bound if bound in self.zones else None
        return next((name for name, zone in self.zones.items() if token in zone.tokens), None)


def load_intake_config(path: str | Path) -> IntakeConfig:
    """Read and validate an intake config. Raises ConfigError naming the file and every bad field.

    A relative ``tokens`` or ``kiosk.strings`` path is taken from the config file's folder.
    """
    path = Path(path)
    data = read_config_mapping(path, "venue:, redis:, listen:, tokens:, ...")
    try:
        config = IntakeConfig.parse(data)
    except validate.Invalid as exc:
        raise ConfigError(str(path), exc.problems) from None
    base = path.resolve().parent
    if not config.tokens.is_absolute():
        config.tokens = base / config.tokens
    strings = config.kiosk.strings
    if strings is not None and not strings.is_absolute():
        config.kiosk.strings = strings = base / strings
    if strings is not None and not strings.is_file():
        raise ConfigError(str(path), [f"kiosk.strings: {strings} does not exist or is not a file"])
    if config.kiosk.walk_in_type:
        try:  # checked as a badge's field is, since every kiosk-typed badge carries it
            parse_job(
                {"attendee_id": "walk-in", "name": "Walk In", "fields": {"ticket_type": config.kiosk.walk_in_type}}
            )
        except JobError as exc:
            raise ConfigError(
                str(path), [f"kiosk.walk_in_type: {str(exc).removeprefix('fields.ticket_type: ')}"]
            ) from None
    return config
