"""Reading the venue's state in Redis as an auditor would: where each job sits, whether the pinned index is exact,
each job's state."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from redis.asyncio import Redis
from redis.exceptions import RedisError

from protocol.keys import Keys, split_pinned_member


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
    """The one-list invariant (docs/design.md, "Job states") for these jobs; the pinned index equals the queues."""
    await assert_pinned_index_exact(redis, venue)
    k = Keys(venue)
    places = await where_is(redis, venue)
    for job_id in job_ids:
        state = (await redis.hget(k.job(job_id), "state") or b"").decode()
        done = await redis.exists(k.done(job_id))
        assert (state == "printed") == bool(done), (job_id, state, done)
        if state in ("printed", "dead", "cancelled"):
            assert job_id not in places, (job_id, state, places.get(job_id))
        else:
            assert len(places.get(job_id, [])) == 1, (job_id, state, places.get(job_id))


def pinned_index_mismatch(index: Iterable[bytes], queues: dict[str, list[bytes]]) -> list[str]:
    """How the pinned index differs from the pinned queues (printer -> ids in ``q:<printer>``); [] when exact.

    Exact means: each (printer, id) waiting in a pinned queue is one member of the index, and the index has no other
    member. An id twice in one queue is a mismatch too (a set cannot say it waits twice).
    """
    waiting: Counter[tuple[str, str]] = Counter(
        (printer, raw.decode("utf-8", "surrogateescape")) for printer, ids in queues.items() for raw in ids
    )
    indexed = {split_pinned_member(raw.decode("utf-8", "surrogateescape")) for raw in index}
    problems = [f"q:{p} holds {i} {n} times" for (p, i), n in sorted(waiting.items()) if n > 1]
    problems += [f"q:{p} holds {i}, the index does not" for p, i in sorted(set(waiting) - indexed)]
    problems += [f"the index holds {p}|{i}, q:{p} does not" for p, i in sorted(indexed - set(waiting))]
    return problems


async def pinned_index_problems(redis: Redis, venue: str) -> list[str]:
    """Compare ``pinned`` with every ``q:<printer>`` of the venue (read in one MULTI), and each score with the job's
    ``enqueued_ms``. [] when the index is exact."""
    k = Keys(venue)
    queue_keys = [key async for key in redis.scan_iter(match=f"{k.prefix}q:*")]
    async with redis.pipeline(transaction=True) as pipe:
        pipe.zrange(k.pinned, 0, -1, withscores=True)
        for key in queue_keys:
            pipe.lrange(key, 0, -1)
        index, *lists = await pipe.execute()
    queues = {key.decode().removeprefix(f"{k.prefix}q:"): ids for key, ids in zip(queue_keys, lists, strict=True)}
    problems = pinned_index_mismatch([member for member, _ in index], queues)
    for member, score in index:
        _, job_id = split_pinned_member(member.decode())
        enqueued = await redis.hget(k.job(job_id), "enqueued_ms")
        if enqueued is None or int(enqueued) != score:
            problems.append(f"{member.decode()} scored {score}, enqueued_ms {enqueued!r}")
    return problems


async def assert_pinned_index_exact(redis: Redis, venue: str) -> None:
    problems = await pinned_index_problems(redis, venue)
    assert problems == [], problems


async def job_states(client: Redis, venue: str, ids: Sequence[str]) -> list[bytes | None] | None:
    """Each job's state, read in one round trip; None while Redis does not answer (a failover under way)."""
    k = Keys(venue)
    try:
        async with client.pipeline(transaction=False) as pipe:
            for job_id in ids:
                pipe.hget(k.job(job_id), "state")
            return list(await pipe.execute())
    except (RedisError, OSError):
        return None
