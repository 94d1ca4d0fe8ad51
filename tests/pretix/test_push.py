"""pretix_sync.push on the real pretix: a confirmed print checks the attendee in and logs the print, once, however
often it is sent; a reprint logs only; pretix away means "keep it and try again"."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from pretix_sync.client import PretixClient
from pretix_sync.errors import PretixUnavailable
from pretix_sync.push import PrintedBadge, Sent, send_print
from tests.support.pretix_server import Pretix


@pytest.fixture
async def client(pretix: Pretix) -> AsyncIterator[PretixClient]:
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token) as c:
        yield c


def badge(placed: dict[str, Any], print_id: str, first: bool = True) -> PrintedBadge:
    return PrintedBadge(
        job_id=f"{placed['order']}-{placed['id']}",
        print_id=print_id,
        code=placed["secret"],
        position_id=placed["id"],
        first=first,
        printed_at="2026-12-02T09:15:00Z",
        printer="hall-a-1",
        location="Hall A",
    )


async def print_logs(client: PretixClient, position_id: int) -> list[dict[str, Any]]:
    return [log.info for log in (await client.position(position_id)).print_logs]


async def test_a_first_print_sent_twice_is_one_checkin_and_one_log(pretix: Pretix, client: PretixClient) -> None:
    placed = pretix.data("order", "Printed Once")
    printed = badge(placed, "p1")
    assert await send_print(client, pretix.entrance, printed) == Sent("ok", "posted")
    assert await send_print(client, pretix.entrance, printed) == Sent("ok", "already there")  # the answer was lost
    checkins = pretix.data("checkins", str(placed["id"]))
    assert checkins == [{"list": pretix.entrance, "type": "entry", "nonce": printed.job_id, "successful": True}]
    logs = await print_logs(client, placed["id"])
    assert logs == [{"job_id": printed.job_id, "print_id": "p1", "printer": "hall-a-1", "location": "Hall A"}]
    position = await client.position(placed["id"])
    assert position.checkins[0].datetime is not None
    assert position.checkins[0].datetime.startswith("2026-12-02T09:15:00")  # when it printed, not when sent
    assert position.print_logs[0].datetime is not None
    assert position.print_logs[0].datetime.startswith("2026-12-02T09:15:00")


async def test_a_reprint_is_a_print_log_only(pretix: Pretix, client: PretixClient) -> None:
    placed = pretix.data("order", "Reprinted")
    await send_print(client, pretix.entrance, badge(placed, "p1"))
    assert await send_print(client, pretix.entrance, badge(placed, "p2", first=False)) == Sent("skipped", "posted")
    assert len(pretix.data("checkins", str(placed["id"]))) == 1
    assert [log["print_id"] for log in await print_logs(client, placed["id"])] == ["p1", "p2"]


async def test_a_door_scan_first_still_counts_as_checked_in(pretix: Pretix, client: PretixClient) -> None:
    placed = pretix.data("order", "Scanned At The Door")
    await client.redeem(placed["secret"], [pretix.entrance], "door-scanner-1")
    assert await send_print(client, pretix.entrance, badge(placed, "p1")) == Sent("already", "posted")


async def test_a_cancelled_ticket_is_refused_with_the_reason(pretix: Pretix, client: PretixClient) -> None:
    placed = pretix.data("order", "Cancelled After Print")
    pretix.data("cancel", placed["order"])
    assert await send_print(client, pretix.entrance, badge(placed, "p1")) == Sent("refused", "posted", "canceled")


async def test_pretix_away_then_back(lone_pretix: Pretix) -> None:
    pretix = lone_pretix
    placed = pretix.data("order", "Printed During The Outage")
    async with PretixClient(
        pretix.url, pretix.organizer, pretix.event, pretix.token, attempts=2, max_pause=0.01
    ) as client:
        pretix.server.stop()
        with pytest.raises(PretixUnavailable):
            await send_print(client, pretix.entrance, badge(placed, "p1"))
        pretix.server.start()
        assert await send_print(client, pretix.entrance, badge(placed, "p1")) == Sent("ok", "posted")
    assert len(pretix.data("checkins", str(placed["id"]))) == 1
