"""A fake pretix that misbehaves: what a broken or hostile server at the ``--pretix`` address can do to the sync.

Not a stand-in for pretix (the tests of what pretix answers run against the real one, tests/support/pretix_server.py):
a real pretix cannot be made to loop its pages, announce a wrong count or stall half-way, and those are what the
sync must survive. It answers the requests of a first read of check-in list 1 of ``org/ev`` (the list, the
products, the newest order, the list's positions, the unpaid orders) and misbehaves in the positions listing as its
:class:`Scenario` says. It runs in a thread with its own event loop, so a test can run the sync in this process or
as a command in another.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from aiohttp import web

EVENT = "/api/v1/organizers/org/events/ev"
LIST_ID = 1
PAGE = 50


@dataclass
class Scenario:
    """How the positions listing behaves.

    ``count``: what its pages announce. ``positions``: how many there are (None: a new page, with new positions,
    every time). ``loop``: ``same`` links every page to itself; ``back`` links page 3 back to page 2. ``stall_at``:
    the page whose answer never comes (its headers neither) until the server stops. ``pad``: bytes of padding in
    every page (an answer too large to take).
    """

    count: int
    positions: int | None = None
    loop: str | None = None
    stall_at: int | None = None
    pad: int = 0


@dataclass
class Served:
    """What the fake served, read by the test (from another thread: plain counters and an event)."""

    pages: int = 0
    stalled: threading.Event = field(default_factory=threading.Event)


def position(n: int) -> dict[str, object]:
    """A check-in list's position as pretix sends it, with the fields pretix sends that the sync does not use (so a
    page weighs what a real one does, about 1 KB a ticket)."""
    return {
        "id": n,
        "order": f"O{n:07d}",
        "positionid": 1,
        "item": 1,
        "variation": None,
        "price": "120.00",
        "attendee_name": f"Attendee Number {n}",
        "attendee_name_parts": {"_scheme": "given_family", "given_name": "Attendee", "family_name": f"Number {n}"},
        "company": "Example Company Ltd",
        "street": "Example Street 1",
        "zipcode": "12345",
        "city": "Example City",
        "country": "DE",
        "state": None,
        "attendee_email": f"attendee{n}@example.org",
        "voucher": None,
        "tax_rate": "19.00",
        "tax_value": "19.16",
        "secret": f"{n:032d}",
        "addon_to": None,
        "subevent": None,
        "checkins": [],
        "downloads": [{"output": "pdf", "url": f"https://pretix.example.org/api/v1/tickets/{n}/pdf/"}],
        "answers": [],
        "tax_rule": 1,
        "pseudonymization_id": f"P{n:09d}",
        "seat": None,
        "canceled": False,
        "valid_from": None,
        "valid_until": None,
        "blocked": None,
        "require_attention": False,
        "order__status": "p",
        "print_logs": [],
    }


def page(count: int, next_url: str | None, results: list[dict[str, object]], pad: int = 0) -> web.Response:
    body = {"count": count, "next": next_url, "previous": None, "results": results}
    if pad:
        body["padding"] = "x" * pad
    return web.json_response(body)


class HostilePretix:
    """The fake's application: one :class:`Scenario`, what it served in :class:`Served`."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.served = Served()
        self.release = asyncio.Event()  # set at the end: a stalled answer gives up

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get(f"{EVENT}/checkinlists/{LIST_ID}/", self.checkin_list)
        app.router.add_get(f"{EVENT}/items/", self.items)
        app.router.add_get(f"{EVENT}/orders/", self.orders)
        app.router.add_get(f"{EVENT}/checkinlists/{LIST_ID}/positions/", self.positions)
        return app

    async def checkin_list(self, request: web.Request) -> web.Response:
        return web.json_response({"id": LIST_ID, "name": "Entrance", "all_products": True, "limit_products": []})

    async def items(self, request: web.Request) -> web.Response:
        return page(1, None, [{"id": 1, "name": {"en": "Regular"}, "admission": True}])

    async def orders(self, request: web.Request) -> web.Response:
        if request.query.get("ordering") == "-last_modified":  # the mark: one paid order
            order: dict[str, object] = {
                "code": "O0000000",
                "status": "p",
                "last_modified": "2026-05-01T10:00:00Z",
                "positions": [],
            }
            return page(1, None, [order])
        return page(0, None, [])  # no unpaid orders

    async def positions(self, request: web.Request) -> web.StreamResponse:
        s = self.scenario
        number = int(request.query.get("page", "1"))
        self.served.pages += 1
        if number == s.stall_at:
            self.served.stalled.set()
            await self.release.wait()
            raise web.HTTPServiceUnavailable
        first = (number - 1) * PAGE
        last = first + PAGE if s.positions is None else min(first + PAGE, s.positions)
        listing = f"{request.scheme}://{request.host}{request.path}"
        if s.loop == "same":
            next_url: str | None = str(request.url)
        elif s.loop == "back" and number == 3:
            next_url = f"{listing}?page=2&page_size={PAGE}"
        elif s.positions is None or last < s.positions:
            next_url = f"{listing}?page={number + 1}&page_size={PAGE}"
        else:
            next_url = None
        return page(s.count, next_url, [position(n) for n in range(first + 1, last + 1)], s.pad)


@contextmanager
def hostile_pretix(scenario: Scenario) -> Iterator[tuple[str, Served]]:
    """The fake on a loopback port, in a thread of its own: its address (for ``--pretix``) and what it served."""
    fake = HostilePretix(scenario)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="hostile-pretix", daemon=True)
    thread.start()
    runner = web.AppRunner(fake.app(), access_log=None)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    async def start() -> None:
        await runner.setup()
        await web.SockSite(runner, listener).start()

    async def stop() -> None:
        fake.release.set()
        await runner.cleanup()

    asyncio.run_coroutine_threadsafe(start(), loop).result(10)
    try:
        yield f"http://127.0.0.1:{port}", fake.served
    finally:
        asyncio.run_coroutine_threadsafe(stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]
