"""pretix: the first read of a check-in list of 5,000 tickets, a change after it, a check-in; pretix's time beside ours.

Run: .venv/bin/python -m bench.pretix_sync [--positions N] [--repeats R] [--checkins C]
Prints a table and writes bench/results/pretix_sync.json.

A real pretix (tests/pretix: the cached install, a copy of the migrated database, ``runserver`` on loopback, debug
off as in production), seeded and then filled through pretix's own models to N tickets of one order each (a few
minutes; not timed). Per repeat:

* a first read: ``ListChanges.read()`` from nothing (the newest orders for the mark, every page of the check-in
  list's positions, the orders that are not paid; 50 a page), in all and split into the time spent waiting for
  pretix's answers (``PretixClient.waited``: request sent -> answer read) and ours (decoding, records, the rest).
  Target <= 60 s in all.
* a change: one attendee renamed in pretix, then one ``read()`` of the changes: with ``--follow`` a change is seen
  within the interval (5 s by default) plus this. Target <= 10 s together.
* a check-in: ``redeem`` with a nonce, one request; its time is what a confirmed print adds before pretix shows the
  check-in. Target <= 5 s.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import bench_main, fmt, fmt_spread, spread, table, verdict
from pretix_sync.changes import ListChanges
from pretix_sync.client import PretixClient
from tests.pretix.install import PRETIX_VERSION, ensure_installed
from tests.pretix.server import PretixServer

FOLLOW_INTERVAL = 5.0


async def run(positions: int, repeats: int, checkins: int) -> dict[str, Any]:
    install = ensure_installed()
    with tempfile.TemporaryDirectory(prefix="bench-pretix-") as folder:
        server = PretixServer(install, Path(folder), debug=False)
        seed = server.run_data("seed")
        filled = time.perf_counter()
        missing = positions - len(seed["positions"])
        while missing > 0:
            chunk = min(missing, 1000)
            server.run_data("bulk", str(chunk))
            missing -= chunk
        filled = time.perf_counter() - filled
        server.start()
        try:
            return await measure(server, seed, positions, repeats, checkins, filled)
        finally:
            server.close()


async def measure(
    server: PretixServer, seed: dict[str, Any], positions: int, repeats: int, checkins: int, filled: float
) -> dict[str, Any]:
    list_id = seed["checkin_lists"]["Entrance"]
    waited_for_pretix: list[float] = []
    ours: list[float] = []
    change: list[float] = []
    read_records = 0
    async with PretixClient(server.url, seed["organizer"], seed["event"], seed["token"]) as client:
        for n in range(repeats):
            changes = ListChanges(client, list_id)
            waited = client.waited
            started = time.perf_counter()
            read_records = len((await changes.read()).records)
            ours.append(time.perf_counter() - started)
            waited_for_pretix.append(client.waited - waited)
            renamed = seed["positions"][0]
            server.run_data("rename", str(renamed["id"]), f"Renamed {n}")
            started = time.perf_counter()
            batch = await changes.read()
            change.append(time.perf_counter() - started)
            if [r.name for r in batch.records] != [f"Renamed {n}"]:
                raise RuntimeError(f"the change read brought {len(batch.records)} records, not the renamed one")
        redeem: list[float] = []
        for n, position in zip(range(checkins), seed["positions"][:checkins], strict=False):
            started = time.perf_counter()
            result = await client.redeem(position["secret"], [list_id], f"bench-{n}")
            redeem.append(time.perf_counter() - started)
            if result.status != "ok":
                raise RuntimeError(f"check-in refused: {result.reason}")
    return {
        "pretix": PRETIX_VERSION,
        "positions": positions,
        "records": read_records,
        "fill_seconds": filled,
        "pretix_waited": spread(waited_for_pretix),
        "first_read": spread(ours),
        "ours_only": spread([o - a for o, a in zip(ours, waited_for_pretix, strict=True)]),
        "change_read": spread(change),
        "follow_interval": FOLLOW_INTERVAL,
        "redeem": spread(redeem),
    }


def report(res: dict[str, Any]) -> str:
    first_ok = res["first_read"]["median"] <= 60
    change_ok = FOLLOW_INTERVAL + res["change_read"]["median"] <= 10
    redeem_ok = res["redeem"]["median"] <= 5
    rows = [
        [
            f"first read of {res['positions']} tickets, in all",
            fmt_spread(res["first_read"], unit=" s"),
            f"<= 60 s: {verdict(first_ok)}",
        ],
        ["  of it: waiting for pretix's answers", fmt_spread(res["pretix_waited"], unit=" s"), ""],
        ["  of it: ours (decoding, records, the rest)", fmt_spread(res["ours_only"], unit=" s"), ""],
        [
            "a change: read after a rename",
            fmt_spread(res["change_read"], unit=" s"),
            f"+ {fmt(res['follow_interval'], 0)} s interval <= 10 s: {verdict(change_ok)}",
        ],
        ["a check-in (redeem, one request)", fmt_spread(res["redeem"], 3, " s"), f"<= 5 s: {verdict(redeem_ok)}"],
    ]
    title = f"pretix {res['pretix']} on loopback, {res['records']} records read"
    head = table(
        f"{title} (filling it took {res['fill_seconds']:.0f} s)",
        "lower is better; min / median / max over the repeats",
        ["what", "time", "target"],
        rows,
    )
    per_ticket = res["first_read"]["median"] / res["positions"] * 1000
    return head + f"\n(first read per ticket, median: {per_ticket:.2f} ms)"


if __name__ == "__main__":
    bench_main(
        "pretix_sync",
        __doc__,
        run,
        report,
        [
            ("--positions", 5000, "tickets in the event"),
            ("--repeats", 3, "first reads (each from nothing)"),
            ("--checkins", 5, "check-ins timed"),
        ],
    )
