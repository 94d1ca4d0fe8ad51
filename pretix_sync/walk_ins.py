"""Walk-ins added at a desk become pretix orders, so that pretix's numbers include them.

The intake never talks to pretix: its walk-in route (``POST /v1/attendees`` with ``pretix_product``) adds the
attendee to the list as before and the walk-in's code to ``P pretix:walk-ins``; the pretix sync (``attendees sync
--follow --walk-in-product ID``) makes the order. The products a desk may choose are the sync's to say: it checks
them against the event's products at its start and writes them to ``P pretix:walk-in-products``, which the desk page
offers (none written, none offered).

One order per walk-in, whatever fails on the way:

* The ticket's secret is the walk-in's code, so the order's ticket *is* the attendee the list holds: the next read
  of the check-in list finds the same code and updates it (no second attendee), and a badge printed before the
  order existed is the same badge.
* Before an order is made, pretix is asked for the ticket with that secret: found, the order was made before (its
  answer lost, the sync stopped) and is only written back. Then the order is simulated (pretix's ``simulate``: a
  product sold out or not on sale is refused with nothing made), then made with the walk-in's code in pretix's
  ``X-Idempotency-Key``: sent again after a lost answer, pretix answers with the first order.
* The order's ticket is then written into the list as the sync writes any pretix ticket (source ``pretix``, its
  order code, its position registered for check-ins), and the walk-in leaves ``P pretix:walk-ins``. A badge that
  printed before (a desk prints a walk-in at once) is checked in on pretix then: it was no pretix ticket's when it
  printed, so the outbox never took it.

A walk-in pretix refuses stays on the list (its badge prints as any walk-in's) with no order: why is kept in
``P pretix:walk-ins:failed`` (``badge-agent status`` shows it) and logged, and it is not tried again. pretix
unreachable: the walk-ins wait, and are sent when it answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from redis.asyncio import Redis

from attendees.store import Attendee, AttendeeStore
from pretix_sync.api_types import Item, Order, Position, i18n_text
from pretix_sync.client import PretixClient
from pretix_sync.errors import PretixConfigError, PretixRefused, PretixUnavailable
from pretix_sync.keys import PretixKeys
from pretix_sync.listing import ListWriter
from pretix_sync.push import PrintedBadge, send_print
from pretix_sync.records import admitted
from protocol.codec import dec, enc

#: How a walk-in's order is paid: ``paid`` at the product's price and marked paid (the desk took the money),
#: ``free`` at no charge (pretix's ``free`` payment).
PAYMENTS = ("paid", "free")

#: Walk-ins sent per look.
BATCH = 20

#: pretix's payment provider for an order marked paid by hand.
MANUAL = "manual"

Report = Callable[[str], None]
#: Whether this process may send now: the outbox's sender lease, so two sync processes never order one walk-in at
#: the same time (pretix would answer the second "still making it").
Lease = Callable[[], Awaitable[bool]]


@dataclass(frozen=True)
class Product:
    id: int
    name: str


def choose_products(items: Sequence[Item], wanted: Sequence[int], event: str) -> list[Product]:
    """The products ``--walk-in-product`` names, as the event has them; an id the event lacks is a setting to fix."""
    known = {i.id: i for i in items}
    chosen: list[Product] = []
    for product_id in wanted:
        item = known.get(product_id)
        if item is None:
            listed = ", ".join(f"{i.id} {i18n_text(i.name)}" for i in items) or "none"
            raise PretixConfigError(
                f"--walk-in-product {product_id}: event {event} has no such product (its products: {listed})"
            )
        if not item.admission:
            raise PretixConfigError(
                f"--walk-in-product {product_id} ({i18n_text(item.name)}) admits nobody in pretix: a walk-in needs an"
                " admission product"
            )
        chosen.append(Product(product_id, i18n_text(item.name)))
    return chosen


async def publish_products(redis: Redis, venue: str, products: Sequence[Product]) -> None:
    """What the desk offers: these products (none: the key goes, and the desk offers no pretix order)."""
    key = enc(PretixKeys(venue).walk_in_products)
    if products:
        await redis.set(key, json.dumps([{"id": p.id, "name": p.name} for p in products], ensure_ascii=False))
    else:
        await redis.delete(key)


async def offered_products(redis: Redis, venue: str) -> dict[int, str]:
    """The products the desk may choose for a walk-in's pretix order (id -> name); empty when none are offered."""
    raw = await redis.get(enc(PretixKeys(venue).walk_in_products))
    if raw is None:
        return {}
    try:
        listed = json.loads(raw)
        return {int(p["id"]): str(p["name"]) for p in listed}
    except (ValueError, TypeError, KeyError):
        return {}  # not written by a sync: offer nothing rather than something unknown


async def desk_product(redis: Redis, venue: str, value: object) -> int | None:
    """A walk-in's ``pretix_product`` as the desk sent it: None for no pretix order, else one of the offered
    products' ids; anything else raises ValueError saying what is wrong."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("must be a product id (a number) the venue's pretix sync offers")
    offered = await offered_products(redis, venue)
    if value not in offered:
        listed = ", ".join(f"{i} ({name})" for i, name in offered.items()) or "none: no --walk-in-product is set"
        raise ValueError(f"{value} is not a product offered for walk-ins (offered: {listed})")
    return value


async def order_wanted(redis: Redis, venue: str, code: str, product: int) -> None:
    """The walk-in waits for the pretix sync to make its order (the intake never talks to pretix)."""
    fields = {"code": code, "product": str(product)}
    await redis.xadd(enc(PretixKeys(venue).walk_ins), fields)  # type: ignore[arg-type]


@dataclass
class Sent:
    """One look at the waiting walk-ins."""

    ordered: list[str]
    refused: dict[str, str]
    #: pretix could not be reached: what it said ("" when it answered)
    unavailable: str = ""


class WalkInOrders:
    """Makes the pretix order of each walk-in waiting in ``P pretix:walk-ins`` (see the module's docstring)."""

    def __init__(
        self,
        store: AttendeeStore,
        client: PretixClient,
        products: Sequence[Product],
        payment: str = "paid",
        report: Report | None = None,
        lease: Lease | None = None,
        list_id: int | None = None,
    ) -> None:
        if payment not in PAYMENTS:
            raise ValueError(f"payment {payment!r}: one of {', '.join(PAYMENTS)}")
        self.store = store
        self.client = client
        self.products = {p.id: p.name for p in products}
        self.payment = payment
        self.keys = PretixKeys(store.keys.venue)
        self.writer = ListWriter(store, report)
        self._report = report or (lambda text: None)
        self._lease = lease
        self.list_id = list_id
        self._testmode: bool | None = None

    async def waiting(self) -> list[tuple[str, str, int]]:
        """The walk-ins waiting for their order, oldest first: (entry id, code, product id)."""
        raw: list[tuple[bytes, dict[bytes, bytes]]] = await self.store.redis.xrange(  # type: ignore[assignment]
            enc(self.keys.walk_ins), count=BATCH
        )
        found = []
        for entry_id, fields in raw:
            values = {dec(k): dec(v) for k, v in fields.items()}
            try:
                product = int(values.get("product", ""))
            except ValueError:
                product = 0
            found.append((dec(entry_id), values.get("code", ""), product))
        return found

    async def send_waiting(self) -> Sent:
        """Order every waiting walk-in, until none is left or pretix cannot be reached."""
        done = Sent([], {})
        while True:
            entries = await self.waiting()
            if not entries or (self._lease is not None and not await self._lease()):
                return done
            for entry_id, code, product in entries:
                try:
                    outcome = await self._order(code, product)
                except PretixUnavailable as exc:
                    done.unavailable = str(exc)
                    return done
                except PretixRefused as exc:
                    # Named by its badge's job id: the code is a credential, kept out of logs and status.
                    attendee = await self.store.get(code)
                    badge = attendee.job_id if attendee is not None else "?"
                    why = f"walk-in {badge}: pretix refused its order ({exc}); it stays on the list without one"
                    await self.store.redis.hset(enc(self.keys.walk_in_failed), enc(code), why.encode())
                    self._report(why)
                    done.refused[code] = why
                else:
                    if outcome:
                        done.ordered.append(outcome)
                        self._report(f"walk-in: pretix order {outcome}")
                await self.store.redis.xdel(enc(self.keys.walk_ins), enc(entry_id))

    async def _order(self, code: str, product: int) -> str:
        """The walk-in's order code ("" when there is nothing to order: gone from the list, or cancelled)."""
        attendee = await self.store.get(code)
        if attendee is None or attendee.status != "valid":
            return ""
        if product not in self.products:
            raise PretixRefused(
                f"product {product} is not one this sync offers for walk-ins (--walk-in-product): not sent"
            )
        made = await self.client.position_by_secret(code)  # made before, its answer lost
        if made is None:
            body = await self._body(attendee, product)
            await self.client.create_order(body, simulate=True)
            order = await self.client.create_order(body, simulate=False, key=f"badge-agent-walk-in-{code}")
            made = _position_of(order, code)
        await self.writer.write([admitted(made, self.products)])
        await self._checked_in_if_printed(code, made)
        await self.store.redis.hdel(enc(self.keys.walk_in_failed), enc(code))
        return made.order

    async def _checked_in_if_printed(self, code: str, position: Position) -> None:
        """A badge printed before its order existed was no pretix ticket's then, so the outbox never got it: told
        now, as the outbox tells a first badge (the job id as the redeem's nonce, the print's id in the print log),
        so one printed while this runs and also sent by the outbox is still one check-in and one log."""
        found = await self.store.found(code)
        if self.list_id is None or found is None or found[1].state != "printed":
            return
        attendee, badge = found
        epoch = await self.store.redis.hget(enc(self.keys.venue_keys.job(attendee.job_id)), "epoch")
        printed_at = datetime.fromtimestamp(badge.printed_ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        await send_print(
            self.client,
            self.list_id,
            PrintedBadge(
                job_id=attendee.job_id,
                print_id=f"{attendee.job_id}#{dec(epoch) if epoch else '1'}",
                code=code,
                position_id=position.id,
                first=True,
                printed_at=printed_at,
                printer=badge.printer,
                location=badge.location,
            ),
        )

    async def _body(self, attendee: Attendee, product: int) -> dict[str, Any]:
        """The order: the walk-in's ticket of ``product``, paid as the sync is told, in test mode if the event is."""
        if self._testmode is None:
            self._testmode = await self.client.testmode()
        position: dict[str, Any] = {
            "positionid": 1,
            "item": product,
            "secret": attendee.code,  # the ticket is the walk-in: the next read of the list finds the same code
            "attendee_name": attendee.shown_name,
            "company": attendee.shown_company or None,
        }
        # The badge's job id names it (the code is a credential: it stays the ticket's secret only).
        body: dict[str, Any] = {
            "email": attendee.email or None,
            "locale": "en",
            "status": "p",
            "testmode": self._testmode,
            "send_email": False,
            "comment": f"Walk-in added at the badge desk (badge {attendee.job_id})",
            "api_meta": {"badge_agent_job": attendee.job_id},
            "positions": [position],
        }
        if self.payment == "free":
            position["price"] = "0.00"
            body["payment_provider"] = "free"
        else:
            body["payment_provider"] = MANUAL
        return body

    async def run(self, stop: asyncio.Event, poll: float = 1.0) -> None:
        """Order waiting walk-ins until ``stop``: a look every ``poll`` seconds; pretix away is said once."""
        away = False
        while not stop.is_set():
            done = await self.send_waiting()
            if done.unavailable and not away:
                left = int(await self.store.redis.xlen(enc(self.keys.walk_ins)))
                self._report(f"pretix unreachable, {left} walk-in order(s) wait: {done.unavailable}")
            away = bool(done.unavailable)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=max(poll, 2.0) if away else poll)


def _position_of(order: Order, code: str) -> Position:
    for position in order.positions:
        if position.secret == code:
            return position
    raise PretixRefused(f"pretix made order {order.code} without the walk-in's ticket: look at it in pretix")


async def walk_in_status(redis: Redis, venue: str) -> dict[str, Any] | None:
    """Walk-ins waiting for their pretix order, and why pretix refused those it refused (each naming the badge's
    job id, never the code); None when there are none."""
    k = PretixKeys(venue)
    waiting = int(await redis.xlen(enc(k.walk_ins)))
    refused = sorted(dec(w) for w in await redis.hvals(enc(k.walk_in_failed)))
    if not waiting and not refused:
        return None
    return {"waiting": waiting, "refused": refused}
