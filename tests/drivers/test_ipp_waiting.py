"""The badge waiting at an IPP printer, end to end: an agent hands ippeveprinter its next badge while one prints
(docs/printers.md, "The badge waiting at the printer"); a fault withdraws the waiting one at the printer before it
starts, and a peer's reclaim of a killed agent flags both badges the printer held with its place."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer
from drivers.ipp import wire
from drivers.ipp.client import IppClient
from protocol.keys import Keys
from protocol.store import Store
from tests.support import ipp
from tests.support.agents import add, running_agent, running_process, state_is, write_agent_config
from tests.support.prints import print_log_copies
from tests.support.venue import assert_each_unfinished_job_in_one_list
from tests.support.waiting import wait_until

pytestmark = pytest.mark.ipp

#: The first job waits until the second has been handed over (its document in the CUPS queue's spool: ippeveprinter
#: takes one job at a time, so a queue in front of it holds the waiting one), so one prints while one waits, whatever
#: the machine's speed; then it does what ``first`` says, and every other job prints.
_FIRST_WAITS = """if [ "$IPP_JOB_ID" = 1 ]; then
  while [ ! -e "{spool}/d00002-001" ]; do sleep 0.02; done
{first}
fi
echo "ATTR: job-impressions-completed=1" >&2
exit 0
"""
#: Paper runs out on the first badge: the printer says so while it still prints it, and finishes it only once the
#: test has seen what the agent did with the waiting one (``go-on``).
PAPER_OUT_ON_THE_FIRST = (
    '  echo "ATTR: job-impressions-completed=1" >&2\n'
    '  echo "STATE: +media-empty" >&2\n'
    '  while [ ! -e "$DIR/go-on" ]; do sleep 0.02; done\n'
    "  exit 0"
)
#: The first badge never finishes (until ``go-on``): the agent is killed with two badges at the printer.
FIRST_NEVER_ENDS = '  while [ ! -e "$DIR/go-on" ]; do sleep 0.02; done\n  exit 1'


def first_job(cups: ipp.Cups, first: str) -> str:
    return _FIRST_WAITS.format(spool=cups.directory / "spool", first=first)


async def job_state(uri: str, job_id: int) -> object:
    async with IppClient(uri) as client:
        reply = await client.request(wire.GET_JOB_ATTRIBUTES, {"job-id": job_id}, check=False)
        return wire.first(reply.group(wire.JOB_GROUP), "job-state")


def ipp_driver(uri: str) -> dict[str, object]:
    return {"language": "ipp", "uri": uri, "io_timeout": 5.0}


async def test_a_printer_that_takes_one_job_at_a_time_gets_one_badge_at_a_time(
    tmp_path: Path, eve: ipp.IppEvePrinter, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """ippeveprinter refuses a second job while one prints (busy): the agent stops handing it one early, and the
    badge it refused goes back unflagged, its attempt not counted."""
    await _four_print_once_each(tmp_path, eve, eve.uri, redis, redis_server, venue)


async def _four_print_once_each(
    tmp_path: Path, eve: ipp.IppEvePrinter, uri: str, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """Four badges through an agent printing to ``uri`` (the printer, or a queue in front of it): each printed once,
    at its first attempt, unflagged, confirmed by the device."""
    store, k = Store(redis, venue), Keys(venue)
    jobs = [await add(store, f"a{i}") for i in range(4)]
    async with running_agent(tmp_path, venue, redis_server.url, "ipp-1", printer__driver=ipp_driver(uri)):
        for job_id in jobs:
            await wait_until(lambda job_id=job_id: state_is(redis, k, job_id, b"printed"), 60)  # type: ignore[misc]
    for job_id in jobs:
        job = await redis.hgetall(k.job(job_id))
        assert job[b"maybe_printed"] == b"0" and job[b"attempts"] == b"1" and job[b"confirmed_by"] == b"device"
    assert sorted(p.name.split("-", 1)[1] for p in eve.printed()) == sorted(jobs)  # each once


#: A job waits while ``hold-<its name>`` exists (its name is the badge's job id); with ``out-<its name>`` the paper
#: runs out on it (reported while it prints) before it completes.
_HELD_BY_NAME = """while [ -e "$DIR/hold-$IPP_JOB_NAME" ]; do sleep 0.02; done
if [ -e "$DIR/out-$IPP_JOB_NAME" ]; then echo "STATE: +media-empty" >&2; fi
echo "ATTR: job-impressions-completed=1" >&2
exit 0
"""


def refusals(eve: ipp.IppEvePrinter) -> int:
    """How many times the printer answered a Create-Job busy (its log)."""
    return (eve.directory / "ippeveprinter.log").read_text().count("Create-Job server-error-busy")


async def _learnt_one_at_a_time(eve: ipp.IppEvePrinter, first: str) -> None:
    """The first badge holds at the printer until it refused the second as busy (the agent learns that it takes one
    job at a time; the second goes back unsent once the first is settled); then the first may end."""
    await wait_until(lambda: refusals(eve) == 1, 30)
    (eve.directory / f"hold-{first}").unlink()


async def test_the_next_badge_waits_ready_in_the_agent_for_a_printer_that_takes_one_job_at_a_time(
    tmp_path: Path, eve: ipp.IppEvePrinter, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """Once the printer refused a second job as busy, the next badge is taken, begun and drawn while one prints, and
    handed over when that one is proved printed: never refused again, each badge once, none flagged."""
    eve.behave(_HELD_BY_NAME)
    store, k = Store(redis, venue), Keys(venue)
    jobs = [await add(store, f"a{i}") for i in range(4)]
    for job_id in jobs[:2]:
        (eve.directory / f"hold-{job_id}").touch()
    async with running_agent(tmp_path, venue, redis_server.url, "ipp-1", printer__driver=ipp_driver(eve.uri)) as agent:
        await _learnt_one_at_a_time(eve, jobs[0])
        # The second prints (held at the printer): the third is begun and drawn meanwhile, and not sent.
        await wait_until(lambda: state_is(redis, k, jobs[2], b"printing"), 30)
        assert not any(p.name.endswith(jobs[2]) for p in eve.printed())
        (eve.directory / f"hold-{jobs[1]}").unlink()
        for job_id in jobs:
            await wait_until(lambda job_id=job_id: state_is(redis, k, job_id, b"printed"), 60)  # type: ignore[misc]
        # The refused badge was not drawn again when it was taken again: its drawing was kept.
        assert agent.metrics.drawn_ahead_jobs.labels("used").value == 1
    for job_id in jobs:
        job = await redis.hgetall(k.job(job_id))
        assert job[b"maybe_printed"] == b"0" and job[b"attempts"] == b"1", job
    for job_id in jobs[2:]:  # handed over at their turn: never refused
        assert not await redis.hget(k.job(job_id), "last_error")
    assert refusals(eve) == 1
    assert sorted(p.name.split("-", 1)[1] for p in eve.printed()) == sorted(jobs)  # each once


async def test_paper_out_on_the_printing_badge_keeps_the_ready_one_from_the_printer(
    tmp_path: Path, eve: ipp.IppEvePrinter, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """A printer that takes one job at a time runs out of paper on a badge while the next waits ready in the agent:
    that one is never sent, and goes back unflagged with its attempt not counted; nothing is lost."""
    eve.behave(_HELD_BY_NAME)
    store, k = Store(redis, venue), Keys(venue)
    jobs = [await add(store, f"a{i}") for i in range(4)]
    for job_id in jobs[:2]:
        (eve.directory / f"hold-{job_id}").touch()
    (eve.directory / f"out-{jobs[1]}").touch()
    async with running_agent(tmp_path, venue, redis_server.url, "ipp-1", printer__driver=ipp_driver(eve.uri)):
        await _learnt_one_at_a_time(eve, jobs[0])
        await wait_until(lambda: state_is(redis, k, jobs[2], b"printing"), 30)  # ready behind the second
        (eve.directory / f"hold-{jobs[1]}").unlink()
        await wait_until(lambda: state_is(redis, k, jobs[1], b"queued"), 30)
        await wait_until(lambda: state_is(redis, k, jobs[2], b"queued"), 30)
        struck, ready = [await redis.hgetall(k.job(job_id)) for job_id in jobs[1:3]]
        assert struck[b"maybe_printed"] == b"1", struck  # the roll ran out on it: maybe on paper, flagged
        assert ready[b"maybe_printed"] == b"0" and ready[b"attempts"] == b"0", ready
        assert not any(p.name.endswith(jobs[2]) for p in eve.printed())
        await assert_each_unfinished_job_in_one_list(redis, venue, jobs)


async def test_badges_go_through_with_the_next_one_waiting_at_the_printer(
    tmp_path: Path, eve: ipp.IppEvePrinter, cups: ipp.Cups, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    eve.behave(first_job(cups, "  :"))  # the first ends only once the second waits behind it
    queue = cups.add_queue("badges", eve.uri)
    await _four_print_once_each(tmp_path, eve, queue, redis, redis_server, venue)


async def test_paper_out_withdraws_the_waiting_badge_before_the_printer_starts_it(
    tmp_path: Path, eve: ipp.IppEvePrinter, cups: ipp.Cups, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    eve.behave(first_job(cups, PAPER_OUT_ON_THE_FIRST))
    queue = cups.add_queue("badges", eve.uri)
    store, k = Store(redis, venue), Keys(venue)
    first, second, third = [await add(store, f"a{i}") for i in range(3)]
    async with running_agent(tmp_path, venue, redis_server.url, "ipp-1", printer__driver=ipp_driver(queue)):
        # The printer reported paper out while it printed the first: the waiting one is cancelled there, unstarted.
        await wait_until(lambda: _equals(job_state(queue, 2), 7), 30)
        (eve.directory / "go-on").touch()
        await wait_until(lambda: state_is(redis, k, first, b"queued"), 30)
        await wait_until(lambda: state_is(redis, k, second, b"queued"), 30)
    one, two = [await redis.hgetall(k.job(job_id)) for job_id in (first, second)]
    # The first may be on paper (the roll ran out on it): flagged with the printer's place.
    assert one[b"maybe_printed"] == b"1" and b"ipp-1 (desk of ipp-1)" in one[b"maybe_printed_where"], one
    # The second never started: back unflagged, its attempt not counted.
    assert two[b"maybe_printed"] == b"0" and two[b"attempts"] == b"0", two
    assert len(eve.printed()) == 1  # the printer ran only the first
    await assert_each_unfinished_job_in_one_list(redis, venue, [first, second, third])
    # A peer prints them all: the first flagged as a maybe-duplicate, the second not, nothing lost.
    async with running_agent(tmp_path, venue, redis_server.url, "desk-2"):
        for job_id in (first, second, third):
            await wait_until(lambda job_id=job_id: state_is(redis, k, job_id, b"printed"), 30)  # type: ignore[misc]
    assert (await redis.hget(k.job(first), "maybe_duplicate")) == b"1"
    assert (await redis.hget(k.job(second), "maybe_duplicate")) == b"0"
    assert print_log_copies(tmp_path / "desk-2.prints.jsonl") == {first: 1, second: 1, third: 1}


async def test_a_peer_flags_both_badges_a_killed_agent_left_at_the_printer(
    tmp_path: Path, eve: ipp.IppEvePrinter, cups: ipp.Cups, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    eve.behave(first_job(cups, FIRST_NEVER_ENDS))
    queue = cups.add_queue("badges", eve.uri)
    store, k = Store(redis, venue), Keys(venue)
    first, second = [await add(store, f"a{i}") for i in range(2)]
    driver = ipp_driver(queue)
    config = write_agent_config(tmp_path / "ipp-1.yaml", venue, redis_server.url, "ipp-1", printer__driver=driver)
    with running_process(config) as proc:
        await wait_until(lambda: _equals(job_state(queue, 1), 5), 60)  # the first prints ...
        await wait_until(lambda: _equals(job_state(queue, 2), 3), 30)  # ... and the second waits behind it
        assert await store.inflight("ipp-1") == [second, first]  # the in-flight list holds what the printer holds
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    async with running_agent(tmp_path, venue, redis_server.url, "desk-2"):
        for job_id in (first, second):
            await wait_until(lambda job_id=job_id: state_is(redis, k, job_id, b"printed"), 30)  # type: ignore[misc]
    for job_id in (first, second):
        job = await redis.hgetall(k.job(job_id))
        assert job[b"maybe_printed"] == b"1" and b"ipp-1 (desk of ipp-1)" in job[b"maybe_printed_where"], job
        assert job[b"maybe_duplicate"] == b"1" and job[b"printer"] == b"desk-2", job
    (eve.directory / "go-on").touch()


async def _equals(value: object, expected: object) -> bool:
    await asyncio.sleep(0)
    return await value == expected  # type: ignore[misc]
