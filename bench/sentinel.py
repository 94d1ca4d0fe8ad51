"""Redis failover under Sentinel, as the agents see it: master SIGKILLed -> next badge confirmed, over many kills.

Topology: 1 master + 2 replicas (AOF, fsync always) and 3 sentinels (down-after 1000 ms) on loopback, three real
``badge-agent run`` processes on simulated printers (0.1 s a badge). Each round kills the current master with
SIGKILL, times until the ``printed`` counter on the new master moves (a badge confirmed through it), then restarts
the old master (Sentinel makes it a replica) and waits until both replicas are in sync before the next round.
At the end every enqueued badge (each acknowledged by Redis) must be printed: lost = acknowledged but not printed.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from redis.exceptions import RedisError

from bench.common import bench_main, fmt, percentile, spread, table, verdict
from cli.redis_server import stop_process
from protocol.connection import make_redis
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.redis_config import RedisConfig
from protocol.store import Store
from tests.support.agents import agent_config, agent_process
from tests.support.prints import print_log_copies
from tests.support.topology import SentinelSetup
from tests.support.venue import job_states
from tests.support.waiting import wait_until

PRINTERS = ("s1", "s2", "s3")
VENUE = "bench-sentinel"


async def _replication_ok(setup: SentinelSetup) -> bool:
    """Every server answers, exactly one is master, and each replica's link to it is up."""
    return await setup.replicas_follow(await setup.master_port())


async def main_async(rounds: int, badges: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="bench-sentinel-"))
    setup = SentinelSetup(root / "redis")
    setup.start()
    client = make_redis(RedisConfig.parse({"sentinel": {"master": setup.name, "nodes": setup.nodes}}), 1.0)
    store = Store(client, VENUE)
    k = Keys(VENUE)
    procs = []
    times: list[float] = []
    try:
        await wait_until(lambda: _replication_ok(setup), 30, every=0.05)
        ids: list[str] = []

        async def check_in(n: int) -> None:
            for _ in range(n):
                job = parse_job({"attendee_id": f"S-{len(ids)}", "name": f"Guest {len(ids)}"})
                await store.enqueue(job.job_id, job.payload(), None)
                ids.append(job.job_id)

        await check_in(badges)
        redis_section = {"sentinel": {"master": setup.name, "nodes": setup.nodes}}
        for name in PRINTERS:
            path = agent_config(root / f"{name}.yaml", VENUE, "redis://unused", name, 0.1)
            data = yaml.safe_load(path.read_text())
            data["redis"] = redis_section  # the agents find the master through the sentinels, like the desk
            path.write_text(yaml.safe_dump(data))
            procs.append(agent_process(path))

        async def printed() -> int:
            try:
                return int(await client.hget(k.stats, "printed") or 0)
            except (RedisError, OSError):
                return -1

        async def some_printed() -> bool:
            return await printed() >= 10

        await wait_until(some_printed, 30, every=0.05)
        for _ in range(rounds):
            await check_in(badges // 2)  # the rush goes on: the printers are busy at every kill
            old = setup.by_port(await setup.master_port())
            before = await printed()
            killed = time.monotonic()
            old.kill()

            async def moved(base: int = before) -> bool:
                return await printed() > base

            await wait_until(moved, 30, every=0.05)
            times.append(time.monotonic() - killed)
            old.start()
            await wait_until(lambda: _replication_ok(setup), 30, every=0.05)

        async def all_printed() -> bool:
            states = await job_states(client, VENUE, ids)
            return states is not None and all(s in (b"printed", b"dead") for s in states)

        await wait_until(all_printed, 120, every=0.05)
        states = await job_states(client, VENUE, ids) or []
        lost = sum(1 for s in states if s != b"printed")
        for proc in procs:
            stop_process(proc, 15)
        copies = print_log_copies(*(root / f"{name}.prints.jsonl" for name in PRINTERS))
        twice = [job_id for job_id, n in copies.items() if n > 1]
        unflagged = []
        for job_id in twice:
            job = await client.hgetall(k.job(job_id))
            if job.get(b"maybe_duplicate") != b"1" and job.get(b"duplicate_print") != b"1":
                unflagged.append(job_id)
        return {
            "failover_s": times,
            "badges": len(ids),
            "lost": lost,
            "printed_twice": len(twice),
            "printed_twice_unflagged": len(unflagged),
        }
    finally:
        for proc in procs:
            stop_process(proc, 15)
        await client.aclose()
        setup.stop()


def report(result: dict[str, Any]) -> str:
    t = result["failover_s"]
    s = spread(t)
    ok = percentile(t, 90) <= 5 and result["lost"] == 0 and result["printed_twice_unflagged"] == 0
    kills = table(
        f"Sentinel failover: master SIGKILLed -> next badge confirmed ({len(t)} kills, down-after 1000 ms)",
        "lower is better; s",
        ["measure", "n", "min", "median", "max", "p90"],
        [
            [
                "kill -> badge confirmed on the new master",
                len(t),
                fmt(s["min"]),
                fmt(s["median"]),
                fmt(s["max"]),
                fmt(percentile(t, 90)),
            ]
        ],
    )
    return (
        f"{kills}\n"
        f"badges acknowledged {result['badges']}, lost {result['lost']}, printed twice {result['printed_twice']} "
        f"(unflagged {result['printed_twice_unflagged']}); target p90 <= 5 s, 0 lost, 0 unflagged: {verdict(ok)}"
    )


# flag, default, help: see bench_main
OPTIONS = [
    ("--rounds", 10, "master kills"),
    ("--badges", 300, "badges checked in first (half as many per round)"),
]

if __name__ == "__main__":
    bench_main("sentinel", __doc__, main_async, report, OPTIONS)
