"""A bounded chaos run: random kill -9, freezes and printer faults, judged from the printers' own print logs."""

from __future__ import annotations

import asyncio
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer
from drivers.sim import SimControl
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import agent_process, write_agent_config
from tests.support.prints import print_log_copies
from tests.support.venue import pinned_index_mismatch
from tests.support.waiting import wait_until

SEED = 20261130
PRINTERS = ["c1", "c2", "c3", "c4"]
JOBS = 300
CHAOS_SECONDS = 40
FAULTS = ["media_out", "jam", "power_off", "no_answer", "head_open"]
FINAL = (b"printed", b"dead", b"cancelled")


async def snapshot_violations(redis: Redis, venue: str, ids: list[str]) -> list[str]:
    """Read every list, the pinned index and every job state in one MULTI: one instant of the venue."""
    k = Keys(venue)
    lists = [k.pool] + [k.queue(p) for p in PRINTERS] + [k.inflight(p) for p in PRINTERS]
    async with redis.pipeline(transaction=True) as pipe:
        pipe.zrange(k.pinned, 0, -1)
        for name in lists:
            pipe.lrange(name, 0, -1)
        for job_id in ids:
            pipe.hget(k.job(job_id), "state")
        index, *replies = await pipe.execute()
    where: dict[str, int] = {}
    waiting: set[str] = set()  # in the pool or a pinned queue: would be handed to a printer
    for name, members in zip(lists, replies[: len(lists)], strict=True):
        for raw in members:
            where[raw.decode()] = where.get(raw.decode(), 0) + 1
            if ":inflight:" not in name:
                waiting.add(raw.decode())
    # The pinned index holds exactly what the pinned queues hold: every script that moves a pinned job updates both.
    queues = dict(zip(PRINTERS, replies[1 : 1 + len(PRINTERS)], strict=True))
    problems = [f"pinned index: {p}" for p in pinned_index_mismatch(index, queues)]
    for job_id, state in zip(ids, replies[len(lists) :], strict=True):
        final = state in FINAL
        count = where.get(job_id, 0)
        # docs/design.md: a job that is not printed or dead is in exactly one list. A printed one is never waiting for
        # a printer; it may still sit in the in-flight list of a printer that took it before a woken zombie
        # confirmed it — that printer is printing a second copy, and its own confirm (or release) settles it.
        if (not final and count != 1) or (final and (job_id in waiting or count > 1)):
            problems.append(f"{job_id} state={state!r} in {count} lists")
    return problems


# Slow (about 40 s): rounds of kills, freezes and Redis restarts among real agent processes.
@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_chaos_every_badge_prints_and_no_duplicate_goes_unflagged(tmp_path: Path, venue: str) -> None:
    rng = random.Random(SEED)
    server = RedisServer(tmp_path / "redis")
    server.start()
    redis = Redis.from_url(server.url)
    configs = {
        name: write_agent_config(
            tmp_path / f"{name}.yaml",
            venue,
            server.url,
            name,
            print_time=rng.choice([0.03, 0.06, 0.1]),
            jobs__max_attempts=50,
            timing__affinity_wait=1.0,
        )
        for name in PRINTERS
    }
    controls = {name: SimControl(tmp_path / f"{name}.control.json") for name in PRINTERS}
    procs = {name: agent_process(cfg) for name, cfg in configs.items()}
    store = Store(redis, venue)
    ids: list[str] = []
    violations: list[str] = []
    actions: list[str] = []
    # Staff faults (reprint.lua, cancel.lua) from their own generator, so the printer faults stay the same sequence.
    staff_rng = random.Random(SEED + 1)
    reprints: dict[str, int] = {}
    try:
        await wait_until(lambda: _beating(redis, venue), timeout=20)
        deadline = time.monotonic() + CHAOS_SECONDS
        frozen: dict[str, float] = {}
        faulted: dict[str, float] = {}
        dead: dict[str, float] = {}
        while time.monotonic() < deadline:
            now = time.monotonic()
            if len(ids) < JOBS:
                for _ in range(rng.randint(3, 10)):
                    if len(ids) >= JOBS:
                        break
                    pin = rng.choice([None, None, None, *PRINTERS])
                    job = parse_job({"attendee_id": f"x{len(ids)}", "name": f"Guest {len(ids)}", "printer": pin})
                    await store.enqueue(job.job_id, job.payload(), job.printer)
                    ids.append(job.job_id)
            victim = rng.choice(PRINTERS)
            roll = rng.random()
            if roll < 0.08 and victim not in dead and victim not in frozen:
                procs[victim].kill()
                procs[victim].wait()
                dead[victim] = now + rng.uniform(0.3, 2.0)
                actions.append(f"kill {victim}")
            elif roll < 0.16 and victim not in dead and victim not in frozen:
                procs[victim].send_signal(signal.SIGSTOP)
                frozen[victim] = now + rng.uniform(0.3, 1.5)
                actions.append(f"freeze {victim}")
            elif roll < 0.3 and victim not in faulted:
                fault = rng.choice(FAULTS)
                controls[victim].set_fault(fault)
                faulted[victim] = now + rng.uniform(0.2, 2.0)
                actions.append(f"{fault} {victim}")
            elif roll < 0.38 and ids:
                job_id = staff_rng.choice(ids)
                if staff_rng.random() < 0.5:
                    kind, _ = await store.reprint(job_id, "chaos", "staff", 2, False)
                    if kind == "reprint":
                        reprints[job_id] = reprints.get(job_id, 0) + 1
                else:
                    kind, _ = await store.cancel(job_id, "staff")
                actions.append(f"{kind} {job_id}")
            for name, until in list(frozen.items()):
                if now >= until:
                    procs[name].send_signal(signal.SIGCONT)
                    del frozen[name]
            for name, until in list(faulted.items()):
                if now >= until:
                    controls[name].set_fault(None)
                    del faulted[name]
            for name, until in list(dead.items()):
                if now >= until:
                    procs[name] = agent_process(configs[name])
                    del dead[name]
            violations += await snapshot_violations(redis, venue, ids)
            await asyncio.sleep(0.15)
        # Calm after the storm: every printer healthy and running again.
        for name in frozen:
            procs[name].send_signal(signal.SIGCONT)
        for name in faulted:
            controls[name].set_fault(None)
        for name in dead:
            procs[name] = agent_process(configs[name])
        try:
            await wait_until(lambda: _all_final(redis, venue, ids), timeout=60)
        except TimeoutError:
            k = Keys(venue)
            stuck = {}
            for job_id in ids:
                state = await redis.hget(k.job(job_id), "state")
                if state not in FINAL:
                    stuck[job_id] = (state, await redis.hget(k.job(job_id), "printer"))
            held = {p: await redis.lrange(k.inflight(p), 0, -1) for p in PRINTERS}
            pool = await redis.llen(k.pool)
            raise AssertionError(f"not settled: {list(stuck.items())[:10]} inflight={held} pool={pool}") from None
        violations += await snapshot_violations(redis, venue, ids)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.send_signal(signal.SIGTERM)
        for proc in procs.values():
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
    try:
        assert len(ids) == JOBS
        assert sum(a.startswith("kill") for a in actions) >= 3, actions
        assert sum(a.startswith("freeze") for a in actions) >= 3, actions
        assert violations == [], violations[:10]
        copies = print_log_copies(*(tmp_path / f"{p}.prints.jsonl" for p in PRINTERS))
        k = Keys(venue)
        states = {i: await redis.hget(k.job(i), "state") for i in ids}
        # A cancelled job may still have printed: a frozen printer that held it before a reclaim wakes and confirms.
        missing = [i for i in ids if copies[i] < 1 + reprints.get(i, 0) and states[i] != b"cancelled"]
        assert missing == [], missing
        assert await redis.llen(k.dlq) == 0
        assert any(a.startswith("reprint ") for a in actions) and any(a.startswith("cancelled ") for a in actions)
        # An intended reprint is an expected copy: only copies beyond them must be flagged.
        unflagged = [
            i
            for i in ids
            if copies[i] > 1 + reprints.get(i, 0) and await redis.hget(k.job(i), "maybe_duplicate") != b"1"
        ]
        assert unflagged == [], unflagged
    finally:
        await redis.aclose()
        server.stop()


async def _beating(redis: Redis, venue: str) -> bool:
    return len(await redis.zrange(Keys(venue).hb, 0, -1)) == len(PRINTERS)


async def _all_final(redis: Redis, venue: str, ids: list[str]) -> bool:
    k = Keys(venue)
    async with redis.pipeline(transaction=False) as pipe:
        for job_id in ids:
            pipe.hget(k.job(job_id), "state")
        states = await pipe.execute()
    return all(s in FINAL for s in states)
