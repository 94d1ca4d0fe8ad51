"""A venue's Redis over ``maxmemory`` (noeviction): what a role can add by hand, and new jobs, are refused, while
the printers finish the badges they have: the protocol's printer steps are ``allow-oom`` functions, and an idle
agent's blocking pop, which Redis refuses there, becomes a pause instead of a fault."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.exceptions import OutOfMemoryError

from protocol.keys import Keys
from protocol.library import default_library
from protocol.scripts import load_library
from protocol.store import Store
from tests.support.agents import enqueue_many, print_it, printed_count, running_agent
from tests.support.intake import start_desk
from tests.support.processes import create_user
from tests.support.topology import Node
from tests.support.waiting import wait_until

#: The steps a printer cannot do without, and the delivery of its prints: these run over maxmemory.
PRINTER_STEPS = {
    "take", "begin", "confirm", "release", "reflag", "dead_letter", "beat", "handback", "sweep", "reclaim", "steal",
    "printed_took", "pretix_pump", "pretix_sent", "pretix_lease", "group_claim", "group_back",
}  # fmt: skip


def test_the_printer_steps_and_only_they_run_over_maxmemory() -> None:
    library = default_library()
    allowed = {name for name in library.scripts if "allow-oom" in library.flags[name]}
    assert allowed == PRINTER_STEPS
    # New work (enqueue, reprint, the attendee list, layouts) is refused first.
    assert not {"enqueue", "reprint", "cancel", "attendee_put", "attendee_badge", "layout_set"} & allowed


async def _fill(client: Redis, key: str) -> int:
    """Append to ``key`` until Redis refuses for memory; the bytes it took."""
    chunk = "x" * 50_000
    for appended in range(2_000):
        try:
            await client.append(key, chunk)
        except OutOfMemoryError:
            return appended * len(chunk)
    raise AssertionError("Redis never refused: maxmemory is not set")


async def test_a_full_redis_refuses_the_roles_and_new_jobs_while_the_printers_finish_theirs(
    tmp_path: Path, venue: str
) -> None:
    node = Node(tmp_path / "full", ["--save", "", "--maxmemory", "16mb", "--maxmemory-policy", "noeviction"])
    node.start()
    admin = Redis(host="127.0.0.1", port=node.port)
    url = f"redis://127.0.0.1:{node.port}/0"
    try:
        await load_library(admin)
        store = Store(admin, venue)
        await store.beat("p0", {"state": "ready"}, 60_000, first=True)
        jobs = await enqueue_many(store, 6)
        # The intake's user fills the venue's memory by hand (a term's postings string, which it may APPEND to).
        user = await create_user(admin, venue, tmp_path / "intake.pw", role="intake")
        intake = Redis(
            host="127.0.0.1", port=node.port, username=user, password=(tmp_path / "intake.pw").read_text().strip()
        )
        try:
            assert await _fill(intake, Keys(venue).prefix + "attendees:p:flood") > 0
            with pytest.raises(OutOfMemoryError):
                await Store(intake, venue).enqueue("late", '{"attendee_id": "late", "name": "Late"}', None)
            with pytest.raises(OutOfMemoryError):
                await intake.hset(Keys(venue).job(jobs[0]), "note", "x")
        finally:
            await intake.aclose()
        # A printer's steps still run: one badge by hand, then a real agent.
        assert await print_it(store, "p0", jobs[0]) == ("printed", "")
        # A real agent prints the rest to the end, heartbeat and all.
        async with running_agent(tmp_path, venue, url, "p1", print_time=0.01):
            await wait_until(lambda: _all_printed(admin, venue, len(jobs)), timeout=30)
        assert await admin.exists(Keys(venue).job("late")) == 0
    finally:
        await admin.aclose()
        node.stop()


async def _all_printed(redis: Redis, venue: str, n: int) -> bool:
    return await printed_count(redis, venue) >= n


async def test_an_idle_agents_blocking_pop_over_maxmemory_is_a_pause(tmp_path: Path, venue: str) -> None:
    node = Node(tmp_path / "full", ["--save", "", "--maxmemory", "4mb", "--maxmemory-policy", "noeviction"])
    node.start()
    redis = Redis(host="127.0.0.1", port=node.port)
    try:
        await load_library(redis)
        await _fill(redis, "filler")
        with pytest.raises(OutOfMemoryError):
            await redis.execute_command("BLMOVE", Keys(venue).pool, Keys(venue).inflight("p0"), "RIGHT", "LEFT", 0.05)
        assert await Store(redis, venue).wait_pool("p0", 0.05) is None
    finally:
        await redis.aclose()
        node.stop()


async def test_a_desk_is_told_the_venues_redis_is_full(tmp_path: Path, venue: str) -> None:
    node = Node(tmp_path / "full", ["--save", "", "--maxmemory", "4mb", "--maxmemory-policy", "noeviction"])
    node.start()
    admin = Redis(host="127.0.0.1", port=node.port)
    desk, redis = await start_desk(tmp_path, venue, f"redis://127.0.0.1:{node.port}/0")
    try:
        await load_library(admin)
        await _fill(admin, "filler")
        resp = await desk.client.post("/v1/jobs", json={"attendee_id": "a1", "name": "Ada"}, headers=desk.auth("desk"))
        assert resp.status == 503 and resp.headers["Retry-After"] == "5"
        assert "Redis is full" in (await resp.json())["detail"]
    finally:
        await desk.client.close()
        await redis.aclose()
        await admin.aclose()
        node.stop()
