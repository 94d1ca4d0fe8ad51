"""Confirmed prints back to the real pretix: the outbox entry written by confirm itself, a kiosk scan of a pretix
secret printed by a real agent (sim printer) with the name pretix holds and checked in on pretix, a reprint logged
only, pretix stopped while badges print and every push arriving once it is back (none twice), two senders never
sending at once."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis
from redis.exceptions import NoPermissionError

from attendees.store import AttendeeStore
from cli.redis_server import RedisServer
from pretix_sync.changes import ListChanges
from pretix_sync.client import PretixClient
from pretix_sync.keys import PretixKeys
from pretix_sync.listing import ListWriter
from pretix_sync.outbox import Outbox, Sender
from protocol.keys import Keys
from tests.support.agents import running_agent
from tests.support.pretix import print_badge, printed
from tests.support.pretix_server import Pretix
from tests.support.processes import badge_agent, create_user
from tests.support.waiting import wait_until


@asynccontextmanager
async def venue_of(pretix: Pretix, redis: Redis, venue: str) -> AsyncIterator[tuple[AttendeeStore, PretixClient]]:
    """The venue's list synced once from pretix, and a client that gives up fast when pretix is away."""
    store = AttendeeStore(redis, venue)
    async with PretixClient(
        pretix.url, pretix.organizer, pretix.event, pretix.token, attempts=2, max_pause=0.05, timeout=5
    ) as client:
        changes = ListChanges(client, pretix.entrance)
        await ListWriter(store).write((await changes.read()).records)
        yield store, client


def prints(tmp_path: Path) -> list[dict[str, Any]]:
    log = tmp_path / "desk-1.prints.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [json.loads(line) for line in lines if json.loads(line)["complete"]]


async def test_a_kiosk_scan_prints_pretix_s_name_and_checks_in_on_pretix(
    pretix: Pretix, redis: Redis, redis_server: RedisServer, venue: str, tmp_path: Path
) -> None:
    placed = pretix.data("order", "Scanned At The Kiosk")
    outbox = Outbox(redis, venue)
    async with venue_of(pretix, redis, venue) as (store, client):
        plain = await store.venue.enqueue("walk-up-1", json.dumps({"job_id": "walk-up-1", "attendee_id": "w1",
                                                                   "name": "Not From Pretix"}), None)  # fmt: skip
        assert plain.added
        job_id = await print_badge(store, placed["secret"])
        async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01):
            await wait_until(lambda: printed(redis, venue, job_id))
            await wait_until(lambda: printed(redis, venue, "walk-up-1"))
        assert [p["name"] for p in prints(tmp_path) if p["job_id"] == job_id] == ["Scanned At The Kiosk"]
        # Both prints are in the printed record; the pump moves the pretix attendee's into the outbox (the walk-up
        # job is no pretix attendee's), and the record, whose only consumer took both, is empty again.
        assert await redis.xlen(Keys(venue).printed) == 2 and await outbox.waiting() == 1
        assert await outbox.pump() == 1 and await redis.xlen(Keys(venue).printed) == 0
        (entry,) = await outbox.entries()
        assert (entry.job_id, entry.first, entry.printer) == (job_id, True, "desk-1")

        sender = Sender(outbox, client, pretix.entrance, me="sync-a")
        done = await sender.send_waiting()
        assert (done.sent, await outbox.waiting()) == (1, 0)
        checkins = pretix.data("checkins", str(placed["id"]))
        assert checkins == [{"list": pretix.entrance, "type": "entry", "nonce": job_id, "successful": True}]

        reprint = await store.venue.reprint(job_id, "coffee", "staff-1", 2, False)
        assert reprint.kind.value == "reprint"
        async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01):
            await wait_until(lambda: printed(redis, venue, job_id))
        await outbox.pump()
        (again,) = await outbox.entries()
        assert again.first is False
        assert (await sender.send_waiting()).sent == 1
        assert len(pretix.data("checkins", str(placed["id"]))) == 1  # a reprint checks in no one again
        logs = (await client.position(placed["id"])).print_logs
        assert sorted(log.info["print_id"] for log in logs) == [f"{job_id}#{entry.epoch}", f"{job_id}#{again.epoch}"]


async def test_pretix_stopped_while_badges_print_then_every_push_arrives_once(
    lone_pretix: Pretix, redis: Redis, redis_server: RedisServer, venue: str, tmp_path: Path
) -> None:
    pretix = lone_pretix
    placed = [pretix.data("order", f"Printed Offline {i}") for i in range(3)]
    outbox = Outbox(redis, venue)
    async with venue_of(pretix, redis, venue) as (store, client):
        pretix.server.stop()  # the internet is down
        jobs = [await print_badge(store, p["secret"]) for p in placed]
        async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01):
            for job_id in jobs:
                await wait_until(lambda job_id=job_id: printed(redis, venue, job_id))
        assert await outbox.waiting() == 3
        status = badge_agent("status", "--json", "--redis", redis_server.url, "--venue", venue)
        assert json.loads(status.stdout)["pretix"] == {"waiting": 3, "sender": None}
        shown = " ".join(badge_agent("status", "--redis", redis_server.url, "--venue", venue).stdout.split())
        assert "pretix: 3 confirmed print(s) wait to be sent (no attendees sync --follow is sending them)" in shown
        one, two = Sender(outbox, client, pretix.entrance, me="sync-a"), Sender(outbox, client, pretix.entrance, me="b")
        away = await one.send_waiting()
        assert away.sent == 0 and "cannot be reached" in away.unavailable and await outbox.waiting() == 3

        pretix.server.start()
        first, second = await asyncio.gather(one.send_waiting(), two.send_waiting())
        assert first.sent + second.sent == 3 and await outbox.waiting() == 0
        assert second.holder == "sync-a" or first.holder == "b"  # one of them held the lease, the other stood by
        for p, job_id in zip(placed, jobs, strict=True):
            assert pretix.data("checkins", str(p["id"])) == [
                {"list": pretix.entrance, "type": "entry", "nonce": job_id, "successful": True}
            ]
            assert len((await client.position(p["id"])).print_logs) == 1


async def test_entries_an_earlier_version_wrote_into_the_outbox_are_sent_before_the_records(
    pretix: Pretix, redis: Redis, redis_server: RedisServer, venue: str, tmp_path: Path
) -> None:
    """An upgrade loses nothing: what confirm wrote straight into pretix:outbox before the printed record existed
    (or an agent not upgraded yet still writes there) is sent as any entry, and first."""
    placed = [pretix.data("order", f"Upgraded {i}") for i in range(2)]
    outbox = Outbox(redis, venue)
    async with venue_of(pretix, redis, venue) as (store, client):
        old, new = [await print_badge(store, p["secret"]) for p in placed]
        async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01):
            await wait_until(lambda: printed(redis, venue, old))
            await wait_until(lambda: printed(redis, venue, new))
        # As the previous version's confirm left it: the old print in the outbox itself, not in the record.
        record = [e for e in await outbox.record.after("pretix", 10) if e.job_id == old]
        await redis.xdel(Keys(venue).printed, record[0].id)
        await redis.xadd(PretixKeys(venue).outbox, {"job_id": old, "epoch": "1", "first": "1", "printer": "desk-1"})
        assert await outbox.waiting() == 2
        done = await Sender(outbox, client, pretix.entrance, me="sync-a").send_waiting()
        assert (done.sent, await outbox.waiting()) == (2, 0)
        for p, job_id in zip(placed, (old, new), strict=True):
            assert pretix.data("checkins", str(p["id"])) == [
                {"list": pretix.entrance, "type": "entry", "nonce": job_id, "successful": True}
            ]


async def test_a_sender_whose_lease_ran_out_removes_nothing(pretix: Pretix, redis: Redis, venue: str) -> None:
    outbox = Outbox(redis, venue)
    await redis.xadd(PretixKeys(venue).outbox, {"job_id": "X-1", "epoch": "1", "first": "1"})
    (entry,) = await outbox.entries()
    assert (await outbox.lease("a", 100_000)).held
    taken = await outbox.lease("b", 100_000)
    assert not taken.held and taken.holder == "a" and taken.ms_left > 90_000
    assert not await outbox.sent("b", entry.id) and await outbox.waiting() == 1
    assert await outbox.sent("a", entry.id) and await outbox.waiting() == 0


@pytest.fixture(autouse=True)
def _quiet_agent_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("WARNING")


async def test_the_sync_runs_under_its_own_least_privilege_user(
    pretix: Pretix, redis: Redis, redis_server: RedisServer, venue: str, tmp_path: Path
) -> None:
    placed, cancelled = pretix.data("order", "Synced By Its User"), pretix.data("order", "Cancelled For The User")
    user = await create_user(redis, venue, tmp_path / "sync.pw", role="pretix-sync")
    as_sync = Redis(port=redis_server.port, username=user, password=(tmp_path / "sync.pw").read_text().strip())
    try:
        async with venue_of(pretix, as_sync, venue) as (store, client):
            job_id = await print_badge(AttendeeStore(redis, venue), cancelled["secret"])
            pretix.data("cancel", cancelled["order"])
            changes = ListChanges(client, pretix.entrance)
            await ListWriter(store).write((await changes.read()).records)  # a cancel withdraws a waiting badge
            assert await redis.hget(Keys(venue).job(job_id), "state") == b"cancelled"
            printed_job = await print_badge(AttendeeStore(redis, venue), placed["secret"])
            async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01):
                await wait_until(lambda: printed(redis, venue, printed_job))
            done = await Sender(Outbox(as_sync, venue), client, pretix.entrance).send_waiting()
            assert done.sent == 1 and await Outbox(as_sync, venue).waiting() == 0
        with pytest.raises(NoPermissionError):
            await as_sync.delete(Keys(venue).pool)
        with pytest.raises(NoPermissionError):
            await as_sync.xdel(Keys(venue).events, "0-1")
    finally:
        await as_sync.aclose()
        await redis.execute_command("ACL", "DELUSER", user)


@pytest.mark.slow
async def test_a_backlog_is_sent_several_at_a_time_each_check_in_once(
    lone_pretix: Pretix, redis: Redis, venue: str
) -> None:
    """A backlog (pretix away for a while) drains in waves of entries sent side by side, never two prints of one
    job at once, each attendee checked in once and logged once; the test pretix (SQLite) refuses some concurrent
    writes with a 500, and those are sent again one at a time in the same round."""
    pretix = lone_pretix
    pretix.data("bulk", "40")
    outbox = Outbox(redis, venue)
    async with venue_of(pretix, redis, venue) as (store, client):
        records = [r for r in (await ListChanges(client, pretix.entrance).read()).records if r.name.startswith("Bulk")]
        assert len(records) == 40
        jobs = [await print_badge(store, r.code) for r in records]
        for job_id in jobs:  # as confirm leaves a first badge's print in the outbox
            await redis.xadd(PretixKeys(venue).outbox, {"job_id": job_id, "epoch": "1", "first": "1", "printer": "p1"})
        # And one reprint right behind its badge: told after it, never in the same wave.
        await redis.xadd(PretixKeys(venue).outbox, {"job_id": jobs[-1], "epoch": "2", "first": "0", "printer": "p1"})

        in_flight, most = 0, 0
        redeem = client.redeem

        async def counted(*args: Any, **kwargs: Any) -> Any:
            nonlocal in_flight, most
            in_flight += 1
            most = max(most, in_flight)
            try:
                return await redeem(*args, **kwargs)
            finally:
                in_flight -= 1

        client.redeem = counted  # type: ignore[method-assign]
        done = await Sender(outbox, client, pretix.entrance, me="sync-a", concurrency=4).send_waiting()
        assert (done.sent, done.refused, done.dropped, await outbox.waiting()) == (41, 0, 0, 0), done.unavailable
        assert most == 4  # side by side, as many as the sender was told
        for record, job_id in zip(records, jobs, strict=True):
            position = await client.position(record.position_id)
            assert [(c.list, c.successful) for c in position.checkins] == [(pretix.entrance, True)]
            assert len(position.print_logs) == (2 if job_id == jobs[-1] else 1)
