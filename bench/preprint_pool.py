"""A pre-print run on the venue's pool: real agents (each its own process) on ZPL emulators over TCP, boxes claimed
whole by whichever printer is ready, one printer's agent killed mid-box.

Run: .venv/bin/python -m bench.preprint_pool [--badges N] [--box B] [--printers P] [--print-time S] [--kill K]
Prints a table and writes bench/results/preprint_pool.json.

Per printer, from the emulator's own log: duty = label time / wall time from its first label's start to its last
one's end; the finish spread = latest last label minus earliest, among the printers that were not killed (the aim:
within one box's time); the order check cuts each stack into boxes (a separator, then that box's badges in order;
"Box N, continued" then the rest of box N from its first unconfirmed badge; the killed printer's last box may stop
short). Nothing lost: every badge came out whole somewhere; a badge that came out twice must be flagged.
"""

from __future__ import annotations

import asyncio
import signal
import tempfile
import time
from contextlib import AsyncExitStack, ExitStack
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from bench.common import bench_main, fmt, percentile, redis_server, table, verdict
from preprint.pool import pool_status, print_on_pool
from protocol.keys import Keys
from tests.preprint.pool_support import agent, job_ids, planned_run, printed, zpl
from tests.support.waiting import wait_until

RUN = "bench"


def check_stack(stack: list[str], boxes: dict[int, list[str]], killed: bool) -> str:
    """ "ok", or what is out of order in one printer's stack."""
    at = 0
    while at < len(stack):
        head = stack[at]
        parts = head.split(":")
        number = int(parts[2])
        ids = boxes[number]
        if head == ids[0]:
            want = ids
        elif parts[-1].startswith("c") and len(stack) > at + 1 and stack[at + 1] in ids:
            want = [head, *ids[ids.index(stack[at + 1]) :]]
        else:
            return f"label {at}: {head} opens no box"
        got = stack[at : at + len(want)]
        if got != want and not (killed and at + len(got) == len(stack) and want[: len(got)] == got):
            return f"box {number} from label {at}: out of order"
        at += len(want)
    return "ok"


def duty_of(entries: list[dict[str, Any]]) -> dict[str, Any]:
    starts = [e["started_t"] for e in entries]
    ends = [e["t"] for e in entries]
    busy = sum(e - s for s, e in zip(starts, ends, strict=True))
    gaps = [(s - e) * 1000 for e, s in zip(ends, starts[1:], strict=False)] or [0.0]
    return {
        "labels": len(entries),
        "duty": busy / (ends[-1] - starts[0]),
        "first": starts[0],
        "last": ends[-1],
        "gap_p50_ms": percentile(gaps, 50),
        "gap_max_ms": max(gaps),
        # The largest few and where they fell (label index): a box's first label, or inside a box.
        "gaps_top": sorted(((round(g, 1), i + 1) for i, g in enumerate(gaps)), reverse=True)[:5],
    }


async def main_async(badges: int, box: int, printers: int, print_time: float, kill: int) -> dict[str, Any]:
    boxes = max(1, badges // box)
    names = [f"p{i + 1}" for i in range(printers)]
    with redis_server() as server, tempfile.TemporaryDirectory(prefix="badge-bench-preprint-") as tmp:
        redis = Redis.from_url(server.url)
        venue = "bench-preprint"
        await planned_run(redis, venue, RUN, boxes, box)
        ids = {n: await job_ids(redis, venue, RUN, n) for n in range(1, boxes + 1)}
        async with AsyncExitStack() as emulators:
            emus = [await emulators.enter_async_context(zpl(name, print_time, read_back=False)) for name in names]
            with ExitStack() as agents:
                procs = [
                    agents.enter_context(agent(Path(tmp), venue, server.url, name, driver))
                    for name, (_, driver) in zip(names, emus, strict=True)
                ]
                k = Keys(venue)
                await wait_until(lambda: _all_beat(redis, k, names), timeout=60)
                t0 = time.monotonic()
                await print_on_pool(redis, venue, RUN)
                victim = None
                if kill and printers > 1:
                    victim = 1
                    # Mid-box: half of its first box and a few labels more.
                    await wait_until(lambda: _at_least(emus[victim][0], box // 2 + 3), timeout=box * print_time * 4)
                    procs[victim].send_signal(signal.SIGKILL)
                    procs[victim].wait()
                limit = badges * print_time / max(1, printers - 1) * 3 + 120
                await wait_until(lambda: _done(redis, venue), timeout=limit, every=0.5)
                wall = time.monotonic() - t0
                await asyncio.sleep(0.5)
        stacks = {name: printed(emu) for name, (emu, _) in zip(names, emus, strict=True)}
        entries = {
            name: [e for e in emu.printed() if "started_t" in e] for name, (emu, _) in zip(names, emus, strict=True)
        }
        status = await pool_status(redis, venue, RUN)
        per = {}
        for i, name in enumerate(names):
            d = (
                duty_of(entries[name])
                if entries[name]
                else {
                    "labels": 0,
                    "duty": 0.0,
                    "first": 0.0,
                    "last": 0.0,
                    "gap_p50_ms": 0.0,
                    "gap_max_ms": 0.0,
                    "gaps_top": [],
                }
            )
            d["order"] = check_stack(stacks[name], ids, killed=i == victim)
            d["killed"] = i == victim
            per[name] = d
        survivors = [d for d in per.values() if not d["killed"] and d["labels"]]
        spread = max(d["last"] for d in survivors) - min(d["last"] for d in survivors)
        seen: dict[str, int] = {}
        for stack in stacks.values():
            for j in stack:
                seen[j] = seen.get(j, 0) + 1
        badge_ids = [j for n in ids for j in ids[n][1:]]
        lost = [j for j in badge_ids if j not in seen]
        twice = [j for j in badge_ids if seen.get(j, 0) > 1]
        unflagged = [j for j in twice if j not in status.maybe_printed]
        await redis.aclose()
    return {
        "badges": boxes * box,
        "box": box,
        "printers": printers,
        "print_time": print_time,
        "killed": names[victim] if victim is not None else "",
        "wall_s": wall,
        "box_time_s": box * print_time,
        "finish_spread_s": spread,
        "per_printer": per,
        "lost": lost,
        "printed_twice": twice,
        "printed_twice_unflagged": unflagged,
    }


async def _all_beat(redis: Redis, k: Keys, names: list[str]) -> bool:
    return all([await redis.zscore(k.hb, name) is not None for name in names])


async def _at_least(emu: Any, n: int) -> bool:
    return len(emu.printed()) >= n


async def _done(redis: Redis, venue: str) -> bool:
    return (await pool_status(redis, venue, RUN)).done


def report(res: dict[str, Any]) -> str:
    rows = []
    for name, d in res["per_printer"].items():
        note = "killed mid-box" if d["killed"] else ""
        ok = d["killed"] or d["duty"] >= 0.99
        rows.append(
            [
                name,
                d["labels"],
                f"{d['duty']:.3f}",
                fmt(d["gap_p50_ms"]),
                fmt(d["gap_max_ms"]),
                d["order"],
                note,
                verdict(ok and d["order"] == "ok"),
            ]
        )
    out = [
        table(
            f"Pre-print run on the pool: {res['badges']} badges, boxes of {res['box']}, {res['printers']} ZPL "
            f"emulators at {res['print_time']} s a label (printers' own logs)",
            "duty higher is better (aim >= 0.99, first label to last); order: each stack whole boxes in order",
            ["printer", "labels", "duty", "gap p50 ms", "gap max ms", "order", "", "verdict"],
            rows,
        )
    ]
    ok = res["finish_spread_s"] <= res["box_time_s"]
    out.append(
        f"finish spread among the printers not killed: {fmt(res['finish_spread_s'])} s "
        f"(one box = {fmt(res['box_time_s'])} s) {verdict(ok)}; wall {fmt(res['wall_s'])} s"
    )
    out.append(
        f"lost: {len(res['lost'])}; printed twice: {len(res['printed_twice'])}, of them unflagged: "
        f"{len(res['printed_twice_unflagged'])} {verdict(not res['lost'] and not res['printed_twice_unflagged'])}"
    )
    return "\n".join(out)


if __name__ == "__main__":
    bench_main(
        "preprint_pool",
        __doc__,
        main_async,
        report,
        [
            ("--badges", 2000, "badges in the run (2,000 at 0.5 s on 4 printers is about 250 s)"),
            ("--box", 100, "badges a box"),
            ("--printers", 4, "ZPL emulators, each with its own agent"),
            ("--print-time", 0.5, "seconds a label"),
            ("--kill", 1, "1: kill one printer's agent mid-box (kill -9); 0: none"),
        ],
    )
