"""The pull loop on its own parts (store, journal, printer, gate, events), without an ``Agent``: a real redis-server,
the simulated printer, the real heartbeat for the lease."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from redis.asyncio import Redis

from agent.config import TimingConfig
from agent.gate import Blocked, Gate
from agent.heartbeat import Heartbeat
from agent.journal import Journal
from agent.printer import Printer
from agent.pull import Lookahead, PullLoop, TakenAhead
from agent.pull_events import PullEvents
from drivers.base import PrintResult
from drivers.sim import SimDriver
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.replies import Begun, ConfirmKind, ReleaseKind
from protocol.specs import ReleaseOutcome
from protocol.store import Store

TIMING = TimingConfig(heartbeat_interval=0.2, block_timeout=0.2, probe_interval=0.1)


@dataclass
class Heard(PullEvents):
    """A listener that keeps what the loop reported."""

    printed_ids: list[str] = field(default_factory=list)
    released: list[tuple[str, str, str]] = field(default_factory=list)
    skipped_ids: list[str] = field(default_factory=list)

    def printed(self, job_id: str, attempt: int, confirm: ConfirmKind, maybe_where: str, seconds: float) -> None:
        self.printed_ids.append(job_id)

    def not_printed(
        self, job_id: str, outcome: ReleaseOutcome, result: PrintResult, released: ReleaseKind, seconds: float
    ) -> None:
        self.released.append((job_id, outcome, released))

    def skipped(self, job_id: str, begun: Begun) -> None:
        self.skipped_ids.append(job_id)


@dataclass
class Parts:
    loop: PullLoop
    heartbeat: Heartbeat
    stopping: asyncio.Event
    ready: asyncio.Event
    heard: Heard


@contextlib.asynccontextmanager
async def pull_loop(redis: Redis, venue: str, tmp_path: Path, name: str = "desk-1") -> AsyncIterator[Parts]:
    """A pull loop from its parts, its heartbeat beating (a lease), the loop itself not started."""
    store = Store(redis, venue, dedicated=True)
    stopping, ready = asyncio.Event(), asyncio.Event()
    ready.set()
    heartbeat = Heartbeat(store, name, TIMING, lambda: {"state": "ready", "location": "desk"})
    heard = Heard()
    driver = SimDriver(name, 0.0, print_log=tmp_path / f"{name}.prints.jsonl")
    loop = PullLoop(
        store,
        Journal(tmp_path / f"{name}.journal"),
        Printer(driver, print_timeout=5.0, io_timeout=0.3),
        Gate(stopping, heartbeat, ready),
        heard,
        me=name,
        location="desk",
        timing=TIMING,
        max_attempts=3,
    )
    await store.scripts.prepare()  # as a running agent's are: a confirm never meets a cold script cache here
    beating = asyncio.create_task(heartbeat.run())
    try:
        async with asyncio.timeout(5):
            while not heartbeat.lease_ok():
                await asyncio.sleep(0.01)
        yield Parts(loop, heartbeat, stopping, ready, heard)
    finally:
        stopping.set()
        beating.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beating
        await driver.aclose()


async def enqueue(store: Store, n: int) -> list[str]:
    ids = []
    for i in range(n):
        job = parse_job({"attendee_id": f"p{i}", "name": f"Attendee {i}"})
        await store.enqueue(job.job_id, job.payload(), None)
        ids.append(job.job_id)
    return ids


async def test_a_job_taken_with_the_last_confirm_goes_back_when_the_printer_stops_being_ready(
    tmp_path: Path, redis: Redis, venue: str
) -> None:
    """The take that rides with a confirm can land just as a probe finds the printer paused: the job must not sit in
    this printer's in-flight list until the printer is back."""
    k = Keys(venue)
    ids = await enqueue(Store(redis, venue), 3)
    async with pull_loop(redis, venue, tmp_path) as parts:
        loop = parts.loop
        taken = await loop.store.take("desk-1")
        assert taken == ("pool", ids[0])
        await loop.handle(ids[0])  # printed; its confirm took the next job along
        assert loop.lookahead == TakenAhead(ids[1])
        parts.ready.clear()  # the probe found the printer paused
        blocked = loop.blocked()
        assert blocked is Blocked.NOT_READY
        await loop.wait(blocked)
        assert loop.lookahead is Lookahead.UNKNOWN
    assert parts.heard.printed_ids == [ids[0]]
    assert await redis.llen(k.inflight("desk-1")) == 0
    assert await redis.lindex(k.pool, -1) == ids[1].encode()  # at the front: next out, by any printer
    job = await redis.hgetall(k.job(ids[1]))
    assert job[b"state"] == b"queued" and job[b"attempts"] == b"0" and job[b"maybe_printed"] == b"0"


async def test_the_loop_prints_the_pool_and_reports_each_badge_once(tmp_path: Path, redis: Redis, venue: str) -> None:
    ids = await enqueue(Store(redis, venue), 5)
    async with pull_loop(redis, venue, tmp_path) as parts:
        running = asyncio.create_task(parts.loop.run())
        async with asyncio.timeout(10):
            while parts.loop.printed < 5:
                await asyncio.sleep(0.01)
        parts.stopping.set()
        await asyncio.wait_for(running, 5)
    assert sorted(parts.heard.printed_ids) == sorted(ids)
    assert parts.heard.released == [] and parts.heard.skipped_ids == []
    assert int(await redis.hget(Keys(venue).stats, "printed") or 0) == 5


async def test_a_drain_order_blocks_the_gate_and_take_moves_nothing(tmp_path: Path, redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    ids = await enqueue(store, 2)
    await store.drain("desk-1", "drain", "test")
    async with pull_loop(redis, venue, tmp_path) as parts:
        async with asyncio.timeout(5):
            while not parts.heartbeat.drained:  # the next beat brings the order
                await asyncio.sleep(0.01)
        assert parts.loop.blocked() is Blocked.DRAINED
    assert await redis.llen(Keys(venue).inflight("desk-1")) == 0
    assert await redis.lrange(Keys(venue).pool, 0, -1) == [i.encode() for i in reversed(ids)]


async def _begun_without_a_record(store: Store, job_id: str) -> None:
    """The job taken and begun here, as the pull loop does, and no journal record of it: the reply to begin was
    lost, or the record went with an earlier process's disk."""
    assert await store.take("desk-1") == ("pool", job_id)
    assert (await store.begin("desk-1", "desk", job_id)).epoch == 1


async def test_a_begun_job_an_earlier_process_left_without_a_record_is_released_as_maybe_printed(
    tmp_path: Path, redis: Redis, venue: str
) -> None:
    """The first recovery settles what an earlier process left: its journal may be gone, and Redis says this printer
    began the job, so it may be on paper. Released as maybe printed, saying where; not printed here again."""
    k = Keys(venue)
    store = Store(redis, venue)
    (job_id,) = await enqueue(store, 1)
    await _begun_without_a_record(store, job_id)
    async with pull_loop(redis, venue, tmp_path) as parts:
        await parts.loop.recover()
    job = await redis.hgetall(k.job(job_id))
    assert job[b"state"] == b"queued" and job[b"maybe_printed"] == b"1"
    assert job[b"maybe_printed_where"] == b"desk-1 (desk)"
    assert await redis.lrange(k.pool, 0, -1) == [job_id.encode()]
    assert parts.heard.printed_ids == []


async def test_a_begun_job_this_process_holds_without_a_record_is_printed_unflagged(
    tmp_path: Path, redis: Redis, venue: str
) -> None:
    """Every record this process wrote is in its memory: a begin whose reply was lost sent nothing, so a later
    recovery prints the job, with no flag for staff to chase."""
    k = Keys(venue)
    store = Store(redis, venue)
    (job_id,) = await enqueue(store, 1)
    async with pull_loop(redis, venue, tmp_path) as parts:
        await parts.loop.recover()  # the start: nothing held
        await _begun_without_a_record(store, job_id)
        await parts.loop.recover()
    job = await redis.hgetall(k.job(job_id))
    assert job[b"state"] == b"printed" and job[b"maybe_printed"] == b"0" and job[b"maybe_duplicate"] == b"0"
    assert parts.heard.printed_ids == [job_id]
