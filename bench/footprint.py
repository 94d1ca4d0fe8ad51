"""Footprint: one agent's resident memory, idle CPU, and start-up time to its first heartbeat, per configuration.

Run: .venv/bin/python -m bench.footprint [--agents N] [--idle SECONDS] [--badges N]
Prints a table and writes bench/results/footprint.json.

Each agent is a real ``badge-agent run`` process (default timings, journal on disk), started with the environment
the systemd unit gives it (its ``Environment=`` lines) and from compiled bytecode, as an installed agent runs.
Configurations, one row each:

* a simulated printer with the HTTP endpoint on a loopback port (the default config) that nobody asks: the port is
  bound, aiohttp and prometheus_client are not loaded until a first client connects (``agent.http_port``), N agents;
* the same, scraped: GET /metrics and GET /healthz every 5 s from the start (a Prometheus would come every 15 s), so
  aiohttp and prometheus_client are loaded and serve, N agents;
* a simulated printer with HTTP off (``http.listen: off``): aiohttp and prometheus_client are never loaded, N agents;
* a Zebra over TCP (the ZPL emulator, ``badge-agent sim zpl``) after printing ``--badges`` badges of varied names
  from the bundled sample, HTTP on, not scraped: the badge renderer (Pillow, segno, the Noto fonts) is loaded,
  as at a venue.

Start-up = process spawned -> its name appears in the venue's heartbeat set (polled every 5 ms). The agents are
started one after the other (so they do not contend for the two cores), the printing agent's badges go through,
then all sit idle together; CPU is utime + stime from /proc/<pid>/stat over the idle window (a minute by default),
RSS is VmRSS from /proc/<pid>/status at its end (RssAnon beside it: the part
that is the agent's alone; the rest are mapped files such as libpython and the fonts, shared by every process that
maps them). Beside them, measured in the same window: a bare redis-py asyncio process doing only a 1 s BLMOVE loop
and a 1 s heartbeat SET (the floor of any Python agent), and an idle saq worker (concurrency 1).
"""

from __future__ import annotations

import asyncio
import compileall
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml
from redis.asyncio import Redis

from bench.common import ROOT, bench_main, cpu_seconds, fmt, fmt_spread, redis_server, spread, table, verdict
from cli.redis_server import free_port, stop_process
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import agent_config

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


def rss_mb(pid: int) -> dict[str, float]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon"):
            out[key] = int(value.split()[0]) / 1024
    return out


UNIT = ROOT / "systemd" / "badge-agent@.service"
#: How often the scraped agents get GET /metrics and GET /healthz (Prometheus' default is 15 s).
SCRAPE_EVERY = 5.0
SIM_HTTP_ON = "badge-agent run, sim, HTTP on, never asked"
SIM_HTTP_SCRAPED = f"badge-agent run, sim, HTTP on, scraped every {SCRAPE_EVERY:g} s"
SIM_HTTP_OFF = "badge-agent run, sim, HTTP off"
PRINTING = "badge-agent run, ZPL/TCP, HTTP on"


def unit_environment() -> dict[str, str]:
    """The ``Environment=`` assignments of the systemd unit: the agents here run as the unit runs them."""
    env: dict[str, str] = {}
    for line in UNIT.read_text().splitlines():
        if line.startswith("Environment="):
            for item in shlex.split(line.removeprefix("Environment=")):
                key, _, value = item.partition("=")
                env[key] = value
    return env


def spawn(config: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``badge-agent run -c CONFIG`` (the console script, as the unit's ExecStart), its log next to the config."""
    script = Path(sys.executable).with_name("badge-agent")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "agent"]
    with config.with_suffix(".log").open("ab") as log:
        return subprocess.Popen(
            [*command, "run", "-c", str(config)],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env},
        )


def varied_jobs(n: int) -> list[dict[str, str]]:
    """Names and companies of 1-4 and 0-5 words drawn from the bundled sample (many scripts), fixed seed."""
    rows = [json.loads(line) for line in (ROOT / "cli" / "data" / "attendees.jsonl").read_text().splitlines()]
    words = [w for r in rows for w in f"{r['name']} {r.get('company', '')}".split()]
    rnd = random.Random(7)
    return [
        {
            "attendee_id": f"FP-{i}",
            "name": " ".join(rnd.choice(words) for _ in range(rnd.randint(1, 4))),
            "company": " ".join(rnd.choice(words) for _ in range(rnd.randint(0, 5))),
            "role": rnd.choice(["Speaker", "Attendee", "Staff", "Exhibitor"]),
        }
        for i in range(n)
    ]


def _get(url: str) -> None:
    with urllib.request.urlopen(url, timeout=30) as resp:
        resp.read()


async def scrape(urls: list[str]) -> None:
    """A scraper's visits: every URL once per ``SCRAPE_EVERY`` seconds, from the first second on."""
    while True:
        for url in urls:
            await asyncio.to_thread(_get, url)
        await asyncio.sleep(SCRAPE_EVERY)


async def main_async(agents: int, idle: float, badges: int) -> dict[str, Any]:
    # An installed agent loads compiled bytecode; a checkout run with PYTHONDONTWRITEBYTECODE would compile its
    # own modules at every start and carry the compiler's leftovers (~1 MB).
    for package in ("agent", "drivers"):
        compileall.compile_dir(ROOT / package, quiet=1)
    env = {"PYTHONUNBUFFERED": "1", **unit_environment()}
    with tempfile.TemporaryDirectory(prefix="badge-bench-fp-") as tmpdir, redis_server() as server:
        tmp = Path(tmpdir)
        redis = Redis.from_url(server.url)
        hb = Keys("fp").hb
        procs: dict[str, subprocess.Popen[bytes]] = {}
        groups: dict[str, list[str]] = {SIM_HTTP_ON: [], SIM_HTTP_SCRAPED: [], SIM_HTTP_OFF: [], PRINTING: []}
        scraped: list[str] = []  # the URLs of the scraped agents' endpoints
        startup: dict[str, float] = {}

        async def start(name: str, config: Path) -> None:
            t0 = time.monotonic()
            procs[name] = spawn(config, env)
            async with asyncio.timeout(30):
                while await redis.zscore(hb, name) is None:
                    await asyncio.sleep(0.005)
            startup[name] = time.monotonic() - t0

        emulator: subprocess.Popen[bytes] | None = None
        scraper: asyncio.Task[None] | None = None
        try:
            for group, prefix in ((SIM_HTTP_ON, "on"), (SIM_HTTP_SCRAPED, "scraped"), (SIM_HTTP_OFF, "off")):
                for i in range(agents):
                    name = f"{prefix}-{i}"
                    port = free_port()
                    listen = "off" if group == SIM_HTTP_OFF else f"127.0.0.1:{port}"
                    await start(name, agent_config(tmp / f"{name}.yaml", "fp", server.url, name, 1.0, http=listen))
                    groups[group].append(name)
                    if group == SIM_HTTP_SCRAPED:
                        scraped += [f"http://127.0.0.1:{port}/metrics", f"http://127.0.0.1:{port}/healthz"]
            scraper = asyncio.create_task(scrape(scraped))
            if badges:
                port = free_port()
                emulator = subprocess.Popen(
                    [sys.executable, "-m", "agent", "sim", "zpl", "--port", str(port), "--print-time", "0.05"],
                    cwd=ROOT,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                async with asyncio.timeout(30):
                    while True:
                        try:
                            _, writer = await asyncio.open_connection("127.0.0.1", port)
                        except OSError:
                            await asyncio.sleep(0.05)
                            continue
                        writer.close()
                        break
                name = "zebra-0"
                config = agent_config(tmp / f"{name}.yaml", "fp", server.url, name, 0, http=f"127.0.0.1:{free_port()}")
                data = yaml.safe_load(config.read_text())
                data["printer"]["driver"] = {"language": "zpl", "transport": "tcp", "host": "127.0.0.1", "port": port}
                config.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
                await start(name, config)
                groups[PRINTING].append(name)
                # Pinned to the Zebra: the simulated agents must not take them.
                store = Store(redis, "fp")
                for fields in varied_jobs(badges):
                    job = parse_job({**fields, "printer": name})
                    await store.enqueue(job.job_id, job.payload(), job.printer)
                async with asyncio.timeout(300):
                    while int(await redis.hget(Keys("fp").stats, "printed") or 0) < badges:
                        await asyncio.sleep(0.1)
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
            if scraper is not None:
                scraper.cancel()
            for p in procs.values():
                stop_process(p, 15)
            stop_process(emulator, 5)
            await redis.aclose()
    rows = {
        group: {
            "agents": len(names),
            "rss_mb": spread([mem[n]["VmRSS"] for n in names]),
            "rss_anon_mb": spread([mem[n]["RssAnon"] for n in names]),
            "peak_rss_mb": spread([mem[n]["VmHWM"] for n in names]),
            "idle_cpu_pct": spread([cpu[n] for n in names]),
            "startup_to_first_heartbeat_s": spread([startup[n] for n in names]),
        }
        for group, names in groups.items()
        if names
    }
    agent_names = [n for names in groups.values() for n in names]
    return {
        "idle_window_s": idle,
        "agents": agents,
        "badges_before_idle": badges,
        "environment": env,
        "configurations": rows,
        "baselines": {
            k: {"rss_mb": mem[k]["VmRSS"], "rss_anon_mb": mem[k]["RssAnon"], "idle_cpu_pct": cpu[k]}
            for k in ("bare redis-py loop", "saq worker")
        },
        "raw": {"cpu_pct": cpu, "mem_mb": mem, "startup_s": startup},
        "targets": {
            **{f"rss_le_40mb[{group}]": row["rss_mb"]["max"] <= 40 for group, row in rows.items()},
            "idle_cpu_le_1pct": max(cpu[n] for n in agent_names) <= 1.0,
        },
    }


def report(res: dict[str, Any]) -> str:
    rows = [
        [
            f"{group} (x{row['agents']})",
            fmt_spread(row["rss_mb"], 1),
            fmt_spread(row["rss_anon_mb"], 1),
            fmt_spread(row["peak_rss_mb"], 1),
            fmt_spread(row["idle_cpu_pct"], 2),
            fmt_spread(row["startup_to_first_heartbeat_s"], 2),
        ]
        for group, row in res["configurations"].items()
    ]
    for label, d in res["baselines"].items():
        rows.append([label, fmt(d["rss_mb"], 1), fmt(d["rss_anon_mb"], 1), "", fmt(d["idle_cpu_pct"], 2), ""])
    t = res["targets"]
    rss_verdicts = "; ".join(
        f"{group.removeprefix('badge-agent run, ')} {fmt(worst, 1)} MB {verdict(worst <= 40)}"
        for group, worst in ((g, row["rss_mb"]["max"]) for g, row in res["configurations"].items())
    )
    env = " ".join(f"{k}={v}" for k, v in res["environment"].items())
    return "\n".join(
        [
            table(
                "Footprint: one agent per configuration, default timings "
                f"(idle CPU over {res['idle_window_s']:g} s; the ZPL agent after {res['badges_before_idle']} badges)",
                "lower is better; min / median / max over the agents; CPU in % of one core",
                ["process", "RSS MB", "of which anon MB", "peak RSS MB", "idle CPU %", "start -> first heartbeat s"],
                rows,
            ),
            f"agents run with the systemd unit's environment: {env}",
            f"target RSS <= 40 MB: {rss_verdicts}; idle CPU <= 1%: {verdict(t['idle_cpu_le_1pct'])}",
        ]
    )


# flag, default, help: see bench_main
OPTIONS = [
    ("--agents", 3, ""),
    ("--idle", 60.0, "seconds of idle CPU measured (a minute by default)"),
    ("--badges", 100, "badges the ZPL agent prints first (0: no row)"),
]

if __name__ == "__main__":
    bench_main("footprint", __doc__, main_async, report, OPTIONS)
