"""The rehearsal venue: 4 printers in 2 zones, 2,000 attendees, kiosks checking them in, one printer run out of
labels. On a phone the board shows the arrival curve, each zone's wait and the printer in red within seconds."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from attendees.importer import Importer
from attendees.store import AttendeeStore
from cli.redis_server import RedisServer
from drivers.sim import SimControl
from protocol.keys import Keys
from tests.support.agents import running_agent
from tests.support.attendee_files import rows
from tests.support.browser import start_chromium
from tests.support.intake import start_desk
from tests.support.processes import board_process
from tests.support.waiting import wait_until

ZONES = "zones:\n  hall-a: {printers: [a1, a2], tokens: [kiosk-1]}\n  hall-b: {printers: [b1, b2], tokens: [kiosk-2]}\n"
PEOPLE = 2000


@pytest.mark.browser
async def test_the_rehearsal_venue_on_a_phone(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    people: list[dict[str, object]] = [{"attendee_id": f"code-{n}", "name": f"Guest {n}"} for n in range(PEOPLE)]
    await Importer(AttendeeStore(redis, venue)).load(iter(rows(people)))
    desk, client = await start_desk(tmp_path, venue, redis_server.url, ZONES)
    driver = await asyncio.to_thread(start_chromium, tmp_path / "chromium-profile")
    try:
        from selenium.webdriver.support.ui import WebDriverWait

        async with (
            running_agent(tmp_path, venue, redis_server.url, "a1", print_time=0.05),
            running_agent(tmp_path, venue, redis_server.url, "a2", print_time=0.05),
            running_agent(tmp_path, venue, redis_server.url, "b1", print_time=0.05),
            running_agent(tmp_path, venue, redis_server.url, "b2", print_time=0.05),
        ):
            await wait_until(lambda: _beating(redis, venue, 4), 15)
            # Kiosks of both halls check attendees in, five at a time each (a kiosk token's cap of badges not yet
            # printed), as people come.
            for start in range(0, 60, 10):
                for n in range(start, start + 10):
                    kiosk = "kiosk" if n % 2 else "kiosk-2"
                    resp = await desk.client.post(f"/v1/attendees/code-{n}/badge", headers=desk.auth(kiosk))
                    if resp.status == 429:  # the intake prunes a token's printed badges from its count once a second
                        await asyncio.sleep(1.1)
                        resp = await desk.client.post(f"/v1/attendees/code-{n}/badge", headers=desk.auth(kiosk))
                    assert resp.status == 201, await resp.text()
                await wait_until(lambda done=start + 10: _printed(redis, venue, done), 30)
            SimControl(tmp_path / "b2.control.json").set_fault("media_out")

            async def b2_out() -> bool:
                raw = await redis.get(Keys(venue).health("b2"))
                return raw is not None and json.loads(raw)["state"] in ("paused", "device_down")

            with board_process(redis_server.url, venue) as url:
                await asyncio.to_thread(driver.get, url)
                await wait_until(b2_out, 15)
                said = time.monotonic()
                shown: dict[str, Any] = await asyncio.to_thread(
                    WebDriverWait(driver, 10).until,
                    lambda d: d.execute_script(
                        """
                        const b2 = document.querySelector('#faults li[data-printer="b2"]');
                        if (!b2) return null;
                        return {colour: getComputedStyle(b2).color, text: b2.textContent,
                          chart: Number(document.querySelector("#chart svg").dataset.total),
                          zones: [...document.querySelectorAll("#zones tbody tr")].map((tr) => tr.dataset.zone),
                          expected: document.getElementById("day-expected").textContent,
                          arrived: document.getElementById("day-arrived").textContent};
                        """
                    ),
                )
                # In red within seconds of the agent saying so: the board's poll and its next push.
                assert time.monotonic() - said <= 6
                await asyncio.to_thread(driver.save_screenshot, str(tmp_path / "rehearsal.png"))
    finally:
        await asyncio.to_thread(driver.quit)
        await desk.client.close()
        await client.aclose()
    assert shown["colour"] == "rgb(197, 34, 31)" and "b2" in shown["text"] and "waiting" in shown["text"]
    assert shown["chart"] == 60  # every first badge an arrival on the curve
    assert {"hall-a", "hall-b"} <= set(shown["zones"])
    assert shown["expected"] == str(PEOPLE) and shown["arrived"] == "60"


async def _beating(redis: Redis, venue: str, n: int) -> bool:
    return int(await redis.zcard(Keys(venue).hb)) >= n


async def _printed(redis: Redis, venue: str, n: int) -> bool:
    return int(await redis.hget(Keys(venue).stats, "printed") or 0) >= n
