"""One ticket of a paid two-ticket order cancelled alone in pretix (the order stays paid): the next read of the
changes marks that attendee cancelled, the other ticket of the order stays valid; so does a restarted sync's first
read, which the check-in list's listing alone would not tell."""

from __future__ import annotations

import aiohttp
import pytest
from redis.asyncio import Redis

from attendees.store import AttendeeStore
from pretix_sync import changes as changes_module
from pretix_sync.changes import ListChanges
from pretix_sync.client import PretixClient
from pretix_sync.listing import ListWriter
from tests.support.pretix_server import Pretix


async def cancel_position(pretix: Pretix, position_id: int) -> None:
    """What an organizer's tool does: pretix's API cancels one position of an order (the rest stays as it is)."""
    url = f"{pretix.url}/api/v1/organizers/{pretix.organizer}/events/{pretix.event}/orderpositions/{position_id}/"
    async with (
        aiohttp.ClientSession() as session,
        session.delete(url, headers={"Authorization": f"Token {pretix.token}"}) as response,
    ):
        assert response.status == 204, await response.text()


async def test_a_ticket_cancelled_alone_in_a_paid_order_is_seen_by_the_next_read(
    pretix: Pretix, redis: Redis, venue: str
) -> None:
    placed = pretix.data("pair", "Stays Valid", "Cancelled Alone")
    kept, cancelled = placed["positions"]
    store = AttendeeStore(redis, venue)
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token) as client:
        changes = ListChanges(client, pretix.entrance)
        writer = ListWriter(store)
        await writer.write((await changes.read()).records)
        for position in (kept, cancelled):
            attendee = await store.get(position["secret"])
            assert attendee is not None and attendee.status == "valid"

        await cancel_position(pretix, cancelled["id"])
        batch = await changes.read()  # what the next round of --follow reads
        await writer.write(batch.records)

    gone = await store.get(cancelled["secret"])
    assert gone is not None and gone.status == "cancelled", gone
    still = await store.get(kept["secret"])
    assert still is not None and still.status == "valid", still


@pytest.mark.parametrize("lookups", ["order by order", "paid orders listed"])
async def test_a_ticket_cancelled_alone_while_no_sync_ran_is_seen_by_the_next_sync_s_first_read(
    pretix: Pretix, redis: Redis, venue: str, lookups: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if lookups == "paid orders listed":  # as with more held tickets unmet than are worth a request each
        monkeypatch.setattr(changes_module, "LOOKUP_AT_MOST", 0)
    placed = pretix.data("pair", "Stays Valid Too", f"Cancelled While Away ({lookups})")
    kept, cancelled = placed["positions"]
    store = AttendeeStore(redis, venue)
    writer = ListWriter(store)
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token) as client:
        await writer.write((await ListChanges(client, pretix.entrance, held=writer.held).read()).records)
        await cancel_position(pretix, cancelled["id"])
        # The sync restarted (the Pi rebooted): its first read lists what the check-in list admits and the unpaid
        # orders; the cancelled ticket is in neither, but the list still holds it as valid.
        batch = await ListChanges(client, pretix.entrance, held=writer.held).read()
        await writer.write(batch.records)

    gone = await store.get(cancelled["secret"])
    assert gone is not None and gone.status == "cancelled", gone
    reasons = [r.reason for r in batch.records if r.code == cancelled["secret"]]
    assert reasons == ["the position was cancelled in pretix"]
    still = await store.get(kept["secret"])
    assert still is not None and still.status == "valid", still
