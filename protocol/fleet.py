"""Read-only views of a venue for people: the fleet status, one job's story, the event log."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from protocol.codec import dec, enc
from protocol.keys import Keys
from protocol.vocabulary import StaffCounts


@dataclass
class PrinterView:
    name: str
    state: str
    location: str = ""
    inflight: str = ""
    depth: int = 0
    printed: int = 0
    beat_age: float | None = None  # seconds since its last heartbeat, None when it has none
    reasons: list[str] = field(default_factory=list)
    device: str = ""
    labels_remaining: int | None = None  # what the printer counts left on its roll, where it does
    confirmed_by: str = ""  # "device" or "spooler": whose word its prints are on; "" from an agent that does not say


@dataclass
class FleetView:
    venue: str
    server_ms: int
    pool: int
    dlq: int
    printers: list[PrinterView]
    counts: dict[str, int]
    #: What the features add to the view, by name (board/venue_view.py adds them), each None where the venue
    #: does not use that feature; the protocol reads none of them.
    sections: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "venue": self.venue,
            "server_ms": self.server_ms,
            "pool": self.pool,
            "dlq": self.dlq,
            "counts": self.counts,
            "staff": StaffCounts.from_stats(self.counts).as_dict(),
            "printers": [p.__dict__ for p in self.printers],
            **self.sections,
        }


def _num(raw: Any) -> int:
    try:
        return int(dec(raw) or 0)
    except ValueError:
        return 0


async def fleet(redis: Redis, venue: str) -> FleetView:
    k = Keys(venue)
    names = sorted(dec(n) for n in await redis.hkeys(enc(k.printers)))
    async with redis.pipeline(transaction=False) as pipe:
        pipe.time()
        pipe.llen(enc(k.pool))
        pipe.llen(enc(k.dlq))
        pipe.hgetall(enc(k.stats))
        pipe.zrange(enc(k.hb), 0, -1, withscores=True)
        for name in names:
            pipe.get(enc(k.health(name)))
            pipe.llen(enc(k.queue(name)))
            # The oldest job held: the one printing (a printer with the next badge waiting holds two).
            pipe.lindex(enc(k.inflight(name)), -1)
        replies = await pipe.execute()
    (sec, usec), pool, dlq, stats, beats = replies[:5]
    now = int(sec) * 1000 + int(usec) // 1000
    beat_ms = {dec(m): int(s) for m, s in beats}
    printers = []
    queued_pinned = 0
    inflight_count = 0
    for i, name in enumerate(names):
        raw_health, depth, inflight = replies[5 + 3 * i : 8 + 3 * i]
        health: dict[str, Any] = {}
        if raw_health:
            try:
                health = json.loads(raw_health)
            except ValueError:
                health = {"state": "unreadable"}
        reasons = health.get("reasons") or []
        state = str(health.get("state", "gone"))
        if name not in beat_ms and state not in ("dead", "stopped"):
            state = "gone" if not raw_health else state
        printers.append(
            PrinterView(
                name=name,
                state=state,
                location=str(health.get("location", "")),
                inflight=dec(inflight),
                depth=int(depth),
                printed=int(health.get("printed", 0) or 0),
                beat_age=(now - beat_ms[name]) / 1000 if name in beat_ms else None,
                reasons=list(reasons) if isinstance(reasons, list) else [],
                device=str(health.get("device", "")),
                labels_remaining=left if isinstance(left := health.get("labels_remaining"), int) else None,
                confirmed_by=str(health.get("confirmed_by") or ""),
            )
        )
        queued_pinned += int(depth)
        inflight_count += 1 if inflight else 0
    counts = {dec(key): _num(value) for key, value in stats.items()}
    counts["queued"] = int(pool) + queued_pinned
    counts["printing"] = inflight_count
    return FleetView(
        venue,
        now,
        int(pool),
        int(dlq),
        printers,
        counts,
    )


async def job_detail(redis: Redis, venue: str, job_id: str, max_events: int = 2000) -> dict[str, Any] | None:
    """A job's hash and every event about it (newest events scanned first, up to ``max_events``)."""
    k = Keys(venue)
    raw = await redis.hgetall(enc(k.job(job_id)))
    if not raw:
        return None
    job: dict[str, Any] = {dec(key): dec(value) for key, value in raw.items()}
    done_by = await redis.get(enc(k.done(job_id)))
    job["done"] = dec(done_by)
    events = []
    entries: Any = await redis.xrevrange(enc(k.events), count=max_events)
    for entry_id, fields in entries:
        data = {dec(key): dec(value) for key, value in fields.items()}
        if data.get("job_id") == job_id:
            events.append({"id": dec(entry_id), **data})
    return {**job, "events": list(reversed(events))}


async def events_after(redis: Redis, venue: str, after: str, count: int, block_ms: int | None) -> list[dict[str, str]]:
    """Events newer than stream id ``after`` ("0" for all, "$" for only new ones when blocking)."""
    k = Keys(venue)
    reply: Any = await redis.xread({enc(k.events): after}, count=count, block=block_ms)
    out = []
    for _stream, entries in reply or []:
        for entry_id, fields in entries:
            out.append({"id": dec(entry_id), **{dec(a): dec(b) for a, b in fields.items()}})
    return out


async def tail_events(redis: Redis, venue: str, count: int) -> list[dict[str, str]]:
    k = Keys(venue)
    entries: Any = await redis.xrevrange(enc(k.events), count=count)
    return [{"id": dec(i), **{dec(a): dec(b) for a, b in f.items()}} for i, f in reversed(entries)]
