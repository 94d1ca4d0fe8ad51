"""The event day's numbers, from the venue's Redis alone, for whoever shows or sends them.

Stable calls (the board, the intake's /metrics and kiosk answer, and the webhooks sender use them):

- ``event_day(redis, venue)`` -> ``EventDay``: everything below at one moment.
- ``zone_waits(redis, venue)`` -> ``list[ZoneWait]``: each zone's badges waiting and expected wait in minutes.

How each number is computed (docs/board.md says the same for people):

- Arrivals: ``confirm`` counts a job's first confirmed badge (not a reprint, not a pre-print) and the hand-over
  counts a pre-printed badge handed over, per zone and minute of server time, in the hash ``minutes``
  (``count_print`` in protocol/prelude.lua), in the same atomic step: a count is never lost or doubled.
- A zone's rate: its badges printed in the last ``RATE_WINDOW_MIN`` minutes (the oldest minute pro rata), divided by
  that window, or by how long the zone has printed when that is shorter (its stretch starts at its first print after
  five idle minutes). Under ``MIN_STRETCH_S`` of printing there is no rate yet.
- A zone's expected wait: its badges waiting (in the pool and in printers' queues, read from each job's ``zone``)
  divided by its rate, in minutes.
- Labels left: what the printer reports (a DYMO 550's count), else the last roll change's labels (``badge-agent roll``)
  minus the printer's prints since then.
- A fault's age: since a reader of this module first saw the printer in a state a person must clear (the hash
  ``faults``, written with HSETNX by whoever reads first, so every reader agrees).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import NoPermissionError

from eventday import keys as day_keys
from protocol.codec import dec, enc
from protocol.fleet import FleetView, fleet
from protocol.keys import Keys

MINUTE_MS = 60_000
#: What the hash ``minutes`` keeps (prelude.lua's ``count_minute`` deletes older buckets; readers trim the rest).
KEEP_MIN = 240
#: The arrival curve's length on the board.
CURVE_MIN = 180
#: The window a zone's printing rate is taken over.
RATE_WINDOW_MIN = 5
#: Below this much printing a zone's rate says too little to divide by.
MIN_STRETCH_S = 20.0
#: Health states a person must clear (paused: cover open, out of labels, a jam; down, dead or silent: power, cable,
#: the Pi). Drained is an operator's choice, not a fault.
FAULT_STATES = frozenset({"paused", "device_down", "dead", "gone", "venue_fault", "unreadable"})
#: A venue's waiting badges read at most (a zone's count beyond this is a lower bound; a venue's queue is far shorter).
MAX_WAITING_READ = 20_000


@dataclass(frozen=True)
class ZoneWait:
    zone: str  # "-" for badges of no zone
    waiting: int  # badges waiting for it now
    per_minute: float  # its printing rate, badges a minute (0.0 without one)
    printing_for_s: float  # how long its current stretch of printing has lasted, 0.0 when idle
    wait_minutes: float | None  # waiting / per_minute; 0.0 when nothing waits; None without a rate


@dataclass(frozen=True)
class PrinterDay:
    printer: str
    per_hour: int  # its prints in the last 60 minutes
    labels_left: int | None  # None: neither the printer nor a roll change says
    labels_source: str  # "printer", "roll" (an estimate) or ""
    fault_since_ms: int | None  # server time it was first seen in a fault, None when not in one
    fault_age_s: float | None


@dataclass
class EventDay:
    server_ms: int
    minute: int  # the current minute (server ms // 60000); the curves end with it
    zones: list[ZoneWait]
    printers: list[PrinterDay]
    #: zone -> badges printed (first copies) per minute, ``CURVE_MIN`` values, oldest first
    arrivals: dict[str, list[int]] = field(default_factory=dict)
    #: zone -> pre-printed badges handed over per minute, as ``arrivals``
    handed_over: dict[str, list[int]] = field(default_factory=dict)
    #: the attendee list's counts (None without a list): expected, arrived (checked in), still to come
    expected: int | None = None
    arrived: int | None = None
    to_come: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _int(raw: Any) -> int:
    try:
        return int(dec(raw) or 0)
    except ValueError:
        return 0  # a hand-written value is no count


async def _buckets(redis: Redis, venue: str, now_ms: int) -> dict[str, int]:
    """The hash ``minutes`` as {field: value}, with buckets older than ``KEEP_MIN`` deleted (a long idle gap leaves
    some that ``count_minute`` did not reach)."""
    key = enc(Keys(venue).minutes)
    raw: dict[Any, Any] = await redis.hgetall(key)
    fields = {dec(k): _int(v) for k, v in raw.items()}
    oldest = now_ms // MINUTE_MS - KEEP_MIN
    stale = [f for f in fields if f.count("|") == 2 and _minute(f) < oldest]
    try:
        for start in range(0, len(stale), 500):
            await redis.hdel(key, *[enc(f) for f in stale[start : start + 500]])
    except NoPermissionError:
        pass  # a reader that may only read (the intake's user): the board or the webhooks sender trims
    gone = set(stale)
    return {f: v for f, v in fields.items() if f not in gone}


def _minute(field_name: str) -> int:
    try:
        return int(field_name.rsplit("|", 1)[1])
    except ValueError:
        return -1


def _series(fields: dict[str, int], what: str, minute: int, length: int) -> dict[str, list[int]]:
    """Per name, the counts of kind ``what`` for the ``length`` minutes ending with ``minute``, oldest first."""
    out: dict[str, list[int]] = {}
    start = minute - length + 1
    for name, value in fields.items():
        parts = name.split("|")
        if len(parts) != 3 or parts[0] != what:
            continue
        m = _minute(name)
        if start <= m <= minute:
            out.setdefault(parts[1], [0] * length)[m - start] += value
    return out


def _rate(per_minute: list[int], now_ms: int, began_ms: int, last_ms: int) -> tuple[float, float]:
    """(badges a minute, seconds of printing) from the last minutes' counts (``per_minute`` ends with the current
    minute) and the zone's stretch of printing."""
    if not began_ms or now_ms - last_ms > 5 * MINUTE_MS:
        return 0.0, 0.0
    stretch_s = (now_ms - began_ms) / 1000
    window_ms = min(RATE_WINDOW_MIN * MINUTE_MS, now_ms - began_ms)
    if stretch_s < MIN_STRETCH_S or window_ms <= 0:
        return 0.0, stretch_s
    start = now_ms - window_ms
    minute = now_ms // MINUTE_MS
    count = 0.0
    for back, value in enumerate(reversed(per_minute[-(RATE_WINDOW_MIN + 1) :])):
        m = minute - back
        lo, hi = m * MINUTE_MS, (m + 1) * MINUTE_MS
        if hi <= start:
            break
        # The oldest minute counts for the share of it inside the window (its prints spread over it); a bucket that
        # began before the stretch holds only the stretch's prints, so it counts whole.
        share = 1.0 if lo >= start or lo <= began_ms else (hi - start) / MINUTE_MS
        count += value * share
    return count / (window_ms / MINUTE_MS), stretch_s


async def _waiting_by_zone(redis: Redis, venue: str) -> dict[str, int]:
    """Badges waiting per zone: the pool's jobs and every printer queue's (the ``pinned`` index names them all), each
    job's ``zone`` read."""
    k = Keys(venue)
    async with redis.pipeline(transaction=False) as pipe:
        pipe.lrange(enc(k.pool), 0, MAX_WAITING_READ - 1)
        pipe.zrange(enc(k.pinned), 0, MAX_WAITING_READ - 1)
        pool, pinned = await pipe.execute()
    ids = [*pool, *(member.split(b"|", 1)[-1] for member in pinned)][:MAX_WAITING_READ]
    waiting: dict[str, int] = {}
    for start in range(0, len(ids), 1000):
        chunk = ids[start : start + 1000]
        async with redis.pipeline(transaction=False) as pipe:
            for job_id in chunk:
                pipe.hget(enc(k.job("")) + job_id, "zone")
            zones: list[Any] = await pipe.execute(raise_on_error=False)
        for zone in zones:
            name = dec(zone) if isinstance(zone, bytes | str) else ""
            waiting[name or "-"] = waiting.get(name or "-", 0) + 1
    return waiting


def _zones(fields: dict[str, int], waiting: dict[str, int], now_ms: int) -> list[ZoneWait]:
    minute = now_ms // MINUTE_MS
    recent = _series(fields, "b", minute, RATE_WINDOW_MIN + 1)
    names = sorted(set(waiting) | set(recent) | {f.split("|")[1] for f in fields if f.startswith("f|")})
    out = []
    for zone in names:
        per_minute, stretch_s = _rate(
            recent.get(zone, [0] * (RATE_WINDOW_MIN + 1)),
            now_ms,
            fields.get(f"f|{zone}", 0),
            fields.get(f"l|{zone}", 0),
        )
        count = waiting.get(zone, 0)
        wait = 0.0 if count == 0 else (round(count / per_minute, 1) if per_minute > 0 else None)
        out.append(ZoneWait(zone, count, round(per_minute, 2), round(stretch_s, 1), wait))
    return out


async def _server_ms(redis: Redis) -> int:
    sec, usec = await redis.time()
    return int(sec) * 1000 + int(usec) // 1000


async def zone_waits(redis: Redis, venue: str) -> list[ZoneWait]:
    """Each zone's badges waiting and expected wait (sorted by zone; "-" for badges of no zone)."""
    now_ms = await _server_ms(redis)
    fields = await _buckets(redis, venue, now_ms)
    return _zones(fields, await _waiting_by_zone(redis, venue), now_ms)


async def _fault_since(redis: Redis, venue: str, view: FleetView) -> tuple[dict[str, int], set[str]]:
    """When each printer now in a fault was first seen in it (printers out of one are forgotten); and the printers
    once seen out of media (``media|<printer>``), which a roll change may have brought back."""
    key = enc(day_keys.faults(venue))
    in_fault = [p.name for p in view.printers if p.state in FAULT_STATES]
    clear = [p.name for p in view.printers if p.state not in FAULT_STATES]
    async with redis.pipeline(transaction=False) as pipe:
        for name in in_fault:
            pipe.hsetnx(key, enc(name), view.server_ms)
        for p in view.printers:
            if p.device == "media_out":
                pipe.hsetnx(key, enc("media|" + p.name), view.server_ms)
        if clear:
            pipe.hdel(key, *[enc(n) for n in clear])
        pipe.hgetall(key)
        # A reader that may only read (the intake's user) gets NOPERM for the writes: it shows what the board or
        # the webhooks sender noted.
        replies: list[Any] = await pipe.execute(raise_on_error=False)
    if isinstance(replies[-1], Exception):
        raise replies[-1]
    since = {dec(k): _int(v) for k, v in replies[-1].items()}
    media = {name.removeprefix("media|") for name in since if name.startswith("media|")}
    return {name: since[name] for name in in_fault if name in since}, media


async def _roll_changes_seen(
    redis: Redis,
    venue: str,
    view: FleetView,
    media: set[str],
    rolls: dict[str, tuple[int, int]],
    printed: dict[str, int],
) -> None:
    """A printer seen out of media that prints again got a new roll: with a roll marked before, its estimate starts
    again from that roll's labels (the venue's stock: the same box). The reader whose HDEL removes the sighting
    writes the mark, so two readers never mark it twice."""
    printing_again = [p for p in view.printers if p.device != "media_out" and p.state not in FAULT_STATES]
    back = [p.name for p in printing_again if p.name in media]
    for name in back:
        if name not in rolls:
            continue  # no roll size known: nothing to start again from (the sighting stays, harmless)
        labels, at = rolls[name][0], printed.get(name, 0)
        mark = {"labels": labels, "printed": at, "at_ms": view.server_ms, "seen": "printer"}
        try:
            if await redis.hdel(enc(day_keys.faults(venue)), enc("media|" + name)) == 1:
                await redis.hset(enc(day_keys.rolls(venue)), enc(name), json.dumps(mark))
                rolls[name] = (labels, at)
        except NoPermissionError:
            return  # a reader that may only read (the intake's user): the board or the webhooks sender marks it


async def _rolls(redis: Redis, venue: str) -> dict[str, tuple[int, int]]:
    """Per printer, its last roll change: (labels on the roll, its prints ever at the change)."""
    out = {}
    for name, raw in (await redis.hgetall(enc(day_keys.rolls(venue)))).items():
        try:
            mark = json.loads(raw)
            out[dec(name)] = (int(mark["labels"]), int(mark["printed"]))
        except (ValueError, KeyError, TypeError):
            continue  # written by hand, not by ``roll``: no estimate rather than a wrong one
    return out


async def event_day(redis: Redis, venue: str, view: FleetView | None = None, curve_min: int = CURVE_MIN) -> EventDay:
    """The event day at one moment. ``view``: the fleet as the caller just read it (the board has one), else read."""
    from attendees.store import list_counts  # a venue without a list does not pay for it at start

    view = view or await fleet(redis, venue)
    now_ms = view.server_ms
    minute = now_ms // MINUTE_MS
    fields = await _buckets(redis, venue, now_ms)
    waiting = await _waiting_by_zone(redis, venue)
    since, media = await _fault_since(redis, venue, view)
    rolls = await _rolls(redis, venue)
    printed = {f.removeprefix("n|"): v for f, v in fields.items() if f.startswith("n|")}
    await _roll_changes_seen(redis, venue, view, media, rolls, printed)
    last_hour = _series(fields, "p", minute, 60)
    printers = []
    for p in view.printers:
        left, source = p.labels_remaining, "printer" if p.labels_remaining is not None else ""
        if left is None and p.name in rolls:
            labels, at = rolls[p.name]
            left, source = max(0, labels - (fields.get(f"n|{p.name}", 0) - at)), "roll"
        began = since.get(p.name)
        printers.append(
            PrinterDay(
                p.name,
                sum(last_hour.get(p.name, ())),
                left,
                source,
                began,
                round((now_ms - began) / 1000, 1) if began is not None else None,
            )
        )
    counts = await list_counts(redis, venue)
    day = EventDay(
        now_ms,
        minute,
        _zones(fields, waiting, now_ms),
        printers,
        _series(fields, "b", minute, curve_min),
        _series(fields, "h", minute, curve_min),
    )
    if counts is not None:
        day.expected, day.arrived = int(counts["expected"]), int(counts["checked_in"])
        day.to_come = max(0, day.expected - day.arrived)
    return day


__all__ = [
    "CURVE_MIN",
    "FAULT_STATES",
    "EventDay",
    "PrinterDay",
    "ZoneWait",
    "event_day",
    "zone_waits",
]
