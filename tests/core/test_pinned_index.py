"""The venue's pinned index (``Keys.pinned``) equals the pinned queues after every step that moves a pinned job, and
makes an idle agent's steal look one read however many peers it has."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from protocol.keys import Keys, pinned_member
from protocol.library import default_library
from protocol.store import Store
from tests.support.agents import add, enqueue_many, running_agent
from tests.support.redis_traffic import Monitor
from tests.support.venue import assert_each_unfinished_job_in_one_list, assert_pinned_index_exact
from tests.support.waiting import wait_until


async def indexed(redis: Redis, venue: str) -> list[str]:
    """The index's members, oldest first."""
    return [m.decode() for m in await redis.zrange(Keys(venue).pinned, 0, -1)]


async def test_index_follows_a_pinned_job_through_every_step(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    await add(store, "free")  # the pool is not indexed
    for printer, n in (("desk-1", 2), ("desk-2", 3), ("desk-3", 2)):
        await enqueue_many(store, n, f"{printer}-", printer=printer)
    assert len(await indexed(redis, venue)) == 7
    await assert_pinned_index_exact(redis, venue)  # scores are the jobs' enqueued_ms too
    # A job id that exists already is not queued again, to any printer.
    assert (await store.enqueue("desk-1-0", "{}", "desk-2"))[0] is False
    assert pinned_member("desk-2", "desk-1-0") not in await indexed(redis, venue)

    # take, from its own queue: out of the index; from the pool: the index is untouched.
    assert await store.take("desk-1") == ("q", "desk-1-0")
    assert pinned_member("desk-1", "desk-1-0") not in await indexed(redis, venue)
    assert await store.take("desk-9") == ("pool", "free")
    await assert_pinned_index_exact(redis, venue)

    # steal: refused while young (nothing moves), then the oldest of the other printers' jobs goes.
    assert await store.steal("desk-8", 60_000) is None
    await assert_pinned_index_exact(redis, venue)
    assert await store.steal("desk-8", 0) == "desk-1-1"  # desk-1's, the oldest left
    assert await store.steal("desk-7", 0) == "desk-2-0"
    assert pinned_member("desk-2", "desk-2-0") not in await indexed(redis, venue)
    await assert_pinned_index_exact(redis, venue)
    # A stolen job that fails goes to the pool, never back into the index.
    await store.begin("desk-7", "Desk 7", "desk-2-0")
    assert await store.release("desk-7", "Desk 7", "desk-2-0", "failed", "jam", 3) == "released"
    await assert_pinned_index_exact(redis, venue)

    # handback (its printer is down): every job of that printer leaves the index, no other.
    assert await store.handback("desk-2", "printer down: head open") == 2
    assert [m for m in await indexed(redis, venue) if m.startswith("desk-2|")] == []
    await assert_pinned_index_exact(redis, venue)

    # drain: the same; a job pinned to the drained printer afterwards is indexed (peers steal it in time).
    assert await store.drain("desk-3", "drain", "ops") == 2
    await assert_pinned_index_exact(redis, venue)
    assert await indexed(redis, venue) == []
    late = await enqueue_many(store, 1, "late-", printer="desk-3")
    assert await indexed(redis, venue) == [pinned_member("desk-3", late[0])]
    assert await store.drain("desk-3", "resume", "ops") == 0
    await assert_pinned_index_exact(redis, venue)
    ids = [f"desk-1-{i}" for i in range(2)] + [f"desk-2-{i}" for i in range(3)] + [f"desk-3-{i}" for i in range(2)]
    await assert_each_unfinished_job_in_one_list(redis, venue, ["free", *ids, *late])


async def test_reclaim_of_a_dead_agent_empties_its_part_of_the_index(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    await store.beat("gone", {"state": "ready", "location": "Hall C"}, 60_000, first=True)
    await store.beat("alive", {"state": "ready", "location": "Hall D"}, 60_000, first=True)
    mine = await enqueue_many(store, 4, "g", printer="gone")
    theirs = await enqueue_many(store, 2, "l", printer="alive")
    assert await store.take("gone") == ("q", "g0")
    assert (await store.begin("gone", "Hall C", "g0")).kind == "print"
    # Its last beat was 10 s ago (server time): dead by the default 3 s.
    await redis.zadd(k.hb, {"gone": await store.server_ms() - 10_000})
    result = await store.reclaim("gone", "alive", 3000)
    assert (result.kind, result.held, result.pinned) == ("reclaimed", "g0", 3)
    assert await indexed(redis, venue) == [pinned_member("alive", i) for i in theirs]
    # Twice: nothing moves, the index is unchanged.
    assert (await store.reclaim("gone", "alive", 3000)).kind == "gone"
    await assert_each_unfinished_job_in_one_list(redis, venue, mine + theirs)


async def test_a_queue_emptied_by_hand_does_not_leave_the_index_stuck(redis: Redis, venue: str) -> None:
    """An operator's DEL of a pinned queue bypasses the scripts; the first look that trips on it drops the entry."""
    store = Store(redis, venue)
    k = Keys(venue)
    await enqueue_many(store, 2, "lost", printer="desk-5")
    kept = await enqueue_many(store, 1, "kept", printer="desk-6")
    await redis.delete(k.queue("desk-5"))
    assert await store.steal("desk-1", 0) == kept[0]  # past both stale entries to the oldest real one
    assert await indexed(redis, venue) == []
    await assert_pinned_index_exact(redis, venue)


async def test_index_stays_exact_through_a_random_mix_of_every_operation(redis: Redis, venue: str) -> None:
    """Every script that touches a pinned queue, in a random order, with the index checked after each step."""
    rng = random.Random(7)
    store = Store(redis, venue)
    printers = ["p1", "p2", "p3", "p4"]
    ids: list[str] = []
    for step in range(300):
        me = rng.choice(printers)
        op = rng.choice(["enqueue", "enqueue", "enqueue", "take", "steal", "finish", "handback", "drain", "reclaim"])
        if op == "enqueue":
            ids.append(await add(store, f"j{step}", rng.choice([None, *printers])))
        elif op == "take":
            await store.take(me)
        elif op == "steal":
            await store.steal(me, 0)
        elif op == "finish":  # whatever it holds: printed, failed, maybe printed, or unreadable
            held = await store.inflight(me)
            begun = await store.begin(me, me, held[0]) if held else None
            if begun is not None and begun.kind == "print":
                end = rng.choice(["confirm", "failed", "unknown", "dead"])
                if end == "confirm":
                    await store.confirm(me, me, held[0], begun.epoch)
                elif end == "dead":
                    await store.dead_letter(me, held[0], "cannot render")
                    assert await store.requeue(held[0], "ops") == "requeued"
                else:
                    await store.release(me, me, held[0], end, "printer fault", 50)
        elif op == "handback":
            await store.handback(me, "printer down")
        elif op == "drain":
            await store.drain(me, rng.choice(["drain", "resume"]), "ops")
        else:
            await store.reclaim(me, "ops", None)
        await assert_pinned_index_exact(redis, venue)
    await assert_each_unfinished_job_in_one_list(redis, venue, ids)


async def test_an_idle_look_is_one_read_however_many_peers(redis: Redis, redis_server: RedisServer, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    peers = [f"peer-{i}" for i in range(200)]
    for peer in peers:
        await store.beat(peer, {"state": "paused", "location": peer}, 60_000, first=True)
    for peer in peers[:50]:  # pinned jobs waiting for their (busy) printers
        await enqueue_many(store, 2, f"{peer}-", printer=peer)
    await store.beat("idle", {"state": "ready", "location": "Hall A"}, 60_000, first=True)
    await store.scripts.prepare()  # so no FUNCTION LOAD lands in the count
    own = (await redis.client_info())["addr"]

    async def one_look(affinity_ms: int) -> tuple[str | None, list[str]]:
        monitor = Monitor(redis_server.port)
        await asyncio.sleep(0.1)
        stolen = await store.steal("idle", affinity_ms)
        await asyncio.sleep(0.1)
        return stolen, [f"{command} {arg}" for _, client, command, arg in monitor.close() if client == own]

    # 100 jobs wait, none for 10 s: one read, and the steal script is not even called.
    assert await one_look(10_000) == (None, [f"zrange {k.pinned}"])
    # They have waited 50 ms: the same one read, then the steal script for the oldest alone.
    await asyncio.sleep(0.1)
    stolen, commands = await one_look(50)
    assert stolen == "peer-0-0"
    assert [c.split()[0] for c in commands] == ["zrange", "fcall"], commands
    await assert_pinned_index_exact(redis, venue)


async def test_a_running_idle_agent_reads_no_peer_queue(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """A real agent among 100 peers with pinned work waiting: each look is one ZRANGE, no per-peer LINDEX."""
    store = Store(redis, venue)
    k = Keys(venue)
    peers = [f"peer-{i}" for i in range(100)]

    async def peers_beating() -> None:  # alive (their printers busy elsewhere), so nobody reclaims their queues
        while True:
            for peer in peers:
                await store.beat(peer, {"state": "paused", "location": peer}, 60_000, first=False)
            await asyncio.sleep(0.1)

    steal_sha = default_library().function("steal")
    beating = asyncio.create_task(peers_beating())
    try:
        # affinity_wait 5 s: a look every max(block 0.2 s, 5 s / 5) = 1 s, and the jobs stay too young to steal; peers
        # are dead only after 30 missed beats, so a slow machine beating 100 of them one by one declares none dead.
        async with running_agent(
            tmp_path, venue, redis_server.url, name="idle", timing__affinity_wait=5.0, timing__dead_after_misses=30
        ) as agent:
            await wait_until(lambda: redis.zscore(k.hb, "idle"))
            for peer in peers:
                await enqueue_many(store, 1, f"{peer}-", printer=peer)
            monitor = Monitor(redis_server.port)
            await asyncio.sleep(3.0)  # the behaviour under test: the agent's looks over three seconds, one a second
            seen = monitor.close()
            assert agent.printed == 0
    finally:
        beating.cancel()
    sent = [(command, arg) for _, client, command, arg in seen if client != "lua"]
    looks = [arg for command, arg in sent if command == "zrange"]
    assert set(looks) == {k.pinned} and 2 <= len(looks) <= 4, looks  # one read a look, not one per peer
    assert [arg for command, arg in sent if command == "lindex" and ":q:" in arg] == []
    # Judged young on the server's clock (from the heartbeat) without running the steal script.
    assert [arg for command, arg in sent if arg == steal_sha] == []
    await assert_pinned_index_exact(redis, venue)
