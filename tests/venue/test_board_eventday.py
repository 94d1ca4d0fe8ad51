"""The board as the event day's view, in headless Chromium at a phone's width with the CPU slowed 4x: 50 printers in
10 zones; the page's numbers, read from its DOM, are what was enqueued and printed; the printer out of labels is
first and red. Its screenshots are the docs' (BADGE_DOCS_IMAGES=docs/images keeps them there)."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer
from eventday.counts import zone_waits
from tests.support.browser import start_chromium
from tests.support.eventday import make_rush
from tests.support.processes import board_process


def page_numbers(driver: Any) -> dict[str, Any]:
    """What the page shows, as its DOM holds it."""
    return dict(
        driver.execute_script(
            """
            const rows = (sel) => [...document.querySelectorAll(sel)];
            const field = (tr, f) => tr.querySelector(`[data-field="${f}"]`).textContent;
            return {
              ready: document.body.dataset.ready === "1",
              waiting: Number(document.getElementById("pool").textContent),
              chartTotal: Number(document.querySelector("#chart svg").dataset.total),
              zones: Object.fromEntries(rows("#zones tbody tr").map((tr) => [tr.dataset.zone,
                {waiting: Number(field(tr, "waiting")), wait: field(tr, "wait"),
                 arrived: Number(field(tr, "arrived"))}])),
              printers: Object.fromEntries(rows("#glance tbody tr").map((tr) => [tr.dataset.printer,
                {labels: field(tr, "labels"), perHour: Number(field(tr, "per_hour")),
                 bad: tr.classList.contains("bad")}])),
              faults: rows("#faults li").map((li) => [li.dataset.printer, li.textContent,
                getComputedStyle(li).color]),
              width: [document.documentElement.scrollWidth, window.innerWidth],
            };
            """
        )
    )


@pytest.mark.browser
async def test_the_board_shows_50_printers_in_10_zones_as_enqueued_and_printed(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    rush = await make_rush(redis, venue, morning_min=120)
    expected_waits = {w.zone: w for w in await zone_waits(redis, venue)}
    driver = await asyncio.to_thread(start_chromium, tmp_path / "chromium-profile")
    try:
        from selenium.webdriver.support.ui import WebDriverWait

        # A mid-range phone: the page must be drawn within a second even so (bench/board.py measures it).
        await asyncio.to_thread(driver.execute_cdp_cmd, "Emulation.setCPUThrottlingRate", {"rate": 4})
        with board_process(redis_server.url, venue) as url:
            await asyncio.to_thread(driver.get, url)
            await asyncio.to_thread(
                WebDriverWait(driver, 20).until, lambda d: d.execute_script("return document.body.dataset.ready")
            )
            shown = await asyncio.to_thread(page_numbers, driver)
            await asyncio.to_thread(driver.save_screenshot, str(tmp_path / "board-phone.png"))
            await asyncio.to_thread(driver.execute_script, "document.getElementById('chart').scrollIntoView()")
            await asyncio.to_thread(driver.save_screenshot, str(tmp_path / "board-phone-zones.png"))
    finally:
        await asyncio.to_thread(driver.quit)
    assert shown["ready"] and shown["width"][0] <= shown["width"][1], shown["width"]
    assert shown["waiting"] == sum(rush.waiting.values())  # the pool and the printers' queues
    assert shown["chartTotal"] == sum(rush.printed.values()) + sum(rush.earlier.values())
    for zone in rush.zones:
        row = shown["zones"][zone]
        arrived = rush.printed[zone] + rush.earlier[zone]
        assert (row["waiting"], row["arrived"]) == (rush.waiting[zone], arrived), (zone, row)
        wait = expected_waits[zone].wait_minutes
        assert wait is not None
        assert row["wait"] == ("< 1 min" if wait < 1 else f"{round(wait)} min"), (zone, row, wait)
    assert len(shown["printers"]) == 50
    printed_by = {name: 0 for names in rush.zones.values() for name in names}
    for z, names in enumerate(rush.zones.values()):
        for n in range(z + 1):
            printed_by[names[n % len(names)]] += 1
    assert {name: p["perHour"] for name, p in shown["printers"].items()} == printed_by
    rolled, labels = rush.rolled
    assert shown["printers"][rolled]["labels"] == f"≈ {labels - printed_by[rolled]}"
    # The printer out of labels: the first (only) fault, in red, with how long it has waited.
    ((name, text, colour),) = shown["faults"]
    assert name == rush.out_of_labels and "out of labels" in text and "waiting" in text
    assert colour == "rgb(197, 34, 31)" and shown["printers"][name]["bad"]
    docs = os.environ.get("BADGE_DOCS_IMAGES")
    if docs:
        for png in ("board-phone.png", "board-phone-zones.png"):
            shutil.copy(tmp_path / png, Path(docs) / png)
