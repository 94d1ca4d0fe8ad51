"""Balance: late binding (pull when ready) against push dispatchers, on the same arrivals.

Run: .venv/bin/python -m bench.balance [--repeats R] [--badges N] [--fleet-badges F]
Prints a table and writes bench/results/balance.json.

Fleet: four printers at 1x, 1x, 2x and 0.5x speed (1x = 0.2 s a badge); the 2x printer runs out of labels from
3 s to 8 s into the run. A few hundred badges arrive in eight bursts at four lanes (lane 0 the busiest) over 8 s.

* Ours is real: four ``badge-agent run`` processes on simulated printers against a real redis-server, jobs enqueued
  in real time by this process, the outage switched through the printer's control file, every time read from the
  printers' own print logs. Timings are the defaults except ``probe_interval`` 0.25 s (the default 2 s would
  keep the recovered printer out for 6 s, a third of this short run).
* The alternatives are a discrete-event simulation of pushing to per-printer FIFO queues, run on the arrival and
  outage times recorded in the real run, with the same speeds: static ``crc32(attendee) % 4``, a fixed lane ->
  printer map (lane i -> printer i), least-depth push (shortest healthy queue, ties by name), and, as
  the strongest push variant, least-depth weighted by speed. The push dispatchers are given perfect, instant
  health knowledge (a generous assumption: a real health probe needs N failures); a badge cut short by the outage is
  retried first on its own printer when it is back. "Late binding (model)" is the same simulation with a shared
  pool that idle printers pull from: it shows how close the real agents come to their own ideal.

Through the real drivers: three printers at 1 s, 1 s and 0.5 s a badge, each a ``badge-agent run`` process on the
real ZPL, Brother QL or ESC/POS driver over TCP to that language's emulator (each its own process), and the same
fleet on ``sim`` beside them. 48 badges are enqueued at once to the idle agents; makespan = enqueue -> the last
label out (the printers' own logs), ideal = 48 badges at the fleet's 4 badges/s (the fleet can meet it exactly:
12 + 12 + 24). Where the rest goes, per printer: the wait for its first label, the idle gaps between its labels,
and its idle time at the end (the printer that finishes last has none).

Ideal makespan: the fluid bound (total work drained at the fleet's total speed, never before it arrives, with the
outage's lost capacity): nothing can finish earlier. Wait = badge out - enqueued; the spread is the largest minus the
smallest per-lane mean wait.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import math
import random
import statistics
import tempfile
import time
import zlib
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from bench.common import bench_main, fmt, fmt_spread, percentile, redis_server, spread, table, verdict
from bench.printers import LANGS, emulator
from cli.redis_server import stop_process
from drivers.sim import SimControl
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import agent_config, agent_process
from tests.support.prints import read_print_log

# Seconds a badge at 1x. A real badge takes 1-3 s; 0.2 s compresses an event about tenfold while keeping the agent's
# few milliseconds between badges a small share, as it is at real speeds. Every other time below scales with it.
BASE = 0.2
PRINTERS = {"p0-1x": 1.0, "p1-1x": 1.0, "p2-2x": 2.0, "p3-half": 0.5}
DOWN = "p2-2x"
OUTAGE = (15 * BASE, 40 * BASE)  # seconds after the first arrival
LANES = 4
LANE_WEIGHTS = (0.4, 0.2, 0.2, 0.2)
#: The fleet measured through the real drivers: seconds a badge.
FLEET = {"p0-1s": 1.0, "p1-1s": 1.0, "p2-half-s": 0.5}
POLICIES = ("static hash", "lane map", "least depth", "least depth, speed-weighted", "late binding (model)")


@dataclass(frozen=True)
class Arrival:
    t: float  # seconds after the first arrival
    job_id: str
    lane: int


def make_arrivals(n: int, seed: int) -> list[Arrival]:
    """Eight bursts, one every 5 badge-times; each a random size, split over the lanes by their weights."""
    rng = random.Random(seed)
    bursts = 8
    sizes = [rng.uniform(0.5, 1.5) for _ in range(bursts)]
    scale = n / sum(sizes)
    out: list[Arrival] = []
    for b, size in enumerate(sizes):
        count = round(size * scale) if b < bursts - 1 else n - len(out)
        for _ in range(count):
            lane = rng.choices(range(LANES), LANE_WEIGHTS)[0]
            t = (b * 5 + rng.uniform(0, 1)) * BASE  # a burst: a desk's queue checked in within one badge-time
            out.append(Arrival(t, f"A{seed}-{len(out)}", lane))
    return sorted(out, key=lambda a: a.t)


# -- the push alternatives (and the pull model), as a discrete-event simulation --------------------------------------


@dataclass
class SimPrinter:
    name: str
    speed: float
    queue: deque[Arrival] = field(default_factory=deque)
    busy: Arrival | None = None
    up: bool = True
    token: int = 0


def simulate(arrivals: list[Arrival], policy: str, outage: tuple[float, float]) -> dict[str, tuple[str, float]]:
    """job id -> (printer, time it came out)."""
    printers = [SimPrinter(name, speed) for name, speed in PRINTERS.items()]
    by_name = {p.name: p for p in printers}
    pool: deque[Arrival] = deque()
    pull = policy == "late binding (model)"
    events: list[tuple[float, int, str, Any]] = []
    seq = 0

    def push(t: float, kind: str, data: Any) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(events, (t, seq, kind, data))

    for a in arrivals:
        push(a.t, "arrive", a)
    push(outage[0], "down", DOWN)
    push(outage[1], "up", DOWN)
    out: dict[str, tuple[str, float]] = {}

    def start(p: SimPrinter, t: float) -> None:
        if not p.up or p.busy is not None:
            return
        source = pool if pull else p.queue
        if source:
            p.busy = source.popleft()
            p.token += 1
            push(t + BASE / p.speed, "done", (p.name, p.token))

    def choose(a: Arrival) -> SimPrinter:
        if policy == "static hash":
            return printers[zlib.crc32(a.job_id.encode()) % len(printers)]
        if policy == "lane map":
            return printers[a.lane % len(printers)]
        healthy = [p for p in printers if p.up] or printers
        if policy == "least depth":
            return min(healthy, key=lambda p: (len(p.queue) + (p.busy is not None), p.name))
        # speed-weighted: the expected time until this badge would come out there
        return min(healthy, key=lambda p: ((len(p.queue) + (p.busy is not None) + 1) / p.speed, p.name))

    while events:
        t, _, kind, data = heapq.heappop(events)
        if kind == "arrive":
            if pull:
                pool.append(data)
                for p in printers:
                    start(p, t)
            else:
                p = choose(data)
                p.queue.append(data)
                start(p, t)
        elif kind == "done":
            p = by_name[data[0]]
            if p.busy is None or data[1] != p.token:
                continue  # a completion cancelled by the outage
            out[p.busy.job_id] = (p.name, t)
            p.busy = None
            start(p, t)
        elif kind == "down":
            p = by_name[data]
            p.up = False
            if p.busy is not None:
                # cut short: back to the front of its queue (push) or of the shared pool (pull)
                (pool if pull else p.queue).appendleft(p.busy)
                p.busy = None
                p.token += 1
                if pull:
                    for q in printers:
                        start(q, t)
        else:
            p = by_name[data]
            p.up = True
            start(p, t)
    return out


def fluid_ideal(arrivals: list[Arrival], outage: tuple[float, float]) -> float:
    """Earliest time all work can be done: work arrives at its time and drains at the fleet's speed of the moment."""
    full = sum(PRINTERS.values()) / BASE
    reduced = (sum(PRINTERS.values()) - PRINTERS[DOWN]) / BASE
    marks = sorted({a.t for a in arrivals} | set(outage))
    backlog, t = 0.0, 0.0
    i = 0
    while True:
        while i < len(arrivals) and arrivals[i].t <= t + 1e-12:
            backlog += 1
            i += 1
        rate = reduced if outage[0] <= t < outage[1] else full
        nxt = next((m for m in marks if m > t + 1e-12), None)
        if nxt is None:
            return t + backlog / rate
        if backlog <= rate * (nxt - t):
            backlog = 0.0
        else:
            backlog -= rate * (nxt - t)
        t = nxt


def judge(arrivals: list[Arrival], out: dict[str, tuple[str, float]], ideal: float) -> dict[str, Any]:
    waits: dict[int, list[float]] = {lane: [] for lane in range(LANES)}
    for a in arrivals:
        waits[a.lane].append(out[a.job_id][1] - a.t)
    means = {lane: statistics.mean(w) for lane, w in waits.items() if w}
    everything = [w for ws in waits.values() for w in ws]
    makespan = max(t for _, t in out.values())
    per_printer: dict[str, int] = {}
    for printer, _ in out.values():
        per_printer[printer] = per_printer.get(printer, 0) + 1
    return {
        "makespan_s": makespan,
        "makespan_vs_ideal": makespan / ideal,
        "lane_mean_wait_s": means,
        "wait_spread_s": max(means.values()) - min(means.values()),
        "wait_p50_s": percentile(everything, 50),
        "wait_p95_s": percentile(everything, 95),
        "wait_max_s": max(everything),
        "per_printer": per_printer,
    }


# -- ours: real agents -----------------------------------------------------------------------------------------------


async def run_real(url: str, tmp: Path, repeat: int, arrivals: list[Arrival]) -> dict[str, Any]:
    venue = f"bal-{repeat}"
    folder = tmp / venue
    folder.mkdir()
    timing = {"probe_interval": 0.25}
    procs = [
        agent_process(agent_config(folder / f"{name}.yaml", venue, url, name, BASE / speed, timing=timing))
        for name, speed in PRINTERS.items()
    ]
    redis = Redis.from_url(url)
    store = Store(redis, venue)
    control = SimControl(folder / f"{DOWN}.control.json")
    try:
        async with asyncio.timeout(30):
            while await redis.zcard(Keys(venue).hb) < len(PRINTERS):
                await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)
        payloads = {}
        for a in arrivals:
            job = parse_job({"attendee_id": a.job_id, "name": f"Attendee {a.job_id}", "company": f"lane {a.lane}"})
            payloads[a.job_id] = job.payload()
        enqueued: dict[str, float] = {}
        outage: list[float] = []
        t0 = time.time()
        pending = list(arrivals)
        marks = list(OUTAGE)
        while pending or marks:
            now = time.time() - t0
            if marks and now >= marks[0]:
                control.set_fault("media_out" if len(marks) == 2 else None)
                outage.append(time.time() - t0)
                marks.pop(0)
                continue
            if pending and now >= pending[0].t:
                a = pending.pop(0)
                enqueued[a.job_id] = time.time() - t0
                await store.enqueue(a.job_id, payloads[a.job_id], None)
                continue
            nxt = min([p.t for p in pending[:1]] + marks[:1])
            await asyncio.sleep(max(0.0, min(0.002, nxt - now)))
        logs = [folder / f"{name}.prints.jsonl" for name in PRINTERS]
        out: dict[str, tuple[str, float]] = {}
        async with asyncio.timeout(60):
            while len(out) < len(arrivals):
                await asyncio.sleep(0.1)
                out = {}
                for log in logs:
                    for e in read_print_log(log):
                        if e["complete"] and (e["job_id"] not in out or e["t"] - t0 < out[e["job_id"]][1]):
                            out[e["job_id"]] = (e["printer"], e["t"] - t0)
        copies = sum(1 for log in logs for e in read_print_log(log) if e["complete"])
        # The agent's own time between badges (previous out -> next first byte) while there is work: its overhead.
        gaps: dict[str, dict[str, float]] = {}
        for name, log in zip(PRINTERS, logs, strict=True):
            entries = sorted(read_print_log(log), key=lambda e: e["started"])
            between = [b["started"] - a["t"] for a, b in itertools.pairwise(entries)]
            busy = [g * 1000 for g in between if g < 0.2]  # longer gaps: the printer was down or the pool empty
            gaps[name] = {"median_ms": percentile(busy, 50), "p90_ms": percentile(busy, 90), "n": len(busy)}
        cut_short = sum(1 for log in logs for e in read_print_log(log) if not e["complete"])
    finally:
        for proc in procs:
            stop_process(proc, 15)
        await redis.aclose()
    real_arrivals = [Arrival(enqueued[a.job_id], a.job_id, a.lane) for a in arrivals]
    return {
        "arrivals": real_arrivals,
        "outage": (outage[0], outage[1]),
        "out": out,
        "extra_copies": copies - len(arrivals),
        "cut_short": cut_short,
        "gap_between_badges": gaps,
    }


# -- the same pull through the real drivers ---------------------------------------------------------------------------


def _labels(log: Path) -> list[tuple[float, float]]:
    """(went under the head, came out) of each complete label in a sim or emulator print log, in order."""
    out = [(e.get("started_t", e.get("started")), e["t"]) for e in read_print_log(log) if e.get("complete")]
    return sorted((s, t) for s, t in out if s is not None)


async def run_fleet(url: str, tmp: Path, kind: str, n: int) -> dict[str, Any]:
    """``n`` badges enqueued at once to three idle agents on ``kind`` printers (FLEET); times from the printers."""
    venue = f"fleet-{kind}".replace("_", "-")
    folder = tmp / venue
    folder.mkdir()
    logs = {name: folder / f"{name}.prints.jsonl" for name in FLEET}
    with contextlib.ExitStack() as printers:
        configs = []
        for name, seconds in FLEET.items():
            driver = None
            if kind != "sim":
                port = printers.enter_context(emulator(kind, seconds, logs[name]))
                driver = {"language": kind, "transport": "tcp", "host": "127.0.0.1", "port": port}
            configs.append(agent_config(folder / f"{name}.yaml", venue, url, name, seconds, driver=driver))
        procs = [agent_process(config) for config in configs]
        redis = Redis.from_url(url)
        store = Store(redis, venue)
        try:
            async with asyncio.timeout(60):
                while await redis.zcard(Keys(venue).hb) < len(FLEET):
                    await asyncio.sleep(0.05)
            await asyncio.sleep(1.0)  # idle: every agent blocked on BLMOVE
            jobs = [parse_job({"attendee_id": f"F-{i}", "name": f"Attendee Number {i}"}) for i in range(n)]
            t0 = time.time()
            for job in jobs:
                await store.enqueue(job.job_id, job.payload(), None)
            async with asyncio.timeout(n * 1.0 + 60):
                while sum(len(_labels(log)) for log in logs.values()) < n:
                    await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)  # a second copy would show up now
        finally:
            for proc in procs:
                stop_process(proc, 15)
            await redis.aclose()
    labels = {name: _labels(log) for name, log in logs.items()}
    end = max(t for ls in labels.values() for _, t in ls)
    ideal = n / sum(1 / s for s in FLEET.values())
    per_printer = {}
    for name, ls in labels.items():
        gaps = [b[0] - a[1] for a, b in itertools.pairwise(ls)]
        per_printer[name] = {
            "badges": len(ls),
            "first_start_s": ls[0][0] - t0 if ls else math.nan,
            "gaps_s": sum(gaps),
            "gap_p50_ms": percentile([g * 1000 for g in gaps], 50),
            "idle_at_end_s": end - ls[-1][1] if ls else math.nan,
        }
    return {
        "makespan_s": end - t0,
        "ideal_s": ideal,
        "makespan_vs_ideal": (end - t0) / ideal,
        "labels": sum(len(ls) for ls in labels.values()),
        "per_printer": per_printer,
    }


async def main_async(repeats: int, n: int, fleet_badges: int) -> dict[str, Any]:
    runs = []
    fleet: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="badge-bench-bal-") as tmpdir, redis_server() as server:
        for kind in ("sim", *LANGS):
            fleet[kind] = await run_fleet(server.url, Path(tmpdir), kind, fleet_badges)
        for r in range(repeats):
            arrivals = make_arrivals(n, seed=r)
            real = await run_real(server.url, Path(tmpdir), r, arrivals)
            ideal = fluid_ideal(real["arrivals"], real["outage"])
            simple = len(arrivals) / (sum(PRINTERS.values()) / BASE)
            results = {"late binding (real agents)": judge(real["arrivals"], real["out"], ideal)}
            for policy in POLICIES:
                results[policy] = judge(real["arrivals"], simulate(real["arrivals"], policy, real["outage"]), ideal)
            runs.append(
                {
                    "ideal_s": ideal,
                    "total_work_over_total_speed_s": simple,
                    "outage_s": real["outage"],
                    "extra_copies": real["extra_copies"],
                    "cut_short": real["cut_short"],
                    "gap_between_badges": real["gap_between_badges"],
                    "results": results,
                }
            )
    systems = list(runs[0]["results"])
    summary = {}
    for s in systems:
        summary[s] = {
            "makespan_vs_ideal": spread([run["results"][s]["makespan_vs_ideal"] for run in runs]),
            "wait_spread_s": spread([run["results"][s]["wait_spread_s"] for run in runs]),
            "wait_p95_s": spread([run["results"][s]["wait_p95_s"] for run in runs]),
        }
    ours = "late binding (real agents)"
    push = [s for s in systems if s not in (ours, "late binding (model)")]
    tightest = all(
        run["results"][ours]["wait_spread_s"] <= min(run["results"][s]["wait_spread_s"] for s in push) for run in runs
    )
    return {
        "printers": PRINTERS,
        "base_print_time_s": BASE,
        "down": DOWN,
        "outage_planned_s": OUTAGE,
        "badges": n,
        "repeats": repeats,
        "summary": summary,
        "runs": runs,
        "fleet": {"printers_s_a_badge": FLEET, "badges": fleet_badges, "runs": fleet},
        "targets": {
            "makespan_le_1_05_ideal": summary[ours]["makespan_vs_ideal"]["median"] <= 1.05,
            "real_drivers_makespan_le_1_05_ideal": all(fleet[k]["makespan_vs_ideal"] <= 1.05 for k in LANGS),
            "tightest_wait_spread_among_push_alternatives": tightest,
        },
    }


def report(res: dict[str, Any]) -> str:
    rows = []
    for s, d in res["summary"].items():
        rows.append(
            [s, fmt_spread(d["makespan_vs_ideal"]), fmt_spread(d["wait_spread_s"]), fmt_spread(d["wait_p95_s"])]
        )
    speeds = ", ".join(f"{name} {speed:g}x" for name, speed in res["printers"].items())
    t = res["targets"]
    extra = [run["extra_copies"] for run in res["runs"]]
    fleet = res["fleet"]
    fleet_rows = []
    for kind, d in fleet["runs"].items():
        parts = "; ".join(
            f"{name} {p['badges']}: {fmt(p['first_start_s'])} / {fmt(p['gaps_s'])} / {fmt(p['idle_at_end_s'])}"
            for name, p in d["per_printer"].items()
        )
        gap = max(p["gap_p50_ms"] for p in d["per_printer"].values())
        row = [kind, f"{d['makespan_vs_ideal']:.3f}", fmt(d["makespan_s"]), fmt(gap, 1), d["labels"], parts]
        fleet_rows.append(row)
    speeds_s = ", ".join(f"{name} {s:g} s" for name, s in fleet["printers_s_a_badge"].items())
    return "\n".join(
        [
            table(
                f"Balance through the real drivers over TCP: {fleet['badges']} badges enqueued at once, {speeds_s} "
                f"(ideal {fleet['runs']['sim']['ideal_s']:g} s)",
                "lower is better; per printer: badges: first label start after enqueue / idle gaps between labels / "
                "idle at the end, s",
                ["driver", "makespan / ideal", "makespan s", "worst gap p50 ms", "labels", "per printer"],
                fleet_rows,
            ),
            f"target makespan <= 1.05 x ideal through every real driver: "
            f"{verdict(t['real_drivers_makespan_le_1_05_ideal'])}",
            "",
            table(
                f"Balance: {res['badges']} badges in bursts at {LANES} lanes, {speeds}, {res['down']} out of labels "
                f"{res['outage_planned_s'][0]:g}-{res['outage_planned_s'][1]:g} s ({res['repeats']} repeats)",
                "lower is better; min / median / max over repeats; ideal = fluid bound incl. the outage",
                ["dispatch", "makespan / ideal", "lane wait spread s", "wait p95 s"],
                rows,
            ),
            f"ideal makespan s: {fmt_spread(spread([run['ideal_s'] for run in res['runs']]))}; total work / total "
            f"speed s: {fmt_spread(spread([run['total_work_over_total_speed_s'] for run in res['runs']]))}",
            f"real agents: badges cut short by the outage and reprinted elsewhere (flagged maybe_duplicate): "
            f"{[run['cut_short'] for run in res['runs']]}; extra complete copies: {extra}",
            f"target makespan <= 1.05 x ideal: {verdict(t['makespan_le_1_05_ideal'])}; tightest lane wait spread "
            f"vs the push alternatives in every repeat: {verdict(t['tightest_wait_spread_among_push_alternatives'])}",
        ]
    )


OPTIONS = [  # flag, default, help: see bench_main
    ("--repeats", 3, "repeats of the sim fleet against the push alternatives"),
    ("--badges", 300, "badges per repeat of the sim fleet"),
    ("--fleet-badges", 48, "badges through each real driver's fleet"),
]

if __name__ == "__main__":
    bench_main("balance", __doc__, main_async, report, OPTIONS)
