"""pretix_sync.client against a real pretix server (tests/support/pretix_server.py): reads, changes, check-ins,
layouts."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from pretix_sync.api_types import i18n_text
from pretix_sync.client import PretixClient
from pretix_sync.errors import PretixConfigError
from pretix_sync.layouts import fetch_layouts
from tests.support.pretix_server import Pretix


@pytest.fixture
async def client(pretix: Pretix) -> AsyncIterator[PretixClient]:
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token) as c:
        yield c


async def newest_change(client: PretixClient) -> str:
    """The latest ``last_modified`` of any order: the watermark a sync keeps between two runs."""
    return max([o.last_modified async for o in client.orders()])


async def test_first_fetch_lists_what_the_checkin_list_admits(pretix: Pretix, client: PretixClient) -> None:
    positions = {p.secret: p async for p in client.checkin_list_positions(pretix.entrance)}
    for seeded in pretix.seed["positions"]:
        got = positions[seeded["secret"]]
        # Non-Latin names as pretix holds them; with no attendee name pretix itself gives the invoice name.
        assert got.attendee_name == (seeded["name"] or seeded["invoice_name"])
        assert got.company == seeded["company"]
        assert got.item == pretix.seed["items"][seeded["product"]]
        assert got.order == seeded["order"]
        assert got.id == seeded["id"]
        assert got.order_status == "p"
    assert positions[pretix.position("山田 太郎")["secret"]].company == "株式会社テスト"
    assert positions[pretix.position(index=5)["secret"]].attendee_name is None  # neither name: the help desk

    items = {i.id: i18n_text(i.name) for i in await client.items()}
    assert items == {v: k for k, v in pretix.seed["items"].items()}

    # The speakers' lounge admits the Speaker product only: pretix decides, not us.
    lounge = pretix.seed["checkin_lists"]["Speaker lounge"]
    admitted = [p.attendee_name async for p in client.checkin_list_positions(lounge)]
    assert admitted == ["Ahmed Al-Sayed"]
    lists = {c.id: c for c in await client.checkin_lists()}
    assert lists[lounge].limit_products == [pretix.seed["items"]["Speaker"]]
    assert (await client.checkin_list(pretix.entrance)).name == "Entrance"


async def test_orders_carry_the_invoice_name_of_a_position_without_attendee_name(
    pretix: Pretix, client: PretixClient
) -> None:
    nameless = pretix.position(index=4)
    assert nameless["name"] is None
    orders = {o.code: o async for o in client.orders()}
    order = orders[nameless["order"]]
    assert order.invoice_address is not None
    assert order.invoice_address.name == "Invoice Person"
    assert order.positions[0].attendee_name is None
    assert orders[pretix.position(index=5)["order"]].invoice_address is None  # neither: the help desk


async def test_many_pages_are_followed(pretix: Pretix, client: PretixClient) -> None:
    """More than one page (pretix returns at most 50 a page): every position once, none twice."""
    before = [p.id async for p in client.checkin_list_positions(pretix.entrance)]
    if len(before) <= 50:
        pretix.data("bulk", str(51 - len(before) + 5))
    after = [p.id async for p in client.checkin_list_positions(pretix.entrance)]
    assert len(after) > 50
    assert len(after) == len(set(after))
    assert set(before) <= set(after)


async def test_a_name_change_is_seen_through_modified_since(pretix: Pretix, client: PretixClient) -> None:
    placed = pretix.data("order", "Jane Before")
    watermark = await newest_change(client)
    pretix.data("rename", str(placed["id"]), "Jane After")
    changed = [o async for o in client.orders(modified_since=watermark)]
    codes = {o.code for o in changed}
    assert placed["order"] in codes
    assert pretix.position(index=0)["order"] not in codes  # only what changed since, not the whole event
    order = next(o for o in changed if o.code == placed["order"])
    assert order.positions[0].attendee_name == "Jane After"
    again = [p async for p in client.checkin_list_positions(pretix.entrance, order=placed["order"])]
    assert [p.attendee_name for p in again] == ["Jane After"]


async def test_a_new_order_is_seen_through_modified_since(pretix: Pretix, client: PretixClient) -> None:
    watermark = await newest_change(client)
    placed = pretix.data("order", "Late Registrant", "Speaker")
    changed = {o.code: o async for o in client.orders(modified_since=watermark)}
    assert placed["order"] in changed
    assert changed[placed["order"]].positions[0].secret == placed["secret"]
    lounge = pretix.seed["checkin_lists"]["Speaker lounge"]
    admitted = [p.secret async for p in client.checkin_list_positions(lounge, order=placed["order"])]
    assert admitted == [placed["secret"]]


async def test_a_cancelled_order_leaves_the_list_and_says_so(pretix: Pretix, client: PretixClient) -> None:
    placed = pretix.data("order", "Soon Gone")
    watermark = await newest_change(client)
    assert pretix.data("cancel", placed["order"])["status"] == "c"
    changed = {o.code: o async for o in client.orders(modified_since=watermark)}
    order = changed[placed["order"]]
    assert order.status == "c"
    assert order.positions[0].secret == placed["secret"]  # the order says so; its positions keep canceled=False
    assert [p async for p in client.checkin_list_positions(pretix.entrance, order=placed["order"])] == []


async def test_redeem_with_the_same_nonce_twice_makes_one_checkin(pretix: Pretix, client: PretixClient) -> None:
    placed = pretix.data("order", "Checked Once")
    nonce = f"{placed['order']}-{placed['id']}"
    first = await client.redeem(placed["secret"], [pretix.entrance], nonce)
    second = await client.redeem(placed["secret"], [pretix.entrance], nonce)  # the answer was lost: sent again
    assert (first.status, second.status) == ("ok", "ok")
    assert pretix.data("checkins", str(placed["id"])) == [
        {"list": pretix.entrance, "type": "entry", "nonce": nonce, "successful": True}
    ]
    # Another nonce is another scan: this list admits once, so pretix refuses it and says why.
    other = await client.redeem(placed["secret"], [pretix.entrance], nonce + "-other")
    assert (other.status, other.reason) == ("error", "already_redeemed")
    unknown = await client.redeem("no-such-secret", [pretix.entrance], "n-1")
    assert (unknown.status, unknown.reason) == ("error", "invalid")
    positions = [p async for p in client.checkin_list_positions(pretix.entrance, order=placed["order"])]
    assert [c.list for c in positions[0].checkins] == [pretix.entrance]


async def test_a_redeem_on_a_cancelled_order_is_refused(pretix: Pretix, client: PretixClient) -> None:
    placed = pretix.data("order", "Cancelled Before Print")
    pretix.data("cancel", placed["order"])
    result = await client.redeem(placed["secret"], [pretix.entrance], "n-cancelled")
    assert (result.status, result.reason) == ("error", "canceled")
    # pretix records the refused scan as an unsuccessful check-in, and no check-in.
    assert pretix.data("checkins", str(placed["id"])) == [
        {"list": pretix.entrance, "type": "entry", "nonce": "n-cancelled", "successful": False}
    ]


async def test_a_print_log_is_recorded_on_the_position(pretix: Pretix, client: PretixClient) -> None:
    placed = pretix.data("order", "Printed Person")
    info = {"job_id": f"{placed['order']}-{placed['id']}", "printer": "hall-a-1"}
    logged = await client.print_log(placed["id"], info)
    assert (logged.type, logged.source, logged.info) == ("badge", "badge-agent", info)
    position = await client.position(placed["id"])
    assert [(p.type, p.info) for p in position.print_logs] == [("badge", info)]


async def test_badge_layouts_with_their_backgrounds_and_products(pretix: Pretix, client: PretixClient) -> None:
    layouts = {layout.name: layout for layout in await client.badge_layouts()}
    assert set(layouts) == {"Default", "Speaker"}
    assert layouts["Default"].default is True
    assert [a.item for a in layouts["Speaker"].item_assignments] == [pretix.seed["items"]["Speaker"]]
    assert layouts["Default"].item_assignments == []
    elements = layouts["Speaker"].layout
    assert {e["content"] for e in elements} == {"attendee_name", "attendee_company"}
    for layout in layouts.values():
        assert layout.background is not None
        pdf = await client.download(layout.background)
        assert pdf.startswith(b"%PDF-")
    # The speaker's own background (uploaded in the designer) is the one with the band, not pretix's default A6.
    assert layouts["Speaker"].background != layouts["Default"].background


async def test_what_a_least_privileged_team_can_do(pretix: Pretix) -> None:
    """The permissions docs/pretix.md asks for: orders "View all and check-in" reads the list and checks in; a print
    log is a change to the order, refused without "View all and change"."""
    placed = pretix.data("order", "Least Privilege")
    token = pretix.data("token", "event.orders:read", "event.orders:checkin")["token"]
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, token) as client:
        assert placed["secret"] in [p.secret async for p in client.checkin_list_positions(pretix.entrance)]
        assert placed["order"] in [o.code async for o in client.orders()]
        assert {i18n_text(i.name) for i in await client.items()} == {"Regular", "Speaker"}
        assert len(await client.badge_layouts()) == 2
        assert (await client.redeem(placed["secret"], [pretix.entrance], "least-1")).status == "ok"
        with pytest.raises(PretixConfigError, match="refused a print log"):
            await client.print_log(placed["id"], {"job_id": "x"})
    token = pretix.data("token", "event.orders:read", "event.orders:write", "event.orders:checkin")["token"]
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, token) as client:
        assert (await client.print_log(placed["id"], {"job_id": "x"})).type == "badge"


async def test_the_events_layouts_as_rules_with_their_backgrounds(pretix: Pretix, client: PretixClient) -> None:
    event = await fetch_layouts(client)
    assert event.default is not None
    assert event.default.name == "Default"
    assert event.rules() == {"Speaker": "Speaker"}  # a Regular ticket gets the default, as pretix prints it
    speaker = next(layout for layout in event.layouts if layout.name == "Speaker")
    assert speaker.background is not None
    assert speaker.background.startswith(b"%PDF-")
    assert speaker.background != event.default.background  # the uploaded one, not pretix's A6 default
    assert {e["content"] for e in speaker.elements} == {"attendee_name", "attendee_company"}
