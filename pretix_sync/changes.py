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

A ticket cancelled on its own inside a paid order is in neither part of the first read (the check-in list no longer
admits it, its order is paid): a later read sees it when its order changes, but one cancelled while no sync ran
would stay valid in the venue's list for good. So the first read also looks at the tickets the list already holds
from pretix (``held``: their job ids and positions) that it did not meet: each one's order is read (one request an
order; more than :data:`LOOKUP_AT_MOST` of them, one listing of the paid orders instead), and a ticket cancelled
there becomes a cancelled record.

The records go to the caller in batches as the pages arrive (:meth:`ListChanges.read_into`), so a read of a hundred
thousand tickets holds one batch of them, not all; the mark moves only once a whole read was handed on.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Container, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from pretix_sync.api_types import CheckinList, Order, Position, i18n_text
from pretix_sync.client import PretixClient
from pretix_sync.errors import PretixNotFound, ReadStopped
from pretix_sync.records import AttendeeRecord, admitted, not_admitted

#: More changed orders than this in one read: one listing of the whole check-in list beats a request per order.
BULK_AFTER = 25

#: Records handed to the caller at a time (the list's writer writes as many per round trip).
BATCH = 500

#: Where a read's records go, a batch at a time.
Write = Callable[[list[AttendeeRecord]], Awaitable[None]]

#: The tickets the venue's list holds from pretix: job id -> pretix position id.
Held = Callable[[], Awaitable[Mapping[str, int]]]

#: Orders of held tickets the first read did not meet, read one request each up to this many; more, and one
#: listing of the paid orders costs less.
LOOKUP_AT_MOST = 50


@dataclass
class Batch:
    """One read: what it brought, and what it cost. ``records`` holds the records only for :meth:`ListChanges.read`;
    a read into a writer counts them."""

    records: list[AttendeeRecord] = field(default_factory=list)
    orders: int = 0
    requests_seconds: float = 0.0
    valid: int = 0
    cancelled: int = 0
    needs_attention: int = 0
    #: records handed on, all batches together
    read: int = 0


class _Out:
    """A read's records on their way to the caller: counted, handed on by :data:`BATCH`, and the read stopped between
    two batches once ``stop`` is set."""

    def __init__(self, write: Write, batch: Batch, stop: asyncio.Event | None) -> None:
        self._write = write
        self._batch = batch
        self._stop = stop
        self._held: list[AttendeeRecord] = []

    async def add(self, record: AttendeeRecord) -> None:
        b = self._batch
        b.read += 1
        if record.status == "valid":
            b.valid += 1
            b.needs_attention += record.needs_attention
        elif record.status == "cancelled":
            b.cancelled += 1
        self._held.append(record)
        if len(self._held) >= BATCH:
            await self.flush()

    async def flush(self) -> None:
        if self._stop is not None and self._stop.is_set():
            raise ReadStopped("stopped between two batches of records")
        if self._held:
            held, self._held = self._held, []
            await self._write(held)


def _parse(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp).astimezone(UTC)


def _stamp(moment: datetime) -> str:
    # "Z", not "+00:00": a "+" in a query string reads as a space on the way.
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class ListChanges:
    """Reads one check-in list's changes; the first read is everything (``watermark`` None)."""

    def __init__(
        self,
        client: PretixClient,
        list_id: int,
        overlap: float = 10.0,
        questions: dict[str, str] | None = None,
        held: Held | None = None,
    ) -> None:
        self.client = client
        self.held = held
        self.list_id = list_id
        self.questions = questions or {}  # field -> pretix question identifier, answers copied into fields
        self.overlap = timedelta(seconds=overlap)
        self.watermark: datetime | None = None
        self._read_at: dict[str, datetime] = {}  # order code -> last_modified already read, within the overlap

    async def read(self) -> Batch:
        """One read, its records kept in ``records`` (the commands use :meth:`read_into`, which holds a batch)."""
        kept: list[AttendeeRecord] = []

        async def keep(records: list[AttendeeRecord]) -> None:
            kept.extend(records)

        batch = await self.read_into(keep)
        batch.records = kept
        return batch

    async def read_into(self, write: Write, stop: asyncio.Event | None = None) -> Batch:
        """One read, its records handed to ``write`` by :data:`BATCH` as they arrive. ``stop`` set: the read ends
        with :class:`ReadStopped` before its next batch, the mark where it was (the next read starts over)."""
        started = time.monotonic()
        batch = Batch()
        out = _Out(write, batch, stop)
        checkin_list = await self.client.checkin_list(self.list_id)
        items = await self.client.items()
        products = {i.id: i18n_text(i.name) for i in items}
        admission = {i.id for i in items if i.admission}

        if self.watermark is None:
            batch.orders = await self._first(checkin_list, admission, products, out)
        else:
            since = _stamp(self.watermark - self.overlap)
            changed = [o async for o in self.client.orders(modified_since=since) if not self._already_read(o)]
            batch.orders = len(changed)
            if changed:
                allowed = await self._admitted(changed, whole_list=len(changed) > BULK_AFTER)
                for record in self._records(changed, allowed, checkin_list, admission, products):
                    await out.add(record)
                await out.flush()
                self._advance(changed)
        await out.flush()
        batch.requests_seconds = time.monotonic() - started
        return batch

    async def _first(self, checkin_list: CheckinList, admission: set[int], products: dict[int, str], out: _Out) -> int:
        """Everything: the list's tickets in one listing, and the tickets of orders that are not paid (cancelled,
        expired, pending) for the records that say so. The mark is taken first, so what changes during the
        listing is read again next time; it is kept only once every record was handed on. A ticket cancelled on
        its own in a paid order is in neither; the list's held tickets the read did not meet are looked up for it
        (:meth:`_cancelled_alone`)."""
        # The newest orders, read before the listing: the mark, and the orders the next read need not read again
        # (the listing shows them as they were then or later; a later change moves their last_modified).
        newest: list[Order] = []
        async for order in self.client.orders(newest_first=True):
            if newest and _parse(order.last_modified) < _parse(newest[0].last_modified) - self.overlap:
                break
            newest.append(order)
        # Only the ids of what the list admits are kept (for the unpaid orders below); each ticket goes on at once.
        allowed: set[int] = set()
        orders: set[str] = set()
        async for p in self.client.checkin_list_positions(self.list_id):
            allowed.add(p.id)
            orders.add(p.order)
            if self._on_list(p, checkin_list, admission):
                await out.add(admitted(p, products, self.questions))
        met = set(allowed)
        for status in ("c", "e", "n"):
            async for order in self.client.orders(status=status):
                orders.add(order.code)
                met.update(p.id for p in order.positions)
                for record in self._refused(order, allowed, checkin_list, admission, products):
                    await out.add(record)
        if self.held is not None:
            unmet = {job: position for job, position in (await self.held()).items() if position not in met}
            unmet_ids = set(unmet.values())
            async for order in self._orders_of(unmet):
                orders.add(order.code)
                for position in order.positions:
                    if (
                        position.id in unmet_ids
                        and position.canceled
                        and self._on_list(position, checkin_list, admission)
                    ):
                        await out.add(not_admitted(position, order, products))
        await out.flush()
        if newest:
            self.watermark = _parse(newest[0].last_modified)
            self._read_at = {o.code: _parse(o.last_modified) for o in newest}
        return len(orders)  # the orders read: those of the list's tickets and the unpaid ones

    async def _orders_of(self, unmet: Mapping[str, int]) -> AsyncIterator[Order]:
        """The orders of tickets the list holds that the first read did not meet (see :meth:`_first`): each read
        on its own, or, more than :data:`LOOKUP_AT_MOST` of them, the paid orders in one listing. A job id is
        pretix's ``{order code}-{position id}``; an order pretix no longer has (another event's, deleted) is
        skipped."""
        codes: set[str] = set()
        for job, position in unmet.items():
            code, _, tail = job.rpartition("-")
            if not code or tail != str(position):
                try:  # a job id of another shape (an attendee imported before pretix): the ticket names its order
                    code = (await self.client.position(position)).order
                except PretixNotFound:
                    continue
            codes.add(code)
        if len(codes) > LOOKUP_AT_MOST:
            async for order in self.client.orders(status="p"):
                if order.code in codes:
                    yield order
            return
        for code in sorted(codes):
            try:
                yield await self.client.order(code)
            except PretixNotFound:
                continue

    def _records(
        self,
        orders: list[Order],
        allowed: dict[int, Position],
        checkin_list: CheckinList,
        admission: set[int],
        products: dict[int, str],
    ) -> Iterator[AttendeeRecord]:
        for order in orders:
            for position in order.positions:
                if not self._on_list(position, checkin_list, admission):
                    continue
                if position.id in allowed:
                    yield admitted(allowed[position.id], products, self.questions)
                else:
                    yield not_admitted(position, order, products)

    def _refused(
        self,
        order: Order,
        allowed: Container[int],
        checkin_list: CheckinList,
        admission: set[int],
        products: dict[int, str],
    ) -> Iterator[AttendeeRecord]:
        """The order's tickets on this list that the list does not admit, as cancelled records."""
        for position in order.positions:
            if position.id not in allowed and self._on_list(position, checkin_list, admission):
                yield not_admitted(position, order, products)

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
        if whole_list:  # only these orders' positions are kept, not the whole list's
            codes = {o.code for o in orders}
            return {p.id: p async for p in self.client.checkin_list_positions(self.list_id) if p.order in codes}
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
