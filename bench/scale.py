"""Scale: 500 agents against one Redis: commands per second and Redis CPU idle and printing, and death detection.

Run: .venv/bin/python -m bench.scale [--agents 500] [--venues 10] [--single-venue-agents 500] [--window 8]
Prints a table and writes bench/results/scale.json.

500 full agent processes do not fit on a 2-core machine next to Redis, so this runs a lighter loop per agent in one
process that makes the agent's real Redis calls through ``Store``, on the agent's schedule at default timings:
``beat`` every second; ``sweep`` every half second once beating for the dead-after window (and ``reclaim`` of what it
returns); the pull loop's ``take``, the idle ``steal`` look (one ZRANGE of the venue's pinned index, at most every
2 s, and the steal script only for a job old enough) and ``BLMOVE pool`` for 1 s; on a job ``begin``, a 2 s
simulated print, ``confirm`` with the next ``take`` in the same pipeline. No printer probes, journal or HTTP: they
do not touch Redis. Redis figures come from the server: ``INFO stats`` total_commands_processed (Lua-internal calls
included) and ``INFO cpu`` (used_cpu_sys + used_cpu_user) deltas.

Shapes: 10 venues of 50 agents, and one venue of 500 (until the pinned index, each idle look read every peer's
queue: 499 reads per look, ~125,000 a second for that venue). While printing, one job in five is pinned to a
printer of its venue, so the index is written and emptied at the rush's rate. Death detection: three agents stop
dead at a random moment; the time from their last acknowledged heartbeat, and from the stop, to a peer's reclaim
removing them from the heartbeat set.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import sys
import time
from collections.abc import Coroutine
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from agent.jobs import parse_job
from agent.protocol.replies import BeginKind, Source, Taken
from agent.protocol.store import Store
from bench.common import bench_main, fmt, fmt_spread, redis_cpu, redis_server, spread, table, verdict

HB = 1.0
DEAD_AFTER = 3.0
BLOCK = 1.0
AFFINITY = 10.0
PRINT = 2.0
PINNED_SHARE = 0.2  # of the jobs fed while printing


async def quiet(loop: Coroutine[Any, Any, None]) -> None:
    """A loop that ends when its Redis goes away (the bench stops each shape's server under its agents)."""
    with contextlib.suppress(RedisError, OSError):
        await loop


class LiteAgent:
    """The agent's Redis traffic, through the real ``Store`` calls, without the printer and the journal."""

    def __init__(self, url: str, venue: str, name: str) -> None:
        # max_connections: the blocking BLMOVE holds one, the heartbeat and sweep need their own.
        self.redis = Redis.from_url(url, socket_timeout=BLOCK + 5, max_connections=4)
        self.store = Store(self.redis, venue)
        self.me = name
        self.last_beat = 0.0
        self.beating_since: float | None = None
        self.printed = 0
        self.last_steal = 0.0
        self.tasks: list[asyncio.Task[None]] = []
        self.falls_behind = 0

    def start(self) -> None:
        self.tasks = [asyncio.create_task(quiet(f())) for f in (self.beat_loop, self.sweep_loop, self.pull_loop)]

    async def stop(self) -> None:
        """Dead: the tasks end mid-call, no goodbye (connections are dropped with the server at the end)."""
        for t in self.tasks:
            t.cancel()
        # Bounded: a task cancelled inside redis-py's connection handling can take a while to unwind.
        await asyncio.wait(self.tasks, timeout=2)

    async def beat_loop(self) -> None:
        first = True
        await asyncio.sleep(random.uniform(0, HB))  # agents of a venue start at different moments
        while True:
            started = time.monotonic()
            health = {"state": "ready", "printed": self.printed, "location": "bench"}
            await self.store.beat(self.me, health, int(HB * 5 * 1000), first)
            first = False
            self.last_beat = time.time()
            if self.beating_since is None:
                self.beating_since = started
            late = time.monotonic() - started
            if late > HB:
                self.falls_behind += 1
            await asyncio.sleep(max(0.0, HB - late))

    async def sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(HB / 2)  # the agent sweeps twice per heartbeat interval
            if self.beating_since is None or time.monotonic() - self.beating_since < DEAD_AFTER:
                continue
            for victim in await self.store.sweep(self.me, int(DEAD_AFTER * 1000), int(HB / 2 * 1000)):
                if victim != self.me:
                    await self.store.reclaim(victim, self.me, int(DEAD_AFTER * 1000))

    async def pull_loop(self) -> None:
        while self.beating_since is None:
            await asyncio.sleep(0.05)
        taken: Taken | None = None
        took_nothing = False  # the take that rode with the last confirm found both lists empty
        while True:
            if not took_nothing and taken is None:
                taken = await self.store.take(self.me)
            job_id = taken.job_id if taken is not None and taken.source is not Source.DRAINED else None
            taken, took_nothing = None, False
            if job_id is None:
                job_id = await self.steal()
            if job_id is None:
                job_id = await self.store.wait_pool(self.me, BLOCK)
            if job_id is not None:
                begun = await self.store.begin(self.me, "bench", job_id)
                if begun.kind is BeginKind.PRINT:
                    await asyncio.sleep(PRINT)
                    # As the agent does: the next take rides in the confirm's round trip.
                    _, taken = await self.store.confirm_then_take(self.me, "bench", job_id, begun.epoch)
                    took_nothing = taken is None
                    self.printed += 1

    async def steal(self) -> str | None:
        now = time.monotonic()
        if now - self.last_steal < max(BLOCK, AFFINITY / 5):
            return None
        self.last_steal = now
        return await self.store.steal(self.me, int(AFFINITY * 1000))


async def server_load(redis: Redis, seconds: float) -> dict[str, float]:
    s0, c0, t0 = int((await redis.info("stats"))["total_commands_processed"]), await redis_cpu(redis), time.time()
    await asyncio.sleep(seconds)
    s1, c1, t1 = int((await redis.info("stats"))["total_commands_processed"]), await redis_cpu(redis), time.time()
    return {"commands_per_s": (s1 - s0) / (t1 - t0), "cpu_core_fraction": (c1 - c0) / (t1 - t0)}


async def run_shape(url: str, agents: int, venues: int, window: float, kills: int) -> dict[str, Any]:
    redis = Redis.from_url(url)
    names = [(f"v{v}", f"v{v}-p{i}") for v in range(venues) for i in range(agents // venues)]
    fleet = [LiteAgent(url, venue, name) for venue, name in names]
    for a in fleet:
        a.start()
    out: dict[str, Any] = {"agents": len(fleet), "venues": venues}
    try:
        await asyncio.sleep(DEAD_AFTER + 3.0)  # all beating, past the sweep warm-up and the first steal looks
        out["idle"] = await server_load(redis, window)
        progress(f"{len(fleet)} agents in {venues} venue(s): idle measured")
        # Printing: keep every printer busy, as at a rush (each job takes a 2 s print).
        stores = {v: Store(redis, v) for v in {venue for venue, _ in names}}
        printers = {v: [name for venue, name in names if venue == v] for v in stores}
        feeding = asyncio.create_task(feed(stores, printers, len(fleet) / PRINT * 1.1, window + 3))
        await asyncio.sleep(3.0)
        out["printing"] = await server_load(redis, window)
        progress("printing measured")
        await feeding
        out["printed"] = sum(a.printed for a in fleet)
        if kills:
            victims = [fleet[i * len(fleet) // kills] for i in range(kills)]
            out["detection"] = await asyncio.gather(*(detect(redis, v) for v in victims))
            progress("deaths detected")
        out["heartbeats_late"] = sum(a.falls_behind for a in fleet)
    finally:
        await asyncio.gather(*(a.stop() for a in fleet))
        # Closing 500 clients one by one after cancelled commands is slow in redis-py; bounded, then let go.
        closing = asyncio.gather(*(a.redis.aclose() for a in fleet), return_exceptions=True)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(closing, 5)
        await redis.aclose()
    return out


def progress(text: str) -> None:
    print(f"  scale: {text}", file=sys.stderr, flush=True)


async def feed(stores: dict[str, Store], printers: dict[str, list[str]], per_second: float, seconds: float) -> None:
    n = 0
    t0 = time.monotonic()
    venues = list(stores)
    rng = random.Random(7)  # the same pins in every run
    while time.monotonic() - t0 < seconds:
        due = int((time.monotonic() - t0) * per_second)
        while n < due:
            venue = venues[n % len(venues)]
            pin = rng.choice(printers[venue]) if rng.random() < PINNED_SHARE else None
            job = parse_job({"attendee_id": f"S-{n}", "name": f"Attendee {n}", "printer": pin})
            await stores[venue].enqueue(job.job_id, job.payload(), job.printer)
            n += 1
        await asyncio.sleep(0.01)


async def detect(redis: Redis, victim: LiteAgent) -> dict[str, float]:
    await asyncio.sleep(random.uniform(0, HB))
    await victim.stop()  # dead: no goodbye, no leaving the heartbeat set
    stopped = time.time()
    hb = victim.store.keys.hb
    async with asyncio.timeout(30):
        while await redis.zscore(hb, victim.me) is not None:
            await asyncio.sleep(0.01)
    gone = time.time()
    return {"from_last_beat_s": gone - victim.last_beat, "from_stop_s": gone - stopped}


async def main_async(agents: int, venues: int, window: float, single: int) -> dict[str, Any]:
    shapes = {}
    # A server per shape: nothing of one shape (a task still unwinding its cancellation) can reach the next one's.
    for label, n, v in ((f"{venues} venues x {agents // venues}", agents, venues), (f"1 venue x {single}", single, 1)):
        with redis_server() as server:
            shapes[label] = await run_shape(server.url, n, v, window, kills=3)
    detections = [d["from_last_beat_s"] for s in shapes.values() for d in s.get("detection", [])]
    worst_cpu = max(max(s["idle"]["cpu_core_fraction"], s["printing"]["cpu_core_fraction"]) for s in shapes.values())
    return {
        "timings": f"heartbeat {HB:g} s, dead after {DEAD_AFTER:g} s, BLMOVE {BLOCK:g} s, print {PRINT:g} s",
        "window_s": window,
        "shapes": shapes,
        "detection_from_last_beat_s": spread(detections),
        "targets": {
            "detection_le_dead_after_plus_1s": bool(detections) and max(detections) <= DEAD_AFTER + 1.0,
            "redis_cpu_lt_quarter_core": worst_cpu < 0.25,
        },
    }


def report(res: dict[str, Any]) -> str:
    rows = []
    for label, s in res["shapes"].items():
        det = spread([d["from_last_beat_s"] for d in s.get("detection", [])])
        rows.append(
            [
                label,
                fmt(s["idle"]["commands_per_s"], 0),
                fmt(s["idle"]["cpu_core_fraction"] * 100, 1),
                fmt(s["printing"]["commands_per_s"], 0),
                fmt(s["printing"]["cpu_core_fraction"] * 100, 1),
                s["printed"],
                fmt_spread(det),
                s["heartbeats_late"],
            ]
        )
    t = res["targets"]
    return "\n".join(
        [
            table(
                f"Scale: {res['timings']} (Redis INFO deltas over {res['window_s']:g} s)",
                "lower is better except badges printed; CPU in % of one core",
                [
                    "shape",
                    "idle cmd/s",
                    "idle CPU %",
                    "printing cmd/s",
                    "printing CPU %",
                    "badges printed",
                    "death detected s (last beat -> reclaimed)",
                    "late beats",
                ],
                rows,
            ),
            f"target detection <= dead-after + 1 s ({DEAD_AFTER + 1:g} s): "
            f"{verdict(t['detection_le_dead_after_plus_1s'])}; Redis < 25% of a core: "
            f"{verdict(t['redis_cpu_lt_quarter_core'])}",
        ]
    )


# flag, default, help: see bench_main
OPTIONS = [
    ("--agents", 500, ""),
    ("--venues", 10, ""),
    ("--window", 8.0, ""),
    ("--single-venue-agents", 500, ""),
]

if __name__ == "__main__":
    bench_main("scale", __doc__, main_async, report, OPTIONS)
