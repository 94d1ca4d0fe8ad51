"""Failover: SIGKILL an agent holding a badge mid-print; time until a peer's printer shows that badge started.

Run: .venv/bin/python -m bench.failover [--venues V] [--rounds R] [--pinned 40]
Prints a table and writes bench/results/failover.json.

Every agent is a real ``badge-agent run`` process at the default timings (heartbeat 1 s, dead after 3 missed beats),
on simulated printers. Several venues run at once on one Redis so that 20+ kills fit in well under a minute; each
venue has two peers (0.05 s a badge) and, per round, a fresh victim (60 s a badge, so it is always mid-print)
holding one badge pinned to it. The victim is killed at a random moment of its heartbeat period (0-1 s after the
badge started) and the clock is wall time on both sides: the kill, and the ``started`` field of the peers' print
logs (the sim's first-byte time). A last round gives each victim 40 more pinned badges and also times until all of
them are out of the peers' printers.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from bench.common import bench_main, fmt, percentile, redis_server, spread, table, verdict
from cli.redis_server import stop_process
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import agent_config, agent_process
from tests.support.prints import read_print_log

PEERS = 2
TIMEOUT = 30.0  # a failover that takes longer than this is recorded as a failure, not waited for


def first_started(logs: list[Path], job_ids: set[str], complete: bool = False) -> dict[str, float]:
    """job id -> earliest ``started`` (or, with ``complete``, the time it came out) in the peers' print logs."""
    out: dict[str, float] = {}
    for log in logs:
        for entry in read_print_log(log):
            if entry["job_id"] in job_ids and (entry["complete"] or not complete):
                t = entry["t"] if complete else entry["started"]
                out[entry["job_id"]] = min(out.get(entry["job_id"], t), t)
    return out


class Venue:
    def __init__(self, url: str, tmp: Path, index: int) -> None:
        self.url = url
        self.name = f"fo-{index}"
        self.folder = tmp / self.name
        self.folder.mkdir()
        self.redis = Redis.from_url(url)
        self.store = Store(self.redis, self.name)
        self.keys = Keys(self.name)
        self.procs: list[subprocess.Popen[bytes]] = []
        self.peer_logs = [self.folder / f"peer-{j}.prints.jsonl" for j in range(PEERS)]

    def start_peers(self) -> None:
        for j in range(PEERS):
            cfg = agent_config(self.folder / f"peer-{j}.yaml", self.name, self.url, f"peer-{j}", 0.05)
            self.procs.append(agent_process(cfg))

    async def enqueue(self, ids: list[str], printer: str) -> None:
        for job_id in ids:
            job = parse_job({"attendee_id": job_id, "name": f"Attendee {job_id}", "printer": printer})
            await self.store.enqueue(job.job_id, job.payload(), job.printer)

    async def kill_round(self, r: int, pinned: int) -> dict[str, Any]:
        victim = f"victim-{r}"
        held = f"{self.name}-r{r}-held"
        rest = [f"{self.name}-r{r}-pin{i}" for i in range(pinned)]
        await self.enqueue([held, *rest], victim)
        cfg = agent_config(self.folder / f"{victim}.yaml", self.name, self.url, victim, 60.0)
        proc = agent_process(cfg)
        self.procs.append(proc)
        async with asyncio.timeout(30):
            while await self.redis.hget(self.keys.job(held), "state") != b"printing":
                await asyncio.sleep(0.02)
        await asyncio.sleep(random.uniform(0.0, 1.0))  # any moment of the victim's heartbeat period
        proc.kill()
        killed = time.time()
        await asyncio.to_thread(proc.wait)
        result: dict[str, Any] = {"venue": self.name, "round": r}
        deadline = time.monotonic() + TIMEOUT
        want = {held, *rest}
        while time.monotonic() < deadline:
            seen = first_started(self.peer_logs, {held})
            if held in seen and "kill_to_first_byte_s" not in result:
                result["kill_to_first_byte_s"] = seen[held] - killed
            if not rest and "kill_to_first_byte_s" in result:
                break
            if rest:
                out = first_started(self.peer_logs, want, complete=True)
                if len(out) == len(want):
                    result["kill_to_all_out_s"] = max(out.values()) - killed
                    pinned_started = first_started(self.peer_logs, set(rest))
                    result["kill_to_first_pinned_byte_s"] = min(pinned_started.values()) - killed
                    break
            await asyncio.sleep(0.02)
        return result

    async def close(self) -> None:
        for proc in self.procs:
            stop_process(proc, 15)
        await self.redis.aclose()


async def main_async(venues: int, rounds: int, pinned: int) -> dict[str, Any]:
    kills: list[dict[str, Any]] = []
    backlog: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="badge-bench-fo-") as tmpdir, redis_server() as server:
        fleet = [Venue(server.url, Path(tmpdir), i) for i in range(venues)]
        try:
            for v in fleet:
                v.start_peers()
            await asyncio.sleep(4.0)  # peers beating for the whole dead-after window: they may sweep
            for r in range(rounds):
                kills += await asyncio.gather(*(v.kill_round(r, 0) for v in fleet))
            backlog = await asyncio.gather(*(v.kill_round(rounds, pinned) for v in fleet))
        finally:
            for v in fleet:
                await v.close()
    ok = [k["kill_to_first_byte_s"] for k in kills if "kill_to_first_byte_s" in k]
    ok += [k["kill_to_first_byte_s"] for k in backlog if "kill_to_first_byte_s" in k]
    all_out = [k["kill_to_all_out_s"] for k in backlog if "kill_to_all_out_s" in k]
    first_pinned = [k["kill_to_first_pinned_byte_s"] for k in backlog if "kill_to_first_pinned_byte_s" in k]
    total = len(kills) + len(backlog)
    return {
        "timings": "default: heartbeat_interval 1 s, dead_after_misses 3 (dead after 3 s), sweep every 0.5 s",
        "kills": total,
        "failed": total - len(ok),
        "kill_to_first_byte_s": {**spread(ok), "p99": percentile(ok, 99)},
        "backlog_pinned": pinned,
        "backlog_kill_to_first_pinned_byte_s": spread(first_pinned),
        "backlog_kill_to_all_out_s": spread(all_out),
        "raw": {"kills": kills, "backlog": backlog},
        "targets": {"p99_le_5s": bool(ok) and percentile(ok, 99) <= 5.0 and total == len(ok)},
    }


def report(res: dict[str, Any]) -> str:
    k = res["kill_to_first_byte_s"]
    label = "kill -> held badge's first byte at a peer"
    rows = [[label, res["kills"] - res["failed"], fmt(k["min"]), fmt(k["median"]), fmt(k["max"]), fmt(k["p99"])]]
    for label, key in (
        (f"kill -> first of {res['backlog_pinned']} pinned at a peer", "backlog_kill_to_first_pinned_byte_s"),
        (f"kill -> all {res['backlog_pinned']} pinned + held out", "backlog_kill_to_all_out_s"),
    ):
        s = res[key]
        rows.append([label, s["n"], fmt(s["min"]), fmt(s["median"]), fmt(s["max"]), "-"])
    return "\n".join(
        [
            table(
                f"Failover after SIGKILL, {res['timings']}",
                "lower is better; seconds",
                ["measure", "n", "min", "median", "max", "p99"],
                rows,
            ),
            f"kills without a first byte elsewhere within {TIMEOUT:g} s: {res['failed']}",
            f"target p99 <= 5 s at default timings: {verdict(res['targets']['p99_le_5s'])}",
        ]
    )


OPTIONS = [("--venues", 4, ""), ("--rounds", 5, ""), ("--pinned", 40, "")]  # flag, default, help: see bench_main

if __name__ == "__main__":
    bench_main("failover", __doc__, main_async, report, OPTIONS)
