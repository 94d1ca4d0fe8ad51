"""What changed in a pretix event for one check-in list since the last read, as attendee records.

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

    def __init__(self, client: PretixClient, list_id: int, overlap: float = 10.0) -> None:
        self.client = client
        self.list_id = list_id
        self.overlap = timedelta(seconds=overlap)
        self.watermark: datetime | None = None
        self._read_at: dict[str, datetime] = {}  # order code -> last_modified already read, within the overlap

    async def read(self) -> Batch:
        started = time.monotonic()
        checkin_list = await self.client.checkin_list(self.list_id)
        items = await self.client.items()
        products = {i.id: i18n_text(i.name) for i in items}
        admission = {i.id for i in items if i.admission}

        since = None if self.watermark is None else _stamp(self.watermark - self.overlap)
        changed = [o async for o in self.client.orders(modified_since=since) if not self._already_read(o)]
        batch = Batch(orders=len(changed))
        if changed:
            allowed = await self._admitted(changed, whole_list=since is None or len(changed) > BULK_AFTER)
            for order in changed:
                for position in order.positions:
                    if not self._on_list(position, checkin_list, admission):
                        continue
                    if position.id in allowed:
                        batch.records.append(admitted(allowed[position.id], products))
                    else:
                        batch.records.append(not_admitted(position, order, products))
            self._advance(changed)
        batch.requests_seconds = time.monotonic() - started
        return batch

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
