"""Staff changes to attendees of a pre-print run, on a real redis-server and the real intake over HTTP: a cancel
voids the boxed badge in the same step (an undo takes it back only while there is nothing to pull), and
``attendees purge`` removes the runs with the list."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from attendees.importer import Importer
from attendees.store import AttendeeStore, PurgeRefused
from preprint.keys import PreprintKeys
from preprint.pool import print_on_pool
from preprint.store import PreprintStore
from protocol.keys import Keys
from tests.preprint.test_door import PEOPLE, printed_pdf_run
from tests.support.attendee_files import rows
from tests.support.intake import Desk


async def planned_run(redis: Redis, venue: str, box_size: int = 2) -> PreprintStore:
    """A run planned, not printed yet."""
    attendees = AttendeeStore(redis, venue)
    await Importer(attendees).load(iter(rows(PEOPLE)))
    store = PreprintStore(redis, venue, attendees)
    await store.plan("night", box_size=box_size, pickup="the welcome desk")
    return store


async def test_a_staff_cancel_voids_a_boxed_badge_and_an_undo_keeps_it_void(
    desk: Desk, redis: Redis, venue: str
) -> None:
    store = await printed_pdf_run(redis, venue)
    cancelled = await desk.client.patch("/v1/attendees/m1", json={"status": "cancelled"}, headers=desk.auth("staff"))
    assert cancelled.status == 200
    (void,) = await store.voids("night")
    assert (void.code, void.box, void.name, void.reason, void.printed) == (
        "m1", 1, "Anna Müller", "ticket cancelled", True,
    )  # fmt: skip
    m1 = await store.attendees.get("m1")
    assert m1 is not None and m1.preprint_state == "void"
    # undone: the badge may have been pulled from its box already, so it stays void; the door prints theirs
    undone = await desk.client.patch("/v1/attendees/m1", json={"status": "valid"}, headers=desk.auth("staff"))
    assert undone.status == 200
    assert [v.code for v in await store.voids("night")] == ["m1"]
    printed = await desk.client.post("/v1/attendees/m1/badge", headers=desk.auth("kiosk"))
    assert printed.status == 201 and (await printed.json())["badge"]["state"] == "queued"


async def test_an_undone_cancel_before_the_run_printed_puts_the_badge_back_in_its_box(
    desk: Desk, redis: Redis, venue: str
) -> None:
    store = await planned_run(redis, venue)
    await desk.client.patch("/v1/attendees/k1", json={"status": "cancelled"}, headers=desk.auth("staff"))
    (void,) = await store.voids("night")
    assert (void.code, void.reason, void.printed) == ("k1", "ticket cancelled", False)
    await desk.client.patch("/v1/attendees/k1", json={"status": "valid"}, headers=desk.auth("staff"))
    assert await store.voids("night") == []
    k1 = await store.attendees.get("k1")
    assert k1 is not None and k1.preprint_state == ""
    # the run prints it as planned; a kiosk scan says so and prints nothing
    scan = await desk.client.post("/v1/attendees/k1/badge", headers=desk.auth("kiosk"))
    assert scan.status == 200 and (await scan.json())["printed"] is False
    assert await redis.llen(Keys(venue).pool) == 0


async def test_purge_removes_the_pre_print_runs_with_the_list(redis: Redis, venue: str) -> None:
    await planned_run(redis, venue)
    keys = PreprintKeys(venue)
    assert await redis.exists(keys.runs, keys.run("night"), keys.box("night", 1), keys.box_codes("night", 1)) == 4
    await AttendeeStore(redis, venue).purge()
    left = [key async for key in redis.scan_iter(match=keys.prefix + "preprint:*")]
    assert left == []
    assert await redis.exists(keys.runs) == 0


async def test_purge_is_refused_while_a_box_waits_for_a_printer(redis: Redis, venue: str) -> None:
    await planned_run(redis, venue)
    await print_on_pool(redis, venue, "night")
    with pytest.raises(PurgeRefused):
        await AttendeeStore(redis, venue).purge()  # its badges would print without names
    assert await redis.exists(PreprintKeys(venue).run("night")) == 1


async def test_the_desk_prints_a_planned_badge_at_the_door_and_the_run_leaves_it_out(
    desk: Desk, redis: Redis, venue: str
) -> None:
    store = await planned_run(redis, venue)
    scan = await desk.client.post("/v1/attendees/k1/badge", headers=desk.auth("kiosk"))
    assert scan.status == 200 and (await scan.json())["printed"] is False  # "being printed for box 1"
    refused = await desk.client.post("/v1/attendees/k1/badge", json={"at_door": True}, headers=desk.auth("kiosk"))
    assert refused.status == 403
    printed = await desk.client.post("/v1/attendees/k1/badge", json={"at_door": True}, headers=desk.auth("desk"))
    assert printed.status == 201, await printed.text()
    body = await printed.json()
    assert body["badge"]["state"] == "queued" and body["door_print"] == {"box": 1, "pull": False, "voided": True}
    assert await redis.llen(Keys(venue).pool) == 1
    (void,) = await store.voids("night")
    assert (void.code, void.reason, void.printed) == ("k1", "printed at the door", False)
    # the night-before run prints box 1 without them
    started = await print_on_pool(redis, venue, "night")
    assert started.badges == 2
    k = Keys(venue)
    assert await redis.llen(k.group_queue("pp:night:1")) == 2  # the separator and Anna Müller
    k1 = await store.attendees.get("k1")
    assert k1 is not None and await redis.exists(k.job(k1.job_id + ":pp")) == 0


async def test_a_door_print_after_the_run_printed_voids_the_boxed_badge_to_pull(
    desk: Desk, redis: Redis, venue: str
) -> None:
    store = await printed_pdf_run(redis, venue)
    printed = await desk.client.post("/v1/attendees/m1/badge", json={"at_door": True}, headers=desk.auth("staff"))
    assert printed.status == 201, await printed.text()
    assert (await printed.json())["door_print"] == {"box": 1, "pull": True, "voided": True}
    (void,) = await store.voids("night")
    assert (void.code, void.box, void.reason, void.printed) == ("m1", 1, "printed at the door", True)
    # asked again: the badge exists, nothing prints twice
    again = await desk.client.post("/v1/attendees/m1/badge", json={"at_door": True}, headers=desk.auth("staff"))
    assert again.status == 200 and (await again.json())["duplicate"] is True
    assert await redis.llen(Keys(venue).pool) == 1
