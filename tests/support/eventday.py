"""A venue in the middle of its rush, made through the protocol's own steps against a real redis-server: printers
beating, zone badges enqueued, some taken, begun and confirmed (as each printer's agent would after its printer said
so), one printer out of labels, one roll marked. The board's tests and bench/board.py read it back."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from redis.asyncio import Redis

from eventday.rolls import mark_roll
from protocol.codec import enc
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store


@dataclass
class Rush:
    zones: dict[str, list[str]]  # zone -> its printers
    printed: dict[str, int] = field(default_factory=dict)  # zone -> first badges confirmed
    waiting: dict[str, int] = field(default_factory=dict)  # zone -> badges still queued
    out_of_labels: str = ""
    rolled: tuple[str, int] = ("", 0)  # the printer a roll was marked for, and its labels
    earlier: dict[str, int] = field(default_factory=dict)  # zone -> arrivals counted in the morning's buckets


async def make_rush(
    redis: Redis,
    venue: str,
    printers: int = 50,
    zones: int = 10,
    out_of_labels: bool = True,
    stretch_s: int = 120,
    morning_min: int = 0,
) -> Rush:
    """``printers`` printers in ``zones`` zones; zone i gets 3 (i + 1) badges and prints i + 1 of them. The zones'
    printing started ``stretch_s`` ago (written into their counts: a test does not wait through a rush).
    ``morning_min``: that many minutes of earlier arrivals, a rise and a fall ending 10 minutes ago, written as
    ``confirm`` counts them (what a chart of the last hours shows; none fall in the rate's window)."""
    store = Store(redis, venue)
    per_zone = printers // zones
    rush = Rush({f"zone-{z}": [f"p-{z * per_zone + i:02d}" for i in range(per_zone)] for z in range(zones)})
    for names in rush.zones.values():
        for name in names:
            await store.beat(name, {"state": "ready", "location": f"desk {name}", "printed": 0}, 600_000, first=True)
    # A new roll on zone-0's first printer before the rush: its labels left count down by what it prints.
    rush.rolled = (rush.zones["zone-0"][0], 100)
    await mark_roll(redis, venue, *rush.rolled)
    for z, (zone, names) in enumerate(rush.zones.items()):
        jobs = []
        for n in range(3 * (z + 1)):
            job = parse_job({"attendee_id": f"{zone}-{n}", "name": f"Guest {n}", "printer": names[n % len(names)],
                             "zone": zone, "zone_printers": names})  # fmt: skip
            added, _ = await store.enqueue(job.job_id, job.payload(), job.printer, zone=job.zoned)
            assert added
            jobs.append((job.job_id, job.printer or ""))
        for job_id, printer in jobs[: z + 1]:
            assert await store.take(printer) is not None
            begun = await store.begin(printer, f"desk {printer}", job_id)
            assert begun.kind == "print", begun
            assert (await store.confirm(printer, f"desk {printer}", job_id, begun.epoch)).kind == "printed"
        rush.printed[zone], rush.waiting[zone] = z + 1, 2 * (z + 1)
    sec, _ = await redis.time()
    began = int(sec) * 1000 - stretch_s * 1000
    await redis.hset(enc(Keys(venue).minutes), mapping={f"f|{zone}": began for zone in rush.zones})
    if morning_min:
        now_minute = int(sec) // 60
        counts: dict[str, int] = {}
        for z, zone in enumerate(rush.zones):
            rush.earlier[zone] = 0
            for back in range(morning_min):
                # A hump: doors open, the rush, the late ones; each zone a little apart from the next.
                shape = math.exp(-(((back - morning_min / 2 - z * 3) / (morning_min / 5)) ** 2))
                n = round(3 * shape * (1 + z % 3))
                if n:
                    counts[f"b|{zone}|{now_minute - 10 - back}"] = n
                    rush.earlier[zone] += n
        await redis.hset(enc(Keys(venue).minutes), mapping=counts)
    if out_of_labels:
        rush.out_of_labels = rush.zones["zone-1"][1]
        await store.beat(
            rush.out_of_labels,
            {"state": "paused", "reasons": ["out of labels"], "location": f"desk {rush.out_of_labels}"},
            600_000,
            first=False,
        )
    return rush
