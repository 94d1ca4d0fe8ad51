"""A planned run printed on the venue's pool: real agents on ZPL emulators over TCP, each printer's stack a box in
order opened by its separator; a killed agent's box finished whole elsewhere; a run printed twice refused."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer
from core.errors import UserError
from preprint.pool import pool_status, print_on_pool
from protocol.keys import Keys
from tests.preprint.pool_support import agent, job_ids, planned_run, printed, zpl
from tests.support.processes import cli
from tests.support.waiting import wait_until


def boxes_in(stack: list[str], boxes: dict[str, list[str]]) -> list[str]:
    """Cut one printer's stack into whole boxes (a separator, then that box's badges in order); fails on anything
    else. Returns the separators in the order they came out."""
    seps = {ids[0]: ids for ids in boxes.values()}
    out, at = [], 0
    while at < len(stack):
        assert stack[at] in seps, (at, stack)
        ids = seps[stack[at]]
        assert stack[at : at + len(ids)] == ids, (stack[at : at + len(ids)], ids)
        out.append(stack[at])
        at += len(ids)
    return out


async def test_each_printers_stack_is_whole_boxes_in_order(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    await planned_run(redis, venue, "r1", boxes=4, per_box=5)
    boxes = {str(n): await job_ids(redis, venue, "r1", n) for n in range(1, 5)}
    async with zpl("p1", 0.05) as (one, d1), zpl("p2", 0.05) as (two, d2):
        with agent(tmp_path, venue, redis_server.url, "p1", d1), agent(tmp_path, venue, redis_server.url, "p2", d2):
            started = await print_on_pool(redis, venue, "r1")
            assert (started.boxes, started.badges) == (4, 20)
            await wait_until(lambda: _done(redis, venue, "r1"), timeout=60)
            await asyncio.sleep(0.2)  # the last label's log line is written at the engine's next turn
    came_out = boxes_in(printed(one), boxes) + boxes_in(printed(two), boxes)
    assert sorted(came_out) == sorted(ids[0] for ids in boxes.values())  # every box once, whole
    status = await pool_status(redis, venue, "r1")
    assert status.state == "printed" and status.printed == 20 and not status.maybe_printed
    # The separators are labels, no badge: drawn, confirmed, not counted.
    assert await redis.hget(Keys(venue).job(boxes["1"][0]), "kind") == b"separator"


async def _done(redis: Redis, venue: str, run: str) -> bool:
    return (await pool_status(redis, venue, run)).done


async def test_a_killed_printers_box_goes_on_whole_from_its_first_unconfirmed_badge(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    await planned_run(redis, venue, "r1", boxes=2, per_box=8)
    box1, box2 = [await job_ids(redis, venue, "r1", n) for n in (1, 2)]
    k = Keys(venue)
    async with zpl("p1", 0.3) as (one, d1), zpl("p2", 0.05) as (two, d2):
        with agent(tmp_path, venue, redis_server.url, "p1", d1) as first:
            await print_on_pool(redis, venue, "r1")
            # p1 alone: it claims box 1, and is killed with box 1 half printed.
            await wait_until(lambda: _at_least(len(printed(one)), 4), timeout=30)
            first.send_signal(signal.SIGKILL)
            first.wait()
        await asyncio.sleep(0.4)  # what p1's emulator had in its buffer comes out, as a real printer's would
        confirmed = {j for j in box1 if await redis.hget(k.job(j), "state") == b"printed"}
        with agent(tmp_path, venue, redis_server.url, "p2", d2):
            await wait_until(lambda: _done(redis, venue, "r1"), timeout=60)
            await asyncio.sleep(0.2)
    stack = printed(two)
    rest = [j for j in box1 if j not in confirmed]
    # The rest of box 1 from its first unconfirmed badge, opened by "Box 1, continued", and box 2, each whole (p2
    # may claim box 2 before its sweep finds p1 dead).
    assert boxes_in(stack, {"1": ["pp:r1:1:c1", *rest], "2": box2}) in (
        ["pp:r1:1:c1", box2[0]],
        [box2[0], "pp:r1:1:c1"],
    )
    assert rest and box1.index(rest[0]) + len(rest) == len(box1)
    label = json.loads(await redis.hget(k.job("pp:r1:1:c1"), "payload"))
    assert label["name"] == "Box 1, continued" and label["role"] == f"{len(rest)} badges"
    # p1's stack and p2's together: every badge of box 1 at least once; a second copy only of a flagged badge.
    seen = printed(one) + stack
    twice = {j for j in box1 if seen.count(j) > 1}
    assert set(box1) <= set(seen)
    for job_id in twice:
        job = await redis.hgetall(k.job(job_id))
        assert job[b"maybe_duplicate"] == b"1" and b"p1 (desk of p1)" in job[b"maybe_printed_where"]
    status = await pool_status(redis, venue, "r1")
    # The badge in p1's hands when it died is flagged whether or not its paper came out before the kill: every
    # second copy is flagged, and nothing but that one badge is.
    assert status.done and twice <= set(status.maybe_printed) <= set(box1) and len(status.maybe_printed) <= 1


async def _has_run(redis: Redis, venue: str, printer: str) -> bool:
    return await redis.hexists(Keys(venue).printers, printer)


async def _at_least(value: int, n: int) -> bool:
    return value >= n


async def test_a_run_printed_twice_is_refused_with_a_message(
    redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    await planned_run(redis, venue, "r1", boxes=2, per_box=2)
    await print_on_pool(redis, venue, "r1")
    with pytest.raises(UserError, match="already: printing it again would print its badges twice"):
        await print_on_pool(redis, venue, "r1")
    result = await asyncio.to_thread(cli, redis_server, venue, "preprint", "print", "r1", "--no-wait")
    assert result.returncode == 2 and "printing it again would print its badges twice" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert await redis.llen(Keys(venue).groups) == 2  # nothing added twice
    missing = await asyncio.to_thread(cli, redis_server, venue, "preprint", "print", "nope", "--no-wait")
    assert missing.returncode == 2 and "no pre-print run named 'nope'" in missing.stderr, missing.stderr
    status = await asyncio.to_thread(cli, redis_server, venue, "preprint", "status", "r1")
    assert status.returncode == 0 and "0 of 4 badge(s) printed; ETA" in status.stdout, status.stdout


async def test_out_of_labels_mid_box_the_box_moves_whole_after_the_dead_bound(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    await planned_run(redis, venue, "r1", boxes=1, per_box=8)
    box = await job_ids(redis, venue, "r1", 1)
    async with zpl("p1", 0.2) as (one, d1), zpl("p2", 0.05) as (two, d2):
        with agent(tmp_path, venue, redis_server.url, "p1", d1):
            await wait_until(lambda: _has_run(redis, venue, "p1"), timeout=30)
            await print_on_pool(redis, venue, "r1")
            await wait_until(lambda: _at_least(len(printed(one)), 3), timeout=30)
            one.set_fault("media_out")
            # The box waits for p1 while its fault may clear, then goes on whole to p2 (started only now, so that
            # p1 is the one that claimed it).
            with agent(tmp_path, venue, redis_server.url, "p2", d2):
                await wait_until(lambda: _done(redis, venue, "r1"), timeout=60)
                await asyncio.sleep(0.2)
    stack = printed(two)
    assert stack[0] == "pp:r1:1:c1" and stack[1:] == box[-len(stack) + 1 :]
    assert set(printed(one)) | set(stack[1:]) >= set(box)
