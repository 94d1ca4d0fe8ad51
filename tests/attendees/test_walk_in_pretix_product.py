"""``POST /v1/attendees`` with ``pretix_product`` over real HTTP on a real redis-server: only a product the pretix
sync offers is taken (the walk-in then waits in ``P pretix:walk-ins``); anything else is one 422 naming the field
and what is offered, and nothing is added."""

from __future__ import annotations

from redis.asyncio import Redis

from attendees.store import AttendeeStore
from pretix_sync.keys import PretixKeys
from pretix_sync.walk_ins import Product, publish_products
from tests.support.intake import Desk


async def test_only_an_offered_product_is_taken(desk: Desk, redis: Redis, venue: str) -> None:
    async def walk_in(name: str, product: object) -> tuple[int, dict[str, object]]:
        body = {"name": name, "pretix_product": product, "print": False}
        resp = await desk.client.post("/v1/attendees", json=body, headers=desk.auth("desk"))
        return resp.status, await resp.json()

    status, said = await walk_in("No Sync Yet", 7)
    assert status == 422 and said["detail"] == (
        "pretix_product: 7 is not a product offered for walk-ins (offered: none: no --walk-in-product is set)"
    )
    await publish_products(redis, venue, [Product(7, "Day ticket")])
    for product, why in (
        (8, "8 is not a product offered for walk-ins (offered: 7 (Day ticket))"),
        ("7", "must be a product id (a number) the venue's pretix sync offers"),
        (True, "must be a product id (a number) the venue's pretix sync offers"),
    ):
        status, said = await walk_in("Bad Product", product)
        assert (status, said["detail"]) == (422, f"pretix_product: {why}")
    assert await redis.xlen(PretixKeys(venue).walk_ins) == 0
    assert (await AttendeeStore(redis, venue).counts(fold=False)).expected == 0  # nothing added

    status, said = await walk_in("Good Product", 7)
    assert status == 201, said
    (entry,) = await redis.xrange(PretixKeys(venue).walk_ins)
    assert entry[1][b"product"] == b"7"
