"""Test helpers that read the venue's state the way an auditor would."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from redis.asyncio import Redis

from agent.protocol.keys import Keys


async def where_is(redis: Redis, venue: str) -> dict[str, list[str]]:
    """job id -> every list it currently sits in (pool, q:<p>, inflight:<p>)."""
    k = Keys(venue)
    found: dict[str, list[str]] = {}
    lists = [k.pool]
    async for key in redis.scan_iter(match=f"{k.prefix}q:*"):
        lists.append(key.decode())
    async for key in redis.scan_iter(match=f"{k.prefix}inflight:*"):
        lists.append(key.decode())
    for name in lists:
        for raw in await redis.lrange(name, 0, -1):
            found.setdefault(raw.decode(), []).append(name.removeprefix(k.prefix))
    return found


async def assert_each_unfinished_job_in_one_list(redis: Redis, venue: str, job_ids: list[str]) -> None:
    k = Keys(venue)
    places = await where_is(redis, venue)
    for job_id in job_ids:
        state = (await redis.hget(k.job(job_id), "state") or b"").decode()
        done = await redis.exists(k.done(job_id))
        assert (state == "printed") == bool(done), (job_id, state, done)
        if state in ("printed", "dead"):
            assert job_id not in places, (job_id, state, places.get(job_id))
        else:
            assert len(places.get(job_id, [])) == 1, (job_id, state, places.get(job_id))


def print_log_copies(*logs: Path, complete_only: bool = True) -> Counter[str]:
    copies: Counter[str] = Counter()
    for log in logs:
        if not log.exists():
            continue
        for line in log.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry["complete"] or not complete_only:
                copies[entry["job_id"]] += 1
    return copies
