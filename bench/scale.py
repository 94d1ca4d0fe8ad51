"""Scale: 500 agents against one Redis: commands per second and Redis CPU idle and printing, and death detection.

Run: .venv/bin/python -m bench.scale [--agents 500] [--venues 10] [--single-venue-agents 500] [--window 8]
Prints a table and writes bench/results/scale.json.

500 full agent processes do not fit on a 2-core machine next to Redis, so this runs 500 agents' real loops in one
process: the pull loop (agent/pull.py), the heartbeat (agent/heartbeat.py) and the sweep (agent/sweep.py), each
agent on its own Redis client and a ``sim`` printer that prints a badge in 2 s, at default timings: a beat every
second; a sweep every half second once beating for the dead-after window; take, the idle steal look, a blocking pop
of the pool for 1 s; begin, print, confirm with the next take in the same round trip. Left out: printer probes (the
printer is ready throughout), the journal's file (kept in memory) and HTTP: they do not touch Redis. Redis figures
come from the server: ``INFO stats`` total_commands_processed (Lua-internal calls included) and ``INFO cpu``
(used_cpu_sys + used_cpu_user) deltas.

Shapes: 10 venues of 50 agents, and one venue of 500 (until the pinned index, each idle look read every peer's
queue: 499 reads per look, ~125,000 a second for that venue). While printing, one job in five is pinned to a
printer of its venue, so the index is written and emptied at the rush's rate. Death detection: three agents stop
dead at a random moment; the time from their last acknowledged heartbeat, and from the stop, to a peer's reclaim
removing them from the heartbeat set. Late beats: a beat that starts more than half an interval after it was due
(the one process running 500 agents falling behind).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from agent.config import TimingConfig
from agent.gate import Gate
from agent.heartbeat import Heartbeat
from agent.journal import Journal
from agent.printer import Printer
from agent.pull import PullLoop
from agent.pull_events import PullEvents
from agent.sweep import Sweep
from bench.common import bench_main, fmt, fmt_spread, log_to_file, redis_cpu, redis_server, spread, table, verdict
from drivers.sim import SimDriver
from protocol.jobs import parse_job
from protocol.store import Store

HB = 1.0
DEAD_AFTER = 3.0
BLOCK = 1.0
AFFINITY = 10.0
PRINT = 2.0
PINNED_SHARE = 0.2  # of the jobs fed while printing
TIMING = TimingConfig(
    heartbeat_interval=HB, dead_after_misses=int(DEAD_AFTER / HB), block_timeout=BLOCK, affinity_wait=AFFINITY
)


class BenchAgent:
    """One agent's Redis-facing loops, the real ones, on a simulated printer that is always ready."""

    def __init__(self, url: str, venue: str, name: str) -> None:
        # The pull loop keeps one connection (dedicated), its blocking pop and steal look take one from the pool, the
        # heartbeat and the sweep one each.
        self.redis = Redis.from_url(url, socket_timeout=BLOCK + 5, max_connections=6)
        self.store = Store(self.redis, venue, dedicated=True)
        self.me = name
        self.stopping = asyncio.Event()
        ready = asyncio.Event()
        ready.set()
        self.heartbeat = Heartbeat(self.store, name, TIMING, self._health)
        self.sweep = Sweep(self.store, name, TIMING, self.heartbeat, self.stopping)
        self.pull = PullLoop(
            self.store,
            Journal(None),
            Printer(SimDriver(name, PRINT), print_timeout=PRINT + 5, io_timeout=1.0),
            Gate(self.stopping, self.heartbeat, ready),
            PullEvents(),
            me=name,
            location="bench",
            timing=TIMING,
            max_attempts=3,
        )
        self.tasks: list[asyncio.Task[None]] = []
        self._last_beat_start: float | None = None
        self.falls_behind = 0

    def _health(self) -> dict[str, Any]:
        """Called as each beat starts: what it publishes, and a look at whether it comes late."""
        now = time.monotonic()
        if self._last_beat_start is not None and now - self._last_beat_start > HB * 1.5:
            self.falls_behind += 1
        self._last_beat_start = now
        return {"state": "ready", "printed": self.pull.printed, "location": "bench"}

    async def start(self) -> None:
        await asyncio.sleep(random.uniform(0, HB))  # agents of a venue start at different moments
        self.tasks = [
            asyncio.create_task(self.heartbeat.run()),
            asyncio.create_task(self.sweep.run()),
            asyncio.create_task(self.pull.run()),
        ]

    async def stop(self) -> None:
        """Dead: the tasks end mid-call, no goodbye (connections are dropped with the server at the end)."""
        self.stopping.set()
        for t in self.tasks:
            t.cancel()
        # Bounded: a task cancelled inside redis-py's connection handling can take a while to unwind.
        await asyncio.wait(self.tasks, timeout=2)


async def server_load(redis: Redis, seconds: float) -> dict[str, float]:
    s0, c0, t0 = int((await redis.info("stats"))["total_commands_processed"]), await redis_cpu(redis), time.time()
    await asyncio.sleep(seconds)
    s1, c1, t1 = int((await redis.info("stats"))["total_commands_processed"]), await redis_cpu(redis), time.time()
    return {"commands_per_s": (s1 - s0) / (t1 - t0), "cpu_core_fraction": (c1 - c0) / (t1 - t0)}


async def run_shape(url: str, agents: int, venues: int, window: float, kills: int) -> dict[str, Any]:
    redis = Redis.from_url(url)
    names = [(f"v{v}", f"v{v}-p{i}") for v in range(venues) for i in range(agents // venues)]
    fleet = [BenchAgent(url, venue, name) for venue, name in names]
    starting = [asyncio.create_task(a.start()) for a in fleet]
    out: dict[str, Any] = {"agents": len(fleet), "venues": venues}
    try:
        await asyncio.gather(*starting)
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
        out["printed"] = sum(a.pull.printed for a in fleet)
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


async def detect(redis: Redis, victim: BenchAgent) -> dict[str, float]:
    await asyncio.sleep(random.uniform(0, HB))
    await victim.stop()  # dead: no goodbye, no leaving the heartbeat set
    stopped = time.monotonic()
    last_beat = victim.heartbeat.last_beat_ok or stopped  # when the last acknowledged beat was sent
    hb = victim.store.keys.hb
    async with asyncio.timeout(30):
        while await redis.zscore(hb, victim.me) is not None:
            await asyncio.sleep(0.01)
    gone = time.monotonic()
    return {"from_last_beat_s": gone - last_beat, "from_stop_s": gone - stopped}


async def main_async(agents: int, venues: int, window: float, single: int) -> dict[str, Any]:
    shapes = {}
    with tempfile.TemporaryDirectory(prefix="badge-bench-scale-") as tmp:
        log_to_file(Path(tmp) / "bench.log")  # the agents' own log lines, as in production, out of the tables
        # A server per shape: nothing of one shape (a task still unwinding its cancellation) can reach the next one's.
        shapes_run = ((f"{venues} venues x {agents // venues}", agents, venues), (f"1 venue x {single}", single, 1))
        for label, n, v in shapes_run:
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
