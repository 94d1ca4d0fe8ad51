"""The expected wait a zone states (eventday/counts.py) against the waits that happened, once the zone has printed
for two minutes.

Run: .venv/bin/python -m bench.wait [--print-time S] [--minutes M]
Prints one table and writes bench/results/wait.json.

One zone of two real agents (in this process) on simulated printers of ``--print-time`` seconds a badge, on a private
redis-server (loopback). A burst of badges builds a queue, then badges arrive for M minutes at a steady pace: the
first half of it at 90% of the zone's speed (the queue shrinks), the second at 115% (it grows). At each badge's
enqueue the zone's expected wait is read (``zone_waits``, what the kiosk and the board say then); its actual wait is
its confirm's ``printed_ms`` minus its ``enqueued_ms`` (server times). Judged on the badges enqueued after the zone has
printed for two minutes: their relative error |expected - actual| / actual. Target: within 30%.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from bench.common import bench_main, fmt, percentile, redis_server, table, verdict
from eventday.counts import zone_waits
from protocol.codec import dec, enc
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import running_agent

VENUE = "bench-wait"
ZONE = ("hall-a", ("a1", "a2"))


async def enqueue(store: Store, n: int) -> str:
    job = parse_job({"attendee_id": f"w-{n}", "name": f"Guest {n}", "printer": ZONE[1][n % 2], "zone": ZONE[0],
                     "zone_printers": list(ZONE[1])})  # fmt: skip
    await store.enqueue(job.job_id, job.payload(), job.printer, zone=job.zoned)
    return job.job_id


async def run(print_time: float, minutes: float) -> dict[str, Any]:
    with redis_server() as server, tempfile.TemporaryDirectory(prefix="badge-bench-wait-") as tmp:
        redis = Redis.from_url(server.url)
        store = Store(redis, VENUE)
        speed = 2 / print_time  # badges a second, both printers
        said: dict[str, tuple[float | None, float]] = {}  # job -> (expected wait s, seconds since the first print)
        kw: dict[str, Any] = {"print_time": print_time}
        async with (
            running_agent(Path(tmp), VENUE, server.url, "a1", **kw),
            running_agent(Path(tmp), VENUE, server.url, "a2", **kw),
        ):
            n = 0
            for _ in range(int(speed * 60)):  # a minute's worth at once: the doors open
                await enqueue(store, n)
                n += 1
            start = time.monotonic()
            end = start + minutes * 60
            while (now := time.monotonic()) < end:
                pace = 0.9 if now - start < minutes * 30 else 1.15
                (zone,) = [w for w in await zone_waits(redis, VENUE) if w.zone == ZONE[0]] or [None]
                job_id = await enqueue(store, n)
                n += 1
                if zone is not None:
                    # The wait said to this badge: the zone's, counting the badge itself.
                    wait = None if zone.per_minute <= 0 else (zone.waiting + 1) / zone.per_minute * 60
                    said[job_id] = (wait, zone.printing_for_s)
                await asyncio.sleep(1 / (speed * pace))
            # Let the rest print, so every measured badge has its actual wait.
            deadline = time.monotonic() + n / speed + 30
            while time.monotonic() < deadline:
                if await redis.llen(enc(Keys(VENUE).queue("a1"))) + await redis.llen(enc(Keys(VENUE).queue("a2"))) == 0:
                    break
                await asyncio.sleep(1)
        rows = []
        for job_id, (expected, printing_for) in said.items():
            times = await redis.hmget(enc(Keys(VENUE).job(job_id)), "enqueued_ms", "printed_ms")
            if expected is None or printing_for < 120 or not times[1]:
                continue
            actual = (int(dec(times[1])) - int(dec(times[0]))) / 1000
            rows.append((expected, actual, abs(expected - actual) / actual))
        await redis.aclose()
    errors = [r[2] for r in rows]
    return {
        "print_time_s": print_time,
        "minutes": minutes,
        "badges_judged": len(rows),
        "median_relative_error": statistics.median(errors) if errors else None,
        "p90_relative_error": percentile(errors, 90) if errors else None,
        "within_30_percent": sum(e <= 0.3 for e in errors) / len(errors) if errors else None,
        "expected_vs_actual_s": [(round(e, 1), round(a, 1)) for e, a, _ in rows[:: max(1, len(rows) // 20)]],
    }


def report(r: dict[str, Any]) -> str:
    ok = r["p90_relative_error"] is not None and r["p90_relative_error"] <= 0.3
    return table(
        f"A zone's expected wait against the waits that happened ({r['badges_judged']} badges, after two minutes "
        "of printing)",
        "lower is better",
        ["what", "measured", "target", "met"],
        [
            ["median |expected - actual| / actual", fmt(r["median_relative_error"] or 0, 3), "", ""],
            ["p90 |expected - actual| / actual", fmt(r["p90_relative_error"] or 0, 3), "<= 0.30", verdict(ok)],
            ["badges within 30%", fmt(r["within_30_percent"] or 0, 3), "", ""],
        ],
    )


if __name__ == "__main__":
    bench_main(
        "wait",
        __doc__,
        run,
        report,
        [
            ("--print-time", 1.5, "seconds a badge on each of the two printers"),
            ("--minutes", 4.0, "minutes of arrivals"),
        ],
    )
