"""The test pretix server itself (server.py, runtime/): its database serves reads as a production pretix's does."""

from __future__ import annotations

import contextlib
import sqlite3

from pretix_sync.client import PretixClient
from tests.support.pretix_server import Pretix
from tests.support.waiting import wait_until

#: How pretix's check-in list listing finds each ticket's last check-in (a subquery a ticket, in every page).
LAST_CHECKIN = (
    "EXPLAIN QUERY PLAN SELECT MAX(datetime) FROM pretixbase_checkin"
    " WHERE successful AND list_id IN (?) AND position_id = ?"
)


def checkins_found_by_position(pretix: Pretix) -> bool:
    """Whether SQLite looks a ticket's check-ins up by its position (a few rows), not by its list (all of them)."""
    uri = f"{pretix.server.db.as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=30)) as connection:
        plan = " ".join(row[3] for row in connection.execute(LAST_CHECKIN, (pretix.entrance, 1)))
    return "pretixbase_checkin_position_id" in plan


async def test_checkins_are_looked_up_by_ticket_once_there_are_some(pretix: Pretix) -> None:
    """Without the planner's statistics SQLite reads every check-in of the list for every ticket listed: the check-in
    list's pages grow slower with each check-in (most of a second a page at 1,000). The server keeps the statistics
    current, as PostgreSQL does for a production pretix, so check-ins made through the API soon change the plan.
    (Three tickets: with one check-in, list and position are equally selective and SQLite may take either.)"""
    async with PretixClient(pretix.url, pretix.organizer, pretix.event, pretix.token) as client:
        for n in range(3):
            placed = pretix.data("order", f"Planner Statistics {n}")
            assert (await client.redeem(placed["secret"], [pretix.entrance], f"planner-{n}")).status == "ok"
    await wait_until(lambda: checkins_found_by_position(pretix), timeout=30, every=0.2)
