"""Hot path: Redis round trips per badge, and badges per second of one agent on an instant simulated printer,
side by side with (a) a bare redis-py asyncio loop making the same round trips with plain commands (the floor of
the design), three ways: as redis-py's client is used by default (a connection from the pool for every command),
the same client on one connection (``single_connection_client``: its plain commands; redis-py still takes a
pipeline's connection from the pool), and on redis-py's connection API (one connection
kept, commands written and replies read by hand, as the agent's pull loop does); and (b) saq, one worker,
concurrency 1, no-op jobs. The 60% target is judged against the faster client loop in each repeat (plain
redis-py, as anyone would write the loop); the connection-API loop is shown beside it as the tightest floor
redis-py allows.

Run: .venv/bin/python -m bench.hot_path [--badges N] [--repeats R]
Prints two tables and writes bench/results/hot_path.json.

Throughput: N jobs are queued first, then the consumer starts; the rate is (N-1) / (last first-byte - first
first-byte), so start-up and shutdown are not counted for anyone. The systems take turns within each repeat, and
each comparison is the ratio inside one repeat, quoted as min / median / max over the repeats.

Commands and round trips: a separate, smaller run per system under MONITOR (which slows Redis, hence not during the
timed runs). Commands: every command a client sent between the first and the last first-byte, per badge; commands
Lua runs inside a script (tagged ``lua``) are not. Round trips: the consumer's writes to its socket over the same
stretch (one per command or pipeline), counted in the client (``RoundTrips``), heartbeats left out.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from agent.config import load_config
from agent.runtime import Agent
from bench.common import bench_main, command_counts, fmt, fmt_spread, log_to_file, redis_server, spread, table, verdict
from bench.stamp import StampDriver
from cli.redis_server import RedisServer
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.library import default_library
from protocol.scripts import SCRIPT_NAMES
from protocol.store import Store
from tests.support.agents import agent_config
from tests.support.redis_traffic import Monitor, RoundTrips
from tests.support.waiting import wait_until

SYSTEMS = (
    "agent",
    "agent, journal in memory",
    "bare loop",
    "bare loop, one connection",
    "bare loop, connection API",
    "saq",
)
FUNCTION_NAMES = {default_library().function(n): n for n in SCRIPT_NAMES}


def count_window(
    commands: list[tuple[float, str, str, str]], start: float, end: float, exclude: set[str]
) -> Counter[str]:
    """Commands clients sent in [start, end] (wall clock), Lua-internal ones and our own client's left out."""
    counts: Counter[str] = Counter()
    for ts, client, cmd, arg in commands:
        if client == "lua" or client in exclude or not start <= ts <= end:
            continue
        counts[f"fcall {FUNCTION_NAMES.get(arg, arg)}" if cmd == "fcall" else cmd] += 1
    return counts


# -- the three consumers --------------------------------------------------------------------------------------------


async def fill_venue(redis: Redis, venue: str, n: int) -> None:
    store = Store(redis, venue)
    for i in range(n):
        job = parse_job({"attendee_id": f"A-{i}", "name": f"Attendee {i}", "company": "Expo"})
        await store.enqueue(job.job_id, job.payload(), None)


async def run_agent(server: RedisServer, tmp: Path, tag: str, n: int, journal: bool) -> dict[str, Any]:
    """One real Agent, in this process, on an instant simulated printer (print_time 0, no print log)."""
    redis = Redis.from_url(server.url)
    venue = f"hot-{tag}"
    await fill_venue(redis, venue, n)
    # A folder per run: the journal remembers printed job ids, and every run reuses the same ids.
    (tmp / venue).mkdir()
    config = load_config(agent_config(tmp / venue / "desk-1.yaml", venue, server.url, "desk-1", 0.0, False, journal))
    stamps: list[float] = []
    driver = StampDriver("desk-1", 0.0, stamps)
    agent = Agent(config, driver)
    trips = RoundTrips(agent.redis)
    before = await command_counts(redis)
    task = asyncio.create_task(agent.run())
    try:
        await wait_until(lambda: agent.printed >= n, 120, every=0.002)
    finally:
        agent.stop()
        await asyncio.wait_for(task, 30)
    after = await command_counts(redis)
    await redis.aclose()
    # Lua cannot call FCALL or BLMOVE, so these two counters are exactly what the agent sent of them.
    sent = sum(after.get(c, 0) - before.get(c, 0) for c in ("fcall", "blmove"))
    beat = default_library().function("beat").encode()
    trips_between = trips.between(stamps[0], stamps[-1], excluding=beat)
    return {"stamps": stamps, "wall": driver.wall, "fcall_blmove_per_badge": sent / n, "trips": trips_between}


async def run_bare(server: RedisServer, tag: str, n: int, style: str) -> dict[str, Any]:
    """The floor: the agent's round trips as plain commands. Begin = read the payload; confirm = LREM from
    in-flight, pipelined with the next take (LMOVE), as the agent pipelines its confirm and take scripts.

    ``style``: "pool" (redis-py's client as used by default), "one connection" (``single_connection_client``) or
    "connection API" (one connection from the pool, ``send_command``/``read_response`` by hand)."""
    redis = Redis.from_url(server.url, single_connection_client=style == "one connection")
    trips = RoundTrips(redis)
    k = Keys(f"bare-{tag}")
    await fill_venue(redis, f"bare-{tag}", n)
    stamps: list[float] = []
    wall: list[float] = []
    inflight = k.inflight("desk-1")
    if style == "connection API":
        conn = await redis.connection_pool.get_connection()  # type: ignore[no-untyped-call]
        await conn.send_command("LMOVE", k.pool, inflight, "RIGHT", "LEFT")
        raw = await conn.read_response()
        while raw is not None:
            job_id = raw.decode()
            await conn.send_command("HGET", k.job(job_id), "payload")
            await conn.read_response()
            stamps.append(time.perf_counter())
            wall.append(time.time())
            pair = [("LREM", inflight, 1, job_id), ("LMOVE", k.pool, inflight, "RIGHT", "LEFT")]
            await conn.send_packed_command(conn.pack_commands(pair))
            await conn.read_response()
            raw = await conn.read_response()
        await redis.connection_pool.release(conn)
    else:
        raw = await redis.lmove(k.pool, inflight, "RIGHT", "LEFT")
        while raw is not None:
            job_id = raw.decode() if isinstance(raw, bytes) else str(raw)
            await redis.hget(k.job(job_id), "payload")
            stamps.append(time.perf_counter())
            wall.append(time.time())
            async with redis.pipeline(transaction=False) as pipe:
                pipe.lrem(inflight, 1, job_id)
                pipe.lmove(k.pool, inflight, "RIGHT", "LEFT")
                _, raw = await pipe.execute()
    await redis.aclose()
    return {"stamps": stamps, "wall": wall, "trips": trips.between(stamps[0], stamps[-1])}


async def run_saq(server: RedisServer, tag: str, n: int) -> dict[str, Any]:
    """saq: one worker, concurrency 1, a no-op job function that only notes when it was called."""
    from saq import Queue, Worker  # imported here: only this bench needs it

    stamps: list[float] = []
    wall: list[float] = []

    async def noop(ctx: Any) -> None:
        stamps.append(time.perf_counter())
        wall.append(time.time())

    queue = Queue.from_url(server.url, name=f"saq-{tag}")
    trips = RoundTrips(queue.redis)
    await queue.connect()
    for _ in range(n):
        await queue.enqueue("noop")
    worker = Worker(queue, functions=[("noop", noop)], concurrency=1)
    task = asyncio.create_task(worker.start())
    try:
        await wait_until(lambda: len(stamps) >= n, 120, every=0.002)
        await asyncio.sleep(0.05)  # let the last job's completion reach Redis
    finally:
        await worker.stop()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await queue.disconnect()
    return {"stamps": stamps, "wall": wall, "trips": trips.between(stamps[0], stamps[-1])}


async def run_one(system: str, server: RedisServer, tmp: Path, tag: str, n: int) -> dict[str, Any]:
    if system == "agent":
        return await run_agent(server, tmp, tag, n, journal=True)
    if system == "agent, journal in memory":
        return await run_agent(server, tmp, tag, n, journal=False)
    if system.startswith("bare loop"):
        return await run_bare(server, tag, n, system.removeprefix("bare loop").removeprefix(", ") or "pool")
    return await run_saq(server, tag, n)


def rate(stamps: list[float]) -> float:
    return (len(stamps) - 1) / (stamps[-1] - stamps[0])


async def main_async(n: int, repeats: int, monitor_n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="badge-bench-hot-") as tmpdir, redis_server() as server:
        tmp = Path(tmpdir)
        # The agent logs one line per badge, as in production; to a file here (journald's cost is not ours to add).
        log_to_file(tmp / "bench.log")

        # Warm-up: imports, connection pools and the functions library (loaded by the first call that finds it
        # missing, once per Redis, not per badge).
        for i, system in enumerate(SYSTEMS):
            await run_one(system, server, tmp, f"warm-{i}", 50)

        # Round trips per badge, under MONITOR.
        own = Redis.from_url(server.url)
        own_addr = str((await own.client_info())["addr"])
        round_trips: dict[str, dict[str, Any]] = {}
        for system in SYSTEMS:
            monitor = Monitor(server.port)
            await asyncio.sleep(0.05)
            out = await run_one(system, server, tmp, f"mon-{len(round_trips)}", monitor_n)
            commands = monitor.close()
            counts = count_window(commands, out["wall"][0], out["wall"][-1], {own_addr})
            badges = len(out["wall"]) - 1  # badges whose whole cycle lies between the first and last first-byte
            round_trips[system] = {
                "per_badge": out["trips"] / badges,
                "commands_per_badge": sum(counts.values()) / badges,
                "by_command": {c: v / badges for c, v in counts.most_common()},
            }
        await own.aclose()

        # Badges per second, the systems taking turns within each repeat.
        rates: dict[str, list[float]] = {s: [] for s in SYSTEMS}
        server_counted: list[float] = []
        for r in range(repeats):
            for system in SYSTEMS:
                out = await run_one(system, server, tmp, f"r{r}-{SYSTEMS.index(system)}", n)
                rates[system].append(rate(out["stamps"]))
                if system == "agent":
                    server_counted.append(out["fcall_blmove_per_badge"])
    vs_saq = [a / s for a, s in zip(rates["agent"], rates["saq"], strict=True)]
    floor = [
        max(pooled, one) for pooled, one in zip(rates["bare loop"], rates["bare loop, one connection"], strict=True)
    ]
    vs_bare = [a / b for a, b in zip(rates["agent"], floor, strict=True)]
    vs_bare_mem = [a / b for a, b in zip(rates["agent, journal in memory"], floor, strict=True)]
    vs_pooled = [a / b for a, b in zip(rates["agent"], rates["bare loop"], strict=True)]
    vs_one = [a / b for a, b in zip(rates["agent"], rates["bare loop, one connection"], strict=True)]
    vs_conn = [a / b for a, b in zip(rates["agent"], rates["bare loop, connection API"], strict=True)]
    return {
        "badges": n,
        "repeats": repeats,
        "monitor_badges": monitor_n,
        "redis": "appendonly no (the agent's cost, not the disk's)",
        "round_trips": round_trips,
        "agent_fcall_blmove_per_badge_commandstats": spread(server_counted),
        "badges_per_second": {s: spread(v) for s, v in rates.items()},
        "raw_badges_per_second": rates,
        "ratio_agent_vs_saq": spread(vs_saq),
        "ratio_agent_vs_bare": spread(vs_bare),
        "ratio_agent_vs_bare_pooled": spread(vs_pooled),
        "ratio_agent_vs_bare_one_connection": spread(vs_one),
        "ratio_agent_vs_bare_connection_api": spread(vs_conn),
        "ratio_agent_journal_in_memory_vs_bare": spread(vs_bare_mem),
        "targets": {
            "round_trips_le_3": round_trips["agent"]["per_badge"] <= 3,
            "agent_ge_1_5x_saq": spread(vs_saq)["median"] >= 1.5,
            "agent_ge_60pct_bare": spread(vs_bare)["median"] >= 0.6,
        },
    }


def report(res: dict[str, Any]) -> str:
    rt = res["round_trips"]
    rows = []
    for system, data in rt.items():
        top = ", ".join(f"{c} {v:.2f}" for c, v in list(data["by_command"].items())[:5])
        rows.append([system, fmt(data["per_badge"]), fmt(data["commands_per_badge"]), top])
    out = [
        table(
            f"Hot path: Redis round trips and commands per badge ({res['monitor_badges']} badges; round trips "
            "counted at the client's socket, commands by MONITOR, Lua-internal excluded)",
            "lower is better; target for the agent <= 3 round trips",
            ["system", "round trips", "commands", "commands by name"],
            rows,
        ),
        f"agent, server-counted FCALL+BLMOVE per badge over the timed runs (INFO commandstats, incl. heartbeats): "
        f"{fmt_spread(res['agent_fcall_blmove_per_badge_commandstats'])}",
        "",
    ]
    bps = res["badges_per_second"]
    rows = [[s, fmt_spread(v, 0)] for s, v in bps.items()]
    out.append(
        table(
            f"Hot path: badges per second, one consumer, instant printer ({res['badges']} badges x "
            f"{res['repeats']} repeats, {res['redis']})",
            "higher is better; min / median / max over repeats",
            ["system", "badges/s"],
            rows,
        )
    )
    t = res["targets"]
    rows = [
        ["agent / saq", fmt_spread(res["ratio_agent_vs_saq"]), ">= 1.5", verdict(t["agent_ge_1_5x_saq"])],
        [
            "agent / faster client bare loop",
            fmt_spread(res["ratio_agent_vs_bare"]),
            ">= 0.60",
            verdict(t["agent_ge_60pct_bare"]),
        ],
        ["agent / bare loop (pool)", fmt_spread(res["ratio_agent_vs_bare_pooled"]), "", ""],
        ["agent / bare loop (one connection)", fmt_spread(res["ratio_agent_vs_bare_one_connection"]), "", ""],
        ["agent / bare loop (connection API)", fmt_spread(res["ratio_agent_vs_bare_connection_api"]), "", ""],
        [
            "agent (journal in memory) / faster client bare loop",
            fmt_spread(res["ratio_agent_journal_in_memory_vs_bare"]),
            "",
            "",
        ],
        ["agent round trips per badge", fmt(rt["agent"]["per_badge"]), "<= 3", verdict(t["round_trips_le_3"])],
    ]
    out.append("")
    out.append(
        table(
            "Hot path: ratios within each repeat",
            "higher is better for ratios; min / median / max; target judged on the median",
            ["comparison", "ratio", "target", ""],
            rows,
        )
    )
    return "\n".join(out)


# flag, default, help: see bench_main
OPTIONS = [
    ("--badges", 2000, ""),
    ("--repeats", 5, ""),
    ("--monitor-badges", 300, ""),
]

if __name__ == "__main__":
    bench_main("hot_path", __doc__, main_async, report, OPTIONS)
