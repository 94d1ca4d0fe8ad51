"""Dispatch latency on an idle fleet: enqueue to the first byte at the printer, p50 / p99.

Run: .venv/bin/python -m bench.latency [--samples N] [--repeats R]
Prints a table and writes bench/results/latency.json.

Four real agents run in this process on instant simulated printers, default timings, each idle (blocked on BLMOVE).
One badge at a time is enqueued with the real ``enqueue`` script; the clock starts just before that call and stops
when a printer's ``print()`` is entered (a ``SimDriver`` subclass notes ``time.perf_counter()``): both ends on one
clock. Between badges the bench waits for the confirm and a random 10-40 ms, so every badge finds the fleet idle.
Beside it: the same agents with the journal in memory (what the fsynced ``sending`` record costs), and saq (one idle
worker, concurrency 1: enqueue to the job function being called). The three take turns within each repeat.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from agent.config import load_config
from agent.runtime import Agent
from bench.common import bench_main, fmt, fmt_spread, log_to_file, percentile, redis_server, spread, table, verdict
from bench.stamp import StampDriver
from cli.redis_server import RedisServer
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import agent_config
from tests.support.waiting import wait_until

FLEET = 4
SYSTEMS = ("agent", "agent, journal in memory", "saq")


async def agents_latency(server: RedisServer, tmp: Path, tag: str, samples: int, journal: bool) -> list[float]:
    redis = Redis.from_url(server.url)
    venue = f"lat-{tag}"
    store = Store(redis, venue)
    folder = tmp / venue
    folder.mkdir()
    by_job: dict[str, float] = {}
    agents = []
    for i in range(FLEET):
        config = load_config(agent_config(folder / f"p{i}.yaml", venue, server.url, f"p{i}", 0.0, False, journal))
        agents.append(Agent(config, StampDriver(f"p{i}", 0.0, [], by_job)))
    tasks = [asyncio.create_task(a.run()) for a in agents]
    latencies = []
    try:
        async with asyncio.timeout(30):
            while await redis.zcard(Keys(venue).hb) < FLEET:
                await asyncio.sleep(0.05)
        await asyncio.sleep(1.5)  # every agent has looked for work, found none, and is blocked on BLMOVE
        for i in range(samples):
            job = parse_job({"attendee_id": f"L-{i}", "name": f"Attendee {i}"})
            payload = job.payload()
            t0 = time.perf_counter()
            await store.enqueue(job.job_id, payload, None)
            job_id, done = job.job_id, i + 1
            await wait_until(lambda: job_id in by_job, 10, every=0.001)  # noqa: B023 - awaited within this iteration
            latencies.append(by_job[job_id] - t0)
            await wait_until(lambda: sum(a.printed for a in agents) >= done, 10, every=0.001)  # noqa: B023
            await asyncio.sleep(random.uniform(0.01, 0.04))
    finally:
        for a in agents:
            a.stop()
        await asyncio.wait_for(asyncio.gather(*tasks), 30)
        await redis.aclose()
    return latencies


async def saq_latency(server: RedisServer, tag: str, samples: int) -> list[float]:
    from saq import Queue, Worker

    called: dict[str, float] = {}

    async def noop(ctx: Any, n: str) -> None:
        called[n] = time.perf_counter()

    queue = Queue.from_url(server.url, name=f"saq-lat-{tag}")
    await queue.connect()
    worker = Worker(queue, functions=[("noop", noop)], concurrency=1)
    task = asyncio.create_task(worker.start())
    latencies = []
    try:
        await asyncio.sleep(1.5)
        for i in range(samples):
            t0 = time.perf_counter()
            await queue.enqueue("noop", n=str(i))
            await wait_until(lambda: str(i) in called, 10, every=0.001)  # noqa: B023 - awaited within this iteration
            latencies.append(called[str(i)] - t0)
            await asyncio.sleep(random.uniform(0.01, 0.04))
    finally:
        await worker.stop()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await queue.disconnect()
    return latencies


async def main_async(samples: int, repeats: int) -> dict[str, Any]:
    raw: dict[str, list[list[float]]] = {s: [] for s in SYSTEMS}
    with tempfile.TemporaryDirectory(prefix="badge-bench-lat-") as tmpdir, redis_server() as server:
        tmp = Path(tmpdir)
        log_to_file(tmp / "bench.log")
        for r in range(repeats):
            raw["agent"].append(await agents_latency(server, tmp, f"{r}a", samples, journal=True))
            raw["agent, journal in memory"].append(await agents_latency(server, tmp, f"{r}m", samples, journal=False))
            raw["saq"].append(await saq_latency(server, f"{r}", samples))
    ms = {s: [[x * 1000 for x in run] for run in runs] for s, runs in raw.items()}
    out: dict[str, Any] = {"fleet": FLEET, "samples_per_repeat": samples, "repeats": repeats, "systems": {}}
    for s, runs in ms.items():
        everything = [x for run in runs for x in run]
        out["systems"][s] = {
            "p50_ms": spread([percentile(run, 50) for run in runs]),
            "p99_ms": spread([percentile(run, 99) for run in runs]),
            "all_p50_ms": percentile(everything, 50),
            "all_p99_ms": percentile(everything, 99),
            "all_max_ms": max(everything),
            "raw_ms": runs,
        }
    ratio = [percentile(a, 50) / percentile(b, 50) for a, b in zip(ms["agent"], ms["saq"], strict=True)]
    out["ratio_p50_agent_vs_saq"] = spread(ratio)
    out["targets"] = {"p50_le_2ms": out["systems"]["agent"]["all_p50_ms"] <= 2.0}
    return out


def report(res: dict[str, Any]) -> str:
    rows = []
    for s, d in res["systems"].items():
        rows.append([s, fmt_spread(d["p50_ms"]), fmt_spread(d["p99_ms"]), fmt(d["all_p50_ms"]), fmt(d["all_p99_ms"])])
    t = res["targets"]["p50_le_2ms"]
    return "\n".join(
        [
            table(
                f"Dispatch latency, idle fleet of {res['fleet']}: enqueue -> first byte at the printer, ms "
                f"({res['samples_per_repeat']} badges x {res['repeats']} repeats)",
                "lower is better; per-repeat p50 and p99 as min / median / max; 'all' = pooled",
                ["system", "p50 (min/med/max)", "p99 (min/med/max)", "all p50", "all p99"],
                rows,
            ),
            f"agent p50 / saq p50 within a repeat: {fmt_spread(res['ratio_p50_agent_vs_saq'])} (lower is better)",
            f"target agent p50 <= 2 ms: {verdict(t)}",
        ]
    )


OPTIONS = [("--samples", 150, ""), ("--repeats", 3, "")]  # flag, default, help: see bench_main

if __name__ == "__main__":
    bench_main("latency", __doc__, main_async, report, OPTIONS)
