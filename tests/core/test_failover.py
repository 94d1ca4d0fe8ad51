"""Failover: a dead agent or printer loses no badge and prints none twice unflagged (docs/venue.md, section 4)."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from agent.journal import Journal
from agent.printer import Printer
from agent.recovery import Recovered, Recovery
from cli.redis_server import RedisServer
from drivers.sim import SimControl, SimDriver
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import (
    at_least,
    enqueue_many,
    eq,
    print_it,
    printed_count,
    running_agent,
    running_process,
    state_is,
    write_agent_config,
)
from tests.support.prints import print_log_copies
from tests.support.venue import assert_each_unfinished_job_in_one_list, assert_pinned_index_exact
from tests.support.waiting import wait_until


async def events_of(redis: Redis, venue: str, kind: str) -> list[dict[str, str]]:
    out = []
    for _, fields in await redis.xrange(Keys(venue).events):
        data = {a.decode(): b.decode() for a, b in fields.items()}
        if data["event"] == kind:
            out.append(data)
    return out


async def test_a_backup_prints_each_unprinted_badge_of_a_dead_printer_once_and_never_the_confirmed_one(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """A dead printer at a desk: every unprinted badge prints once on the backup, the confirmed one never again."""
    store = Store(redis, venue)
    k = Keys(venue)
    await store.beat("primary", {"state": "ready", "location": "Hall A, desk 1"}, 60_000, first=True)
    ids = await enqueue_many(store, 41, "seed", printer="primary")
    # The primary took the oldest and was printing it when it died...
    assert await store.take("primary") == ("q", "seed0")
    assert (await store.begin("primary", "Hall A, desk 1", "seed0")).kind == "print"
    # ...and one badge further back had been confirmed printed just before (its stale copy is still queued).
    await redis.set(k.done("seed7"), "primary")
    await redis.hset(k.job("seed7"), mapping={"state": "printed"})
    async with running_agent(tmp_path, venue, redis_server.url, name="backup", print_time=0.01):
        await wait_until(lambda: eq(printed_count(redis, venue), 40), timeout=20)
        # Failover a second time (an operator's nervous double run): nothing moves, nothing reprints.
        again = await store.reclaim("primary", "operator", None)
        assert again.kind == "reclaimed" and again.held == "" and again.pinned == 0
        await asyncio.sleep(0.3)
    copies = print_log_copies(tmp_path / "backup.prints.jsonl")
    assert copies == {i: 1 for i in ids if i != "seed7"}
    assert (await events_of(redis, venue, "reclaimed"))[0]["job_id"] == "seed0"
    dead = await events_of(redis, venue, "agent_dead")
    assert (
        dead[0]["printer"] == "primary" and dead[0]["location"] == "Hall A, desk 1" and dead[0]["handed_back"] == "40"
    )
    # The badge that was printing at the primary may be on paper there: staff are told where.
    job0 = await redis.hgetall(k.job("seed0"))
    assert job0[b"maybe_duplicate"] == b"1" and b"primary (Hall A, desk 1)" in job0[b"maybe_printed_where"]
    assert await redis.hget(k.job("seed1"), "maybe_duplicate") == b"0"
    health = json.loads(await redis.get(k.health("primary")))
    assert health["state"] == "dead"
    assert await redis.llen(k.queue("primary")) == 0
    await assert_each_unfinished_job_in_one_list(redis, venue, ids)


async def test_a_probe_blip_shorter_than_the_threshold_changes_nothing(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    control = SimControl(tmp_path / "desk-1.control.json")
    control.set_fault("paused")  # the printer is paused: pinned jobs wait for it
    await enqueue_many(store, 3, "pin", printer="desk-1")
    async with running_agent(
        tmp_path, venue, redis_server.url, print_time=0.01, timing__probe_interval=0.1, timing__down_after_failures=6
    ):
        await asyncio.sleep(0.25)  # two or three failed probes: fewer than six
        control.set_fault(None)
        await wait_until(lambda: eq(printed_count(redis, venue), 3))
    assert await events_of(redis, venue, "device_down") == []
    assert await events_of(redis, venue, "handed_back") == []
    assert [e["printer"] for e in await events_of(redis, venue, "printed")] == ["desk-1"] * 3


async def test_second_seed_down_printer_gets_nothing_fast_printers_take_more_duplicates_change_nothing(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    SimControl(tmp_path / "down.control.json").set_fault("head_open")
    ids = await enqueue_many(store, 60)
    before = await redis.llen(Keys(venue).pool)
    again = await enqueue_many(store, 5)  # the same attendees checked in twice at a desk
    assert await redis.llen(Keys(venue).pool) == before and set(again) <= set(ids)
    async with (
        running_agent(tmp_path, venue, redis_server.url, name="fast", print_time=0.02),
        running_agent(tmp_path, venue, redis_server.url, name="slow", print_time=0.08),
        running_agent(tmp_path, venue, redis_server.url, name="down", print_time=0.02),
    ):
        await wait_until(lambda: eq(printed_count(redis, venue), 60), timeout=30)
    fast = print_log_copies(tmp_path / "fast.prints.jsonl")
    slow = print_log_copies(tmp_path / "slow.prints.jsonl")
    assert print_log_copies(tmp_path / "down.prints.jsonl") == {}
    assert sum(fast.values()) + sum(slow.values()) == 60 and set(fast) | set(slow) == set(ids)
    assert sum(fast.values()) > 2 * sum(slow.values())  # 4x faster: takes far more than its "fair" half


async def test_kill_9_mid_print_a_peer_prints_the_held_and_pinned_jobs(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    victim_cfg = write_agent_config(tmp_path / "victim.yaml", venue, redis_server.url, "victim", print_time=3.0)
    peer_cfg = write_agent_config(tmp_path / "peer.yaml", venue, redis_server.url, "peer", print_time=0.02)
    ids = await enqueue_many(store, 6, "v", printer="victim")
    with running_process(victim_cfg) as victim:
        await wait_until(lambda: state_is(redis, k, "v0", b"printing"))
        with running_process(peer_cfg) as peer:
            victim.kill()  # SIGKILL: no goodbye, the printer was mid-badge
            await wait_until(lambda: eq(printed_count(redis, venue), 6), timeout=20)
            peer.send_signal(signal.SIGTERM)
            assert await asyncio.to_thread(peer.wait, 15) == 0
    assert print_log_copies(tmp_path / "peer.prints.jsonl") == {i: 1 for i in ids}
    assert print_log_copies(tmp_path / "victim.prints.jsonl") == {}
    v0 = await redis.hgetall(k.job("v0"))
    assert v0[b"maybe_duplicate"] == b"1" and b"victim (desk of victim)" in v0[b"maybe_printed_where"]
    assert [e["printer"] for e in await events_of(redis, venue, "agent_dead")] == ["victim"]
    await assert_each_unfinished_job_in_one_list(redis, venue, ids)


async def test_kill_9_mid_print_with_the_journal_lost_the_restarted_agent_flags_the_badge_instead_of_reprinting(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """The agent dies with a badge at its printer and its journal goes with its disk; it starts again under the same
    name on a new disk. Redis still says this printer began the job: it may be on paper, so recovery releases it as
    maybe printed, saying where, and the copy printed next is flagged (agent/recovery.py)."""
    store = Store(redis, venue)
    k = Keys(venue)
    cfg = write_agent_config(tmp_path / "victim.yaml", venue, redis_server.url, "victim", print_time=3.0)
    (job_id,) = await enqueue_many(store, 1, "lost")
    with running_process(cfg) as victim:
        await wait_until(lambda: state_is(redis, k, job_id, b"printing"))
        journal = tmp_path / "victim.journal"
        await wait_until(lambda: _journal_says(journal, job_id, "sending"))  # the badge is going to the printer
        victim.kill()  # SIGKILL mid-badge
        await asyncio.to_thread(victim.wait, 15)
    journal.unlink()  # the disk is gone with it
    with running_process(cfg) as again:
        await wait_until(lambda: state_is(redis, k, job_id, b"printed"), timeout=20)
        again.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(again.wait, 15) == 0
    job = await redis.hgetall(k.job(job_id))
    assert job[b"maybe_printed"] == b"1" and b"victim (desk of victim)" in job[b"maybe_printed_where"]
    assert job[b"maybe_duplicate"] == b"1"
    [released] = await events_of(redis, venue, "released")
    assert released["outcome"] == "unknown" and "no journal record" in released["reason"], released
    assert print_log_copies(tmp_path / "victim.prints.jsonl", complete_only=False) == {job_id: 1}


async def _journal_says(path: Path, job_id: str, stage: str) -> bool:
    await asyncio.sleep(0.01)
    if not path.exists():
        return False
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {"job": job_id, "epoch": 1, "stage": stage} in records


async def test_a_frozen_agent_never_prints_what_it_no_longer_owns_and_rejoins(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    zombie_cfg = write_agent_config(tmp_path / "zombie.yaml", venue, redis_server.url, "zombie", print_time=0.6)
    peer_cfg = write_agent_config(tmp_path / "peer.yaml", venue, redis_server.url, "peer", print_time=0.02)
    ids = await enqueue_many(store, 5, "z", printer="zombie")
    with running_process(zombie_cfg) as zombie, running_process(peer_cfg) as peer:
        await wait_until(lambda: state_is(redis, k, "z0", b"printing"))
        zombie.send_signal(signal.SIGSTOP)
        await wait_until(lambda: eq(printed_count(redis, venue), 5), timeout=20)
        zombie.send_signal(signal.SIGCONT)
        # It learns from its next heartbeat that it was declared dead, and rejoins.
        await wait_until(lambda: _rejoined(redis, venue))
        later = await enqueue_many(store, 2, "after", printer="zombie")
        await wait_until(lambda: eq(printed_count(redis, venue), 7), timeout=20)
        for proc in (zombie, peer):
            proc.send_signal(signal.SIGTERM)
            assert await asyncio.to_thread(proc.wait, 15) == 0
    zombie_prints = print_log_copies(tmp_path / "zombie.prints.jsonl")
    peer_prints = print_log_copies(tmp_path / "peer.prints.jsonl")
    # The only badge the zombie may have put on paper after waking is the one already in its printer (z0); every
    # other job it had lost is printed by the peer alone.
    assert set(zombie_prints) - {"z0"} <= set(later)
    for job_id in ids + later:
        copies = zombie_prints[job_id] + peer_prints[job_id]
        assert copies >= 1, job_id
        if copies > 1:
            assert await redis.hget(k.job(job_id), "maybe_duplicate") == b"1", job_id
    assert "declared this agent dead" in zombie_cfg.with_suffix(".log").read_text()


async def _rejoined(redis: Redis, venue: str) -> bool:
    return bool(await events_of(redis, venue, "rejoined"))


async def test_a_redis_restart_reclaims_nothing_from_live_agents(tmp_path: Path, venue: str) -> None:
    server = RedisServer(tmp_path / "redis")
    server.start()
    redis = Redis.from_url(server.url)
    try:
        store = Store(redis, venue)
        configs = [write_agent_config(tmp_path / f"p{i}.yaml", venue, server.url, f"p{i}") for i in range(3)]
        procs = [running_process(c) for c in configs]
        with procs[0] as a, procs[1] as b, procs[2] as c:
            await wait_until(lambda: _all_beating(redis, venue, 3))
            server.kill()
            # The behaviour under test: Redis gone for over three times the dead-after window (0.6 s at these
            # settings), then back for two seconds of sweeps in which the stale heartbeats must not get a live agent
            # declared dead.
            await asyncio.sleep(2.0)
            server.start()
            await asyncio.sleep(2.0)
            ids = await _enqueue_retrying(store, 9)
            await wait_until(lambda: at_least(printed_count(redis, venue), 9), timeout=20)
            assert await _all_beating(redis, venue, 3)
            for proc in (a, b, c):
                proc.send_signal(signal.SIGTERM)
                assert await asyncio.to_thread(proc.wait, 15) == 0
        assert await events_of(redis, venue, "agent_dead") == []
        assert await events_of(redis, venue, "reclaimed") == []
        copies = print_log_copies(*(tmp_path / f"p{i}.prints.jsonl" for i in range(3)))
        assert copies == {i: 1 for i in ids}
    finally:
        await redis.aclose()
        server.stop()


async def _enqueue_retrying(store: Store, n: int) -> list[str]:
    for _ in range(50):
        try:
            return await enqueue_many(store, n, "after-restart")
        except RedisConnectionError:  # the test client's pooled connection died with the server
            await asyncio.sleep(0.1)
    raise AssertionError("could not enqueue after the restart")


async def _all_beating(redis: Redis, venue: str, n: int) -> bool:
    try:
        return len(await redis.zrange(Keys(venue).hb, 0, -1)) == n
    except RedisConnectionError:
        return False


async def test_affinity_a_pinned_job_waits_then_an_idle_peer_steals_it(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    # "lane" is alive but paused (not down): its pinned job waits affinity_wait, then the idle peer takes it.
    await store.beat("lane", {"state": "paused", "location": "Lane 3"}, 60_000, first=True)
    job = parse_job({"attendee_id": "vip-1", "name": "Grace Hopper", "printer": "lane"})
    await store.enqueue(job.job_id, job.payload(), job.printer)
    async with running_agent(
        tmp_path, venue, redis_server.url, name="idle", print_time=0.01, timing__affinity_wait=1.0
    ):
        keep_alive = asyncio.create_task(_keep_beating(store, "lane"))
        try:
            await asyncio.sleep(0.6)
            assert await redis.llen(k.queue("lane")) == 1  # still waiting for its own printer
            await assert_pinned_index_exact(redis, venue)
            await wait_until(lambda: eq(printed_count(redis, venue), 1), timeout=10)
        finally:
            keep_alive.cancel()
    stolen = await events_of(redis, venue, "stolen")
    assert len(stolen) == 1 and stolen[0]["job_id"] == "vip-1" and stolen[0]["from"] == "lane"
    assert print_log_copies(tmp_path / "idle.prints.jsonl") == {"vip-1": 1}
    await assert_each_unfinished_job_in_one_list(redis, venue, ["vip-1"])


async def _keep_beating(store: Store, name: str) -> None:
    while True:
        await store.beat(name, {"state": "paused", "location": "Lane 3"}, 60_000, first=False)
        await asyncio.sleep(0.1)


async def test_drain_and_reclaim_commands_are_idempotent(redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    await store.beat("desk-9", {"state": "ready", "location": "Desk 9"}, 60_000, first=True)
    await enqueue_many(store, 3, "d", printer="desk-9")
    assert await store.drain("desk-9", "drain", "ops") == 3
    assert await store.drain("desk-9", "drain", "ops") == 0
    assert await store.take("desk-9") == ("drained", "")
    assert await redis.llen(k.pool) == 3
    assert await store.drain("desk-9", "resume", "ops") == 0
    assert await store.take("desk-9") == ("pool", "d0")
    # reclaim refuses a printer that is still beating, then works when forced, and twice is a no-op.
    assert (await store.reclaim("desk-9", "ops", 3000)).kind == "alive"
    first = await store.reclaim("desk-9", "ops", None)
    assert (first.kind, first.held) == ("reclaimed", "d0")
    assert (await store.reclaim("desk-9", "ops", 3000)).kind == "gone"
    assert await redis.lrange(k.pool, -1, -1) == [b"d0"]
    assert len(await events_of(redis, venue, "reclaimed")) == 1


async def test_a_running_agent_obeys_drain_and_resume(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01):
        await wait_until(lambda: redis.zscore(k.hb, "desk-1"))
        await store.drain("desk-1", "drain", "ops")
        await wait_until(lambda: _health_state(redis, venue, "drained"))
        ids = await enqueue_many(store, 3)
        await asyncio.sleep(0.6)
        assert await redis.llen(k.pool) == 3  # a drained printer takes nothing
        await store.drain("desk-1", "resume", "ops")
        await wait_until(lambda: eq(printed_count(redis, venue), 3))
    assert print_log_copies(tmp_path / "desk-1.prints.jsonl") == {i: 1 for i in ids}


async def _health_state(redis: Redis, venue: str, state: str) -> bool:
    raw = await redis.get(Keys(venue).health("desk-1"))
    return raw is not None and json.loads(raw)["state"] == state


async def test_a_job_that_reaches_a_printer_blocked_in_its_pool_wait_after_a_drain_goes_back_unprinted(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """Drained while it waited in BLMOVE, before its heartbeat heard of it: the job the pop brings is not printed.

    Found by the protocol model (tests/model): the pop cannot read the drain order, so the loop asks take again.
    """
    store = Store(redis, venue)
    k = Keys(venue)
    # A slow heartbeat: the drain must reach the loop through take, not through the next beat.
    async with running_agent(
        tmp_path, venue, redis_server.url, print_time=0.01, timing__heartbeat_interval=5, timing__block_timeout=5
    ):
        await wait_until(lambda: redis.zscore(k.hb, "desk-1"))
        await wait_until(lambda: _blocked_in_pool_wait(redis))
        await store.drain("desk-1", "drain", "ops")
        (job_id,) = await enqueue_many(store, 1, "late")
        await wait_until(lambda: eq(redis.lrange(k.pool, 0, -1), [job_id.encode()]), timeout=5)
        await asyncio.sleep(0.3)  # a buggy loop would be printing it now
        assert await redis.lrange(k.pool, 0, -1) == [job_id.encode()]
    assert print_log_copies(tmp_path / "desk-1.prints.jsonl", complete_only=False) == {}
    job = await redis.hgetall(k.job(job_id))
    assert job[b"state"] == b"queued" and job[b"attempts"] == b"0"
    assert [e["reason"] for e in await events_of(redis, venue, "released")] == ["drained by an operator"]
    assert await events_of(redis, venue, "printing") == []


async def _blocked_in_pool_wait(redis: Redis) -> bool:
    clients = await redis.client_list()
    return any(c.get("cmd") == "blmove" and "b" in c.get("flags", "") for c in clients)


async def test_recovery_gives_back_a_job_that_reached_a_drained_printer_instead_of_printing_it(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """A pop that brought a job after the drain, its reply lost with the connection: recovery finds the job held and
    never sent. Found by the protocol model (tests/model): it resumed it, and the drained printer printed it."""
    store = Store(redis, venue)
    k = Keys(venue)
    await store.drain("desk-1", "drain", "ops")
    (job_id,) = await enqueue_many(store, 1, "late")
    await redis.lmove(k.pool, k.inflight("desk-1"), "RIGHT", "LEFT")  # what the lost BLMOVE did
    async with running_agent(
        tmp_path, venue, redis_server.url, print_time=0.01, timing__heartbeat_interval=5, timing__block_timeout=5
    ):
        await wait_until(lambda: eq(redis.lrange(k.pool, 0, -1), [job_id.encode()]), timeout=5)
        await asyncio.sleep(0.3)
    assert print_log_copies(tmp_path / "desk-1.prints.jsonl", complete_only=False) == {}
    assert await redis.hget(k.job(job_id), "state") == b"queued"
    assert [e["reason"] for e in await events_of(redis, venue, "released")] == ["drained by an operator"]


async def test_a_failover_that_lost_a_maybe_printed_flag_has_it_written_again_by_the_printer_that_set_it(
    tmp_path: Path, redis: Redis, venue: str
) -> None:
    """p0 sent a badge and heard nothing (released as maybe printed), p1 printed it; a failover to a replica from
    before lost every write, p1's recovery re-confirmed its print: p0's recovery flags p1's copy with p0's place."""
    store, k = Store(redis, venue), Keys(venue)
    job = parse_job({"job_id": "a1", "attendee_id": "a1", "name": "Name a1"})
    assert (await store.enqueue(job.job_id, job.payload(), None)).added
    journal = Journal(tmp_path / "p0.journal")
    assert await store.take("p0") is not None
    epoch = (await store.begin("p0", "Hall A", "a1")).epoch
    await journal.append("a1", epoch, "sending")
    await journal.append("a1", epoch, "unknown")  # as the pull loop records an unknown outcome, before releasing
    assert await store.release("p0", "Hall A", "a1", "unknown", "no answer", 3) == "released"
    await journal.append("a1", epoch, "closed")
    assert await print_it(store, "p1", "a1") == ("printed", "p0 (Hall A)")
    p1_epoch = int(await redis.hget(k.job("a1"), "printed_epoch") or 0)
    # The failover: the new master is a replica from before the job; the desk sends it again.
    venue_keys = [key async for key in redis.scan_iter(match=f"{k.prefix}*")]
    await redis.delete(*venue_keys)
    assert (await store.enqueue(job.job_id, job.payload(), None)).added
    # p1's recovery after the master moved confirms its journal's print: the job is printed, the flag gone with
    # the failover.
    await store.confirm("p1", "p1 desk", "a1", p1_epoch)
    assert await redis.hget(k.job("a1"), "maybe_duplicate") != b"1"
    driver = SimDriver("p0", 0.0, print_log=tmp_path / "p0.prints.jsonl")
    recovery = Recovery(store, Journal(tmp_path / "p0.journal"), Printer(driver, 5.0, 0.3), "p0", "Hall A", 3)

    async def never(job_id: str) -> None:
        raise AssertionError(f"p0 holds nothing to resume, yet was asked to print {job_id}")

    async def recover() -> None:
        await recovery.run(
            never, Recovered(), stopping=False, printer_ready=lambda: True, drained=lambda: False, master_moved=True
        )

    await recover()
    record = await redis.hgetall(k.job("a1"))
    assert record[b"state"] == b"printed" and record[b"printer"] == b"p1"
    assert record[b"maybe_duplicate"] == b"1" and b"p0 (Hall A)" in record[b"maybe_printed_where"]
    flagged = await events_of(redis, venue, "maybe_duplicate")
    assert len(flagged) == 1 and "p0 (Hall A)" in flagged[0]["reason"]
    assert await redis.hget(k.stats, "maybe_duplicate") == b"1"
    # Flagging again (the next recovery after another move) changes nothing.
    await recover()
    assert await redis.hgetall(k.job("a1")) == record
    assert len(await events_of(redis, venue, "maybe_duplicate")) == 1
    assert await redis.hget(k.stats, "maybe_duplicate") == b"1"


async def test_a_process_started_after_a_failover_it_never_saw_confirms_its_journals_prints_again(
    tmp_path: Path, redis: Redis, venue: str
) -> None:
    """p1 printed and confirmed a badge; a failover to a replica from before lost the confirm, and p1's agent
    restarted before it saw the master move (its new process counts no move). The desk sent the job again and p2
    printed it: the new process's first recovery confirms p1's print again, so p2's copy is flagged a duplicate."""
    store, k = Store(redis, venue), Keys(venue)
    job = parse_job({"job_id": "a1", "attendee_id": "a1", "name": "Name a1"})
    assert (await store.enqueue(job.job_id, job.payload(), None)).added
    journal = Journal(tmp_path / "p1.journal")
    assert await store.take("p1") is not None
    epoch = (await store.begin("p1", "Hall A", "a1")).epoch
    await journal.append("a1", epoch, "sending")
    await journal.append("a1", epoch, "printed")
    assert (await store.confirm("p1", "Hall A", "a1", epoch)).kind == "printed"
    await journal.append("a1", epoch, "closed")
    venue_keys = [key async for key in redis.scan_iter(match=f"{k.prefix}*")]
    await redis.delete(*venue_keys)  # the failover: a replica from before the job
    assert (await store.enqueue(job.job_id, job.payload(), None)).added
    assert await print_it(store, "p2", "a1") == ("printed", "")
    driver = SimDriver("p1", 0.0, print_log=tmp_path / "p1.prints.jsonl")
    recovery = Recovery(store, Journal(tmp_path / "p1.journal"), Printer(driver, 5.0, 0.3), "p1", "Hall A", 3)

    async def never(job_id: str) -> None:
        raise AssertionError(f"p1 holds nothing to resume, yet was asked to print {job_id}")

    await recovery.run(
        never, Recovered(), stopping=False, printer_ready=lambda: True, drained=lambda: False, master_moved=False
    )
    record = await redis.hgetall(k.job("a1"))
    assert record[b"duplicate_print"] == b"1" and record[b"maybe_duplicate"] == b"1"
    assert [e["first_printer"] for e in await events_of(redis, venue, "duplicate_print")] == ["p2"]


async def test_a_reprint_takes_a_printed_jobs_stale_copy_out_of_a_peers_in_flight_list(
    redis: Redis, venue: str
) -> None:
    """p1, frozen with a badge at its printer, was reclaimed; p2's pool wait popped the copy put back in the pool;
    p1 woke and confirmed its print, which voids that copy but cannot name p2's list. Staff reprint the badge then:
    the new round is in the pool alone, and p2's begin of its stale copy prints nothing (found by tests/model)."""
    store, k = Store(redis, venue), Keys(venue)
    for printer in ("p1", "p2", "p3"):
        await store.beat(printer, {"state": "ready", "location": f"desk {printer}"}, 60_000, first=True)
    job = parse_job({"job_id": "r1", "attendee_id": "r1", "name": "Name r1"})
    assert (await store.enqueue(job.job_id, job.payload(), None)).added
    assert await store.take("p1") == ("pool", "r1")
    epoch = (await store.begin("p1", "desk p1", "r1")).epoch
    assert (await store.reclaim("p1", "p3", None)).held == "r1"
    assert await store.wait_pool("p2", 1.0) == "r1"
    assert (await store.confirm("p1", "desk p1", "r1", epoch)).kind == "printed"
    assert await redis.lrange(k.inflight("p2"), 0, -1) == [b"r1"]  # void, and begin would drop it as printed
    assert (await store.reprint("r1", "coffee", "staff", 2, False)).kind == "reprint"
    await assert_each_unfinished_job_in_one_list(redis, venue, ["r1"])
    assert await redis.lrange(k.pool, 0, -1) == [b"r1"] and await redis.llen(k.inflight("p2")) == 0
    assert (await store.begin("p2", "desk p2", "r1")).kind == "not_owner"
    assert await print_it(store, "p3", "r1") == ("printed", "")
    assert await redis.hget(k.stats, "integrity_fault") is None
