"""pretix_sync.changes on the real pretix: the first read, then only what changed (names, new and cancelled orders)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from pretix_sync.changes import ListChanges
from pretix_sync.client import PretixClient
from pretix_sync.records import AttendeeRecord
from tests.support.pretix_server import Pretix


@pytest.fixture
async def client(pretix: Pretix) -> AsyncIterator[PretixClient]:
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token) as c:
        yield c


def by_code(records: list[AttendeeRecord]) -> dict[str, AttendeeRecord]:
    return {r.code: r for r in records}


async def test_first_read_maps_every_admitted_ticket(pretix: Pretix, client: PretixClient) -> None:
    gone = pretix.data("order", "Cancelled Early")
    pretix.data("cancel", gone["order"])
    changes = ListChanges(client, pretix.entrance)
    first = by_code((await changes.read()).records)
    assert (first[gone["secret"]].status, first[gone["secret"]].reason) == (
        "cancelled",
        "the order is cancelled in pretix",
    )
    renee = first[pretix.position("Renée Müller")["secret"]]
    assert (renee.name, renee.company, renee.role, renee.status) == ("Renée Müller", "Acme GmbH", "Regular", "valid")
    assert renee.fields == {"ticket_type": "Regular", "product_id": str(pretix.seed["items"]["Regular"])}
    seeded = pretix.position("Renée Müller")
    assert renee.job_id == f"{seeded['order']}-{seeded['id']}"  # pretix's non-secret ids, never the secret
    assert renee.code not in renee.job_id
    assert renee.needs_attention is False

    speaker = first[pretix.position("Ahmed Al-Sayed")["secret"]]
    assert (speaker.role, speaker.fields["ticket_type"]) == ("Speaker", "Speaker")
    assert first[pretix.position("שרה כהן")["secret"]].name == "שרה כהן"

    invoice_only = first[pretix.position(index=4)["secret"]]
    assert (invoice_only.name, invoice_only.needs_attention) == ("Invoice Person", False)
    nameless = first[pretix.position(index=5)["secret"]]
    assert (nameless.name, nameless.status, nameless.needs_attention) == ("", "valid", True)  # the help desk

    # Nothing changed since: the next read is empty (the overlap does not read the same orders again).
    assert (await changes.read()).records == []


async def test_a_list_of_one_product_maps_only_that_product(pretix: Pretix, client: PretixClient) -> None:
    lounge = ListChanges(client, pretix.seed["checkin_lists"]["Speaker lounge"])
    records = (await lounge.read()).records
    assert {r.role for r in records} == {"Speaker"}
    assert pretix.position("Ahmed Al-Sayed")["secret"] in by_code(records)


async def test_later_reads_bring_only_what_changed(pretix: Pretix, client: PretixClient) -> None:
    changes = ListChanges(client, pretix.entrance)
    await changes.read()
    renamed = pretix.data("order", "Max Before")
    assert {r.code for r in (await changes.read()).records} == {renamed["secret"]}  # a new order

    pretix.data("rename", str(renamed["id"]), "Max After")
    batch = await changes.read()
    assert [(r.code, r.name, r.status) for r in batch.records] == [(renamed["secret"], "Max After", "valid")]

    pretix.data("cancel", renamed["order"])
    batch = await changes.read()
    assert [(r.code, r.status, r.reason) for r in batch.records] == [
        (renamed["secret"], "cancelled", "the order is cancelled in pretix")
    ]
    assert batch.records[0].name == "Max After"  # the desk still sees whose ticket it was
    assert (await changes.read()).records == []


async def test_many_changed_orders_are_read_in_one_listing(pretix: Pretix, client: PretixClient) -> None:
    changes = ListChanges(client, pretix.entrance)
    await changes.read()
    pretix.data("bulk", "30")  # more than BULK_AFTER: the whole list is read once instead of 30 requests
    listing = f"/checkinlists/{pretix.entrance}/positions/"
    before = len(pretix.server.requests_to(listing))
    batch = await changes.read()
    asked = pretix.server.requests_to(listing)[before:]
    assert asked  # the list was read ...
    assert not [line for line in asked if "order=" in line]  # ... whole, never one order at a time
    assert batch.orders == 30
    assert len(batch.records) == 30
    assert all(r.status == "valid" and r.name.startswith("Bulk Attendee") for r in batch.records)
