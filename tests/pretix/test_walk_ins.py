"""Walk-ins added at the desk become pretix orders of the product the desk chose (the real pretix): pretix's count of
orders includes them, a retry after a lost answer makes no second order, a product pretix refuses (sold out) leaves
the walk-in on the list with the reason and no order."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from redis.asyncio import Redis

from attendees.store import AttendeeStore
from cli.redis_server import RedisServer
from pretix_sync.changes import ListChanges
from pretix_sync.client import PretixClient
from pretix_sync.keys import PretixKeys
from pretix_sync.listing import ListWriter
from pretix_sync.walk_ins import Product, WalkInOrders, publish_products, walk_in_status
from protocol.codec import enc
from tests.support.agents import running_agent
from tests.support.intake import Desk
from tests.support.pretix import printed
from tests.support.pretix_server import Pretix
from tests.support.processes import badge_agent, create_user
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


async def _orders(client: PretixClient) -> int:
    return len([o async for o in client.orders()])


async def _walk_in(desk: Desk, store: AttendeeStore, name: str, product: int, printed: bool = False) -> str:
    """The desk page's walk-in with a pretix product chosen (printed, or not when the test is about the order
    alone); its code."""
    response = await desk.client.post(
        "/v1/attendees",
        json={"name": name, "company": "Walk-In Co", "pretix_product": product, "print": printed},
        headers=desk.auth("desk"),
    )
    assert response.status == 201, await response.text()
    code = await store.code_of((await response.json())["handle"])  # a desk sees a handle, not the code
    assert code is not None
    return code


async def test_a_walk_in_at_the_desk_becomes_an_order_of_the_chosen_product(
    pretix: Pretix, redis: Redis, venue: str, desk: Desk
) -> None:
    products = pretix.data("walk_in_products")
    day = Product(products["Day ticket"], "Day ticket")
    store = AttendeeStore(redis, venue)
    await publish_products(redis, venue, [day])
    settings = await (await desk.client.get("/desk/settings.json", headers=desk.auth("desk"))).json()
    assert settings["pretix_products"] == [{"id": day.id, "name": "Day ticket"}]

    code = await _walk_in(desk, store, "Wanda Walk-In", day.id)
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token) as client:
        before = await _orders(client)
        orders = WalkInOrders(store, client, [day])
        sent = await orders.send_waiting()
        assert sent.refused == {} and len(sent.ordered) == 1
        assert await _orders(client) == before + 1  # pretix's numbers include the walk-in

        attendee = await store.get(code)
        assert attendee is not None
        (made,) = pretix.data("orders_with_comment", f"badge {attendee.job_id})")
        assert made["status"] == "p" and made["testmode"] is False
        assert made["positions"] == [{"item": day.id, "secret": code, "name": "Wanda Walk-In"}]
        assert (attendee.order_code, attendee.source, attendee.status) == (made["code"], "pretix", "valid")
        position = await client.position_by_secret(code)
        assert position is not None
        assert await redis.hget(enc(PretixKeys(venue).jobs), enc(attendee.job_id)) == str(position.id).encode()

        # The next read of the check-in list finds the same code: the same attendee, not a second one.
        changes = ListChanges(client, pretix.entrance)
        records = [r for r in (await changes.read()).records if r.order_code == made["code"]]
        assert [r.code for r in records] == [code]
        await ListWriter(store).write(records)
        assert (await store.counts(fold=False)).expected == 1  # one attendee, as before the read


async def test_a_retry_after_a_lost_answer_makes_no_second_order(
    pretix: Pretix, redis: Redis, venue: str, desk: Desk
) -> None:
    day = Product(pretix.data("walk_in_products")["Day ticket"], "Day ticket")
    store = AttendeeStore(redis, venue)
    await publish_products(redis, venue, [day])
    code = await _walk_in(desk, store, "Lost Answer", day.id)
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token) as client:
        orders = WalkInOrders(store, client, [day])
        attendee = await store.get(code)
        assert attendee is not None
        # The first send reached pretix, which made the order; its answer never came back (the sync died).
        body = await orders._body(attendee, day.id)
        first = await client.create_order(body, simulate=False, key=f"badge-agent-walk-in-{code}")
        # The same request again (a retry of the lost one) is answered with the same order, not a second one.
        again = await client.create_order(body, simulate=False, key=f"badge-agent-walk-in-{code}")
        assert again.code == first.code
        before = await _orders(client)
        sent = await orders.send_waiting()
    assert sent.ordered == [first.code] and sent.refused == {}
    attendee = await store.get(code)
    assert attendee is not None and attendee.order_code == first.code
    assert [o["code"] for o in pretix.data("orders_with_comment", f"badge {attendee.job_id})")] == [first.code]
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token) as client:
        assert await _orders(client) == before


async def test_a_product_pretix_refuses_leaves_the_walk_in_listed_with_the_reason_and_no_order(
    pretix: Pretix, redis: Redis, venue: str, desk: Desk, tmp_path: Path
) -> None:
    sold_out = Product(pretix.data("walk_in_products")["Sold out"], "Sold out")
    store = AttendeeStore(redis, venue)
    await publish_products(redis, venue, [sold_out])
    code = await _walk_in(desk, store, "Too Late", sold_out.id)
    said: list[str] = []
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token) as client:
        before = await _orders(client)
        sent = await WalkInOrders(store, client, [sold_out], report=said.append).send_waiting()
        assert await _orders(client) == before
    attendee = await store.get(code)
    assert attendee is not None
    assert pretix.data("orders_with_comment", f"badge {attendee.job_id})") == []
    attendee = await store.get(code)
    assert attendee is not None
    why = sent.refused[code]
    assert list(sent.refused) == [code] and why.startswith(f"walk-in {attendee.job_id}: pretix refused its order (")
    assert "sold out" in why.lower() or "quota" in why.lower(), why
    assert code not in why  # the code is a credential
    attendee = await store.get(code)
    assert attendee is not None and (attendee.status, attendee.source, attendee.order_code) == ("valid", "walk-in", "")
    assert await walk_in_status(redis, venue) == {"waiting": 0, "refused": [why]}
    assert said == [why]


async def test_attendees_sync_follow_orders_the_desk_s_walk_ins_under_its_own_user(
    pretix: Pretix, redis: Redis, redis_server: RedisServer, venue: str, desk: Desk, tmp_path: Path
) -> None:
    """As the service runs it: ``attendees sync --follow --walk-in-product`` in its own process with the
    pretix-sync Redis user; the desk offers the product, a walk-in becomes an order, a sold-out one is refused and
    ``badge-agent status`` says why."""
    products = pretix.data("walk_in_products")
    user = await create_user(redis, venue, tmp_path / "sync.pw", role="pretix-sync")
    password = (tmp_path / "sync.pw").read_text().strip()
    token = tmp_path / "pretix.token"
    token.write_text(pretix.token, encoding="utf-8")
    token.chmod(0o600)
    log = tmp_path / "sync.log"
    argv = [
        sys.executable, "-m", "agent", "attendees", "sync", "--follow", "--interval", "0.5",
        "--redis", f"redis://{user}:{password}@127.0.0.1:{redis_server.port}/0", "--venue", venue,
        "--pretix", pretix.url, "--event", f"{pretix.organizer}/{pretix.event}", "--token-file", str(token),
        "--checkin-list", str(pretix.entrance), "--walk-in-product", str(products["Day ticket"]),
        "--walk-in-product", str(products["Sold out"]), "--walk-in-payment", "free",
    ]  # fmt: skip
    store = AttendeeStore(redis, venue)
    with log.open("ab") as out:
        sync = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=os.environ.copy())
    try:

        async def offered() -> bool:
            got = await desk.client.get("/desk/settings.json", headers=desk.auth("desk"))
            return [p["name"] for p in (await got.json())["pretix_products"]] == ["Day ticket", "Sold out"]

        await wait_until(offered, 60)
        # Printed at once, as the desk does: whether the badge or the order comes first, pretix checks it in.
        async with running_agent(tmp_path, venue, redis_server.url, print_time=0.01):
            code = await _walk_in(desk, store, "Followed Walk-In", products["Day ticket"], printed=True)
            late = await _walk_in(desk, store, "Sold Out Walk-In", products["Sold out"])
            placed = await store.get(code)
            assert placed is not None
            await wait_until(lambda: printed(redis, venue, placed.job_id), 60)

        async def ordered() -> bool:
            attendee = await store.get(code)
            return attendee is not None and attendee.order_code != ""

        await wait_until(ordered, 60)

        async def refused_said() -> bool:
            status = await walk_in_status(redis, venue)
            return status is not None and status["refused"] != []

        await wait_until(refused_said, 60)

        async def checked_in() -> bool:
            async with PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token) as client:
                position = await client.position_by_secret(code)
            return position is not None and bool(position.checkins)

        await wait_until(checked_in, 60)
    finally:
        sync.send_signal(signal.SIGTERM)
        exit_code = sync.wait(30)
        await redis.execute_command("ACL", "DELUSER", user)
    said = log.read_text(encoding="utf-8")
    assert exit_code == 0, said
    attendee = await store.get(code)
    assert attendee is not None
    (made,) = pretix.data("orders_with_comment", f"badge {attendee.job_id})")
    assert made["code"] == attendee.order_code and made["positions"][0]["item"] == products["Day ticket"]
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token) as client:
        position = await client.position_by_secret(code)
    assert position is not None
    assert [(c.list, c.successful) for c in position.checkins] == [(pretix.entrance, True)]  # once
    assert len(position.print_logs) == 1
    refused = await store.get(late)
    assert refused is not None and (refused.status, refused.order_code) == ("valid", "")
    shown = " ".join(badge_agent("status", "--redis", redis_server.url, "--venue", venue).stdout.split())
    assert f"pretix: walk-in {refused.job_id}: pretix refused its order (" in shown
    assert code not in said and late not in said and pretix.token not in said


async def test_walk_in_products_the_event_lacks_or_without_follow_exit_78(
    pretix: Pretix, redis_server: RedisServer, venue: str, tmp_path: Path
) -> None:
    token = tmp_path / "pretix.token"
    token.write_text(pretix.token, encoding="utf-8")
    token.chmod(0o600)
    common = [
        "attendees", "sync", "--redis", redis_server.url, "--venue", venue, "--pretix", pretix.url,
        "--event", f"{pretix.organizer}/{pretix.event}", "--token-file", str(token),
        "--checkin-list", str(pretix.entrance),
    ]  # fmt: skip
    unknown = badge_agent(*common, "--follow", "--walk-in-product", "9999")
    assert unknown.returncode == 78, unknown.stderr
    assert "--walk-in-product 9999: event badgeorg/conf2026 has no such product (its products: 1 Regular" in (
        " ".join(unknown.stderr.split())
    )
    alone = badge_agent(*common, "--walk-in-product", "1")
    assert alone.returncode == 78 and "add --follow" in alone.stderr
    assert "Traceback" not in unknown.stderr + alone.stderr
