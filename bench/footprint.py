"""Footprint: one agent's resident memory, idle CPU, and start-up time to its first heartbeat.

Run: .venv/bin/python -m bench.footprint [--agents N] [--idle SECONDS]
Prints a table and writes bench/results/footprint.json.

Each agent is a real ``badge-agent run`` process (default timings, journal on disk, the HTTP endpoint on a loopback
port) on an idle simulated printer. Start-up = process spawned -> its name appears in the venue's heartbeat set
(polled every 5 ms). The agents are started one after the other (so they do not contend for the two cores), then
all sit idle together; CPU is utime + stime from /proc/<pid>/stat over the idle window (20 s by default, not a
minute, to keep the suite short), RSS is VmRSS from /proc/<pid>/status at its end. Beside them, measured in the same
window: a bare redis-py asyncio process doing only a 1 s BLMOVE loop and a 1 s heartbeat SET (the floor of any
Python agent), and an idle saq worker (concurrency 1).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from agent.protocol.keys import Keys
from agent.redis_server import free_port, stop_process
from bench.common import (
    ROOT,
    agent_config,
    agent_process,
    fmt,
    fmt_spread,
    redis_server,
    spread,
    table,
    verdict,
    write_results,
)

BARE = """
import asyncio, sys
from redis.asyncio import Redis
async def main():
    r = Redis.from_url(sys.argv[1])
    async def beat():
        while True:
            await r.set("bare:hb", "1", px=5000)
            await asyncio.sleep(1)
    asyncio.create_task(beat())
    while True:
        await r.blmove("bare:pool", "bare:inflight", 1, "RIGHT", "LEFT")
asyncio.run(main())
"""

SAQ = """
import asyncio, sys
from saq import Queue, Worker
async def noop(ctx): pass
async def main():
    queue = Queue.from_url(sys.argv[1], name="footprint")
    await Worker(queue, functions=[("noop", noop)], concurrency=1).start()
asyncio.run(main())
"""


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def rss_mb(pid: int) -> dict[str, float]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    return out


async def main_async(agents: int, idle: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="badge-bench-fp-") as tmpdir, redis_server() as server:
        tmp = Path(tmpdir)
        redis = Redis.from_url(server.url)
        hb = Keys("fp").hb
        procs: dict[str, subprocess.Popen[bytes]] = {}
        startup: list[float] = []
        try:
            for i in range(agents):
                name = f"desk-{i}"
                cfg = agent_config(tmp / f"{name}.yaml", "fp", server.url, name, 1.0, http=f"127.0.0.1:{free_port()}")
                t0 = time.monotonic()
                procs[name] = agent_process(cfg)
                async with asyncio.timeout(30):
                    while await redis.zscore(hb, name) is None:
                        await asyncio.sleep(0.005)
                startup.append(time.monotonic() - t0)
            for label, code in (("bare redis-py loop", BARE), ("saq worker", SAQ)):
                procs[label] = subprocess.Popen(
                    [sys.executable, "-c", code, server.url], cwd=ROOT, stdout=subprocess.DEVNULL
                )
            await asyncio.sleep(3.0)  # past start-up work (imports, first probes, script loads)
            before = {k: cpu_seconds(p.pid) for k, p in procs.items()}
            t0 = time.monotonic()
            await asyncio.sleep(idle)
            wall = time.monotonic() - t0
            cpu = {k: (cpu_seconds(p.pid) - before[k]) / wall * 100 for k, p in procs.items()}
            mem = {k: rss_mb(p.pid) for k, p in procs.items()}
        finally:
            for p in procs.values():
                stop_process(p, 15)
            await redis.aclose()
    names = [f"desk-{i}" for i in range(agents)]
    agent_rss = spread([mem[n]["VmRSS"] for n in names])
    agent_cpu = spread([cpu[n] for n in names])
    return {
        "idle_window_s": idle,
        "agents": agents,
        "startup_to_first_heartbeat_s": spread(startup),
        "agent_rss_mb": agent_rss,
        "agent_peak_rss_mb": spread([mem[n]["VmHWM"] for n in names]),
        "agent_idle_cpu_pct": agent_cpu,
        "baselines": {
            k: {"rss_mb": mem[k]["VmRSS"], "idle_cpu_pct": cpu[k]} for k in ("bare redis-py loop", "saq worker")
        },
        "raw": {"cpu_pct": cpu, "mem_mb": mem, "startup_s": startup},
        "targets": {"rss_le_40mb": agent_rss["max"] <= 40, "idle_cpu_le_1pct": agent_cpu["max"] <= 1.0},
    }


def report(res: dict[str, Any]) -> str:
    rows = [
        [
            f"badge-agent run (x{res['agents']})",
            fmt_spread(res["agent_rss_mb"], 1),
            fmt_spread(res["agent_peak_rss_mb"], 1),
            fmt_spread(res["agent_idle_cpu_pct"], 2),
            fmt_spread(res["startup_to_first_heartbeat_s"], 2),
        ]
    ]
    for label, d in res["baselines"].items():
        rows.append([label, fmt(d["rss_mb"], 1), "", fmt(d["idle_cpu_pct"], 2), ""])
    t = res["targets"]
    return "\n".join(
        [
            table(
                "Footprint: one agent, idle simulated printer, default timings "
                f"(idle CPU over {res['idle_window_s']:g} s)",
                "lower is better; min / median / max over the agents; CPU in % of one core",
                ["process", "RSS MB", "peak RSS MB", "idle CPU %", "start -> first heartbeat s"],
                rows,
            ),
            f"target RSS <= 40 MB: {verdict(t['rss_le_40mb'])}; idle CPU <= 1%: {verdict(t['idle_cpu_le_1pct'])}",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--idle", type=float, default=20.0)
    args = parser.parse_args()
    res = asyncio.run(main_async(args.agents, args.idle))
    print(report(res))
    print(f"\nwritten: {write_results('footprint', res)}")


if __name__ == "__main__":
    main()
