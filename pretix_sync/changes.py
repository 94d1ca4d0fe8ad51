"""What changed in a pretix event for one check-in list since the last read, as attendee records.

The first read is one listing of the check-in list (the tickets it admits) and the orders that are not paid (their
tickets, as cancelled records); every later read asks only for what changed:

pretix filters *orders* by ``modified_since`` (an order's ``last_modified`` moves when anything in it changes: a
name, a position, its status); its position lists ignore that parameter. So each read asks for the orders changed
since the high-water mark, then asks the check-in list which of their positions it admits (pretix decides: paid or
pending as the list says, its products, not cancelled). A position of a changed order that the list does not admit
becomes a cancelled ticket, with the reason.

The mark is pretix's own ``last_modified`` (pretix's clock, not ours), read again with an overlap: an order saved in
a transaction that committed after a later one would otherwise be missed. Orders already read at the same
``last_modified`` within the overlap are not read twice.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from pretix_sync.api_types import CheckinList, Order, Position, i18n_text
from pretix_sync.client import PretixClient
from pretix_sync.records import AttendeeRecord, admitted, not_admitted

#: More changed orders than this in one read: one listing of the whole check-in list beats a request per order.
BULK_AFTER = 25


@dataclass
class Batch:
    """One read: the records of every position in the orders that changed, and what it cost."""

    records: list[AttendeeRecord] = field(default_factory=list)
    orders: int = 0
    requests_seconds: float = 0.0

    @property
    def valid(self) -> int:
        return sum(r.status == "valid" for r in self.records)

    @property
    def cancelled(self) -> int:
        return sum(r.status == "cancelled" for r in self.records)

    @property
    def needs_attention(self) -> int:
        return sum(r.needs_attention for r in self.records if r.status == "valid")


def _parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp).astimezone(UTC)


def _stamp(moment: datetime) -> str:
    # "Z", not "+00:00": a "+" in a query string reads as a space on the way.
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class ListChanges:
    """Reads one check-in list's changes; the first read is everything (``watermark`` None)."""

    def __init__(
        self, client: PretixClient, list_id: int, overlap: float = 10.0, questions: dict[str, str] | None = None
    ) -> None:
        self.client = client
        self.list_id = list_id
        self.questions = questions or {}  # field -> pretix question identifier, answers copied into fields
        self.overlap = timedelta(seconds=overlap)
        self.watermark: datetime | None = None
        self._read_at: dict[str, datetime] = {}  # order code -> last_modified already read, within the overlap

    async def read(self) -> Batch:
        started = time.monotonic()
        checkin_list = await self.client.checkin_list(self.list_id)
        items = await self.client.items()
        products = {i.id: i18n_text(i.name) for i in items}
        admission = {i.id for i in items if i.admission}

        if self.watermark is None:
            batch = await self._first(checkin_list, admission, products)
        else:
            since = _stamp(self.watermark - self.overlap)
            changed = [o async for o in self.client.orders(modified_since=since) if not self._already_read(o)]
            batch = Batch(orders=len(changed))
            if changed:
                allowed = await self._admitted(changed, whole_list=len(changed) > BULK_AFTER)
                batch.records = self._records(changed, allowed, checkin_list, admission, products)
                self._advance(changed)
        batch.requests_seconds = time.monotonic() - started
        return batch

    async def _first(self, checkin_list: CheckinList, admission: set[int], products: dict[int, str]) -> Batch:
        """Everything: the list's tickets in one listing, and the tickets of orders that are not paid (cancelled,
        expired, pending) for the records that say so. The mark is taken first, so what changes during the
        listing is read again next time. A ticket cancelled on its own in a paid order is not read here (pretix
        lists those only with their order); it is when its order changes."""
        # The newest orders, read before the listing: the mark, and the orders the next read need not read again
        # (the listing shows them as they were then or later; a later change moves their last_modified).
        newest: list[Order] = []
        async for order in self.client.orders(newest_first=True):
            if newest and _parse(order.last_modified) < _parse(newest[0].last_modified) - self.overlap:
                break
            newest.append(order)
        allowed = {p.id: p async for p in self.client.checkin_list_positions(self.list_id)}
        unpaid = [o for status in ("c", "e", "n") async for o in self.client.orders(status=status)]
        records = [
            admitted(p, products, self.questions) for p in allowed.values() if self._on_list(p, checkin_list, admission)
        ]
        records += self._records(unpaid, allowed, checkin_list, admission, products, only_refused=True)
        if newest:
            self.watermark = _parse(newest[0].last_modified)
            self._read_at = {o.code: _parse(o.last_modified) for o in newest}
        orders = {p.order for p in allowed.values()} | {o.code for o in unpaid}
        return Batch(records=records, orders=len(orders))

    def _records(
        self,
        orders: list[Order],
        allowed: dict[int, Position],
        checkin_list: CheckinList,
        admission: set[int],
        products: dict[int, str],
        only_refused: bool = False,
    ) -> list[AttendeeRecord]:
        records = []
        for order in orders:
            for position in order.positions:
                if not self._on_list(position, checkin_list, admission):
                    continue
                if position.id in allowed:
                    if not only_refused:
                        records.append(admitted(allowed[position.id], products, self.questions))
                else:
                    records.append(not_admitted(position, order, products))
        return records

    def _already_read(self, order: Order) -> bool:
        return self._read_at.get(order.code) == _parse(order.last_modified)

    def _advance(self, orders: list[Order]) -> None:
        newest = max(_parse(o.last_modified) for o in orders)
        if self.watermark is None or newest > self.watermark:
            self.watermark = newest
        self._read_at.update((o.code, _parse(o.last_modified)) for o in orders)
        floor = self.watermark - self.overlap
        self._read_at = {code: at for code, at in self._read_at.items() if at >= floor}

    async def _admitted(self, orders: list[Order], whole_list: bool) -> dict[int, Position]:
        """The positions of these orders that the list admits, as pretix answers for its check-in list."""
        if whole_list:
            return {p.id: p async for p in self.client.checkin_list_positions(self.list_id)}
        allowed: dict[int, Position] = {}
        for order in orders:
            async for p in self.client.checkin_list_positions(self.list_id, order=order.code):
                allowed[p.id] = p
        return allowed

    @staticmethod
    def _on_list(position: Position, checkin_list: CheckinList, admission: set[int]) -> bool:
        """Whether a position is this list's business at all: an admission product the list covers, its date.

        A product that admits nobody (a T-shirt add-on) gets no badge; a product the list does not cover is
        another door's, neither valid nor cancelled here.
        """
        if position.item not in admission:
            return False
        if not checkin_list.all_products and position.item not in checkin_list.limit_products:
            return False
        return checkin_list.subevent is None or position.subevent == checkin_list.subevent
