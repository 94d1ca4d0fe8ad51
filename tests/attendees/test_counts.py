"""Expected, checked in and per ticket type: the same numbers in ``status``, its JSON, the board (its snapshot and the
page in headless Chromium) and the intake's /metrics."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from redis.asyncio import Redis

from attendees.store import AttendeeStore
from board.server import Board
from cli.redis_server import RedisServer
from protocol.store import Store
from tests.support.attendee_files import listed
from tests.support.browser import start_chromium
from tests.support.intake import Desk
from tests.support.metrics import samples
from tests.support.processes import board_process, cli

EXPECTED = {
    "expected": 2,
    "checked_in": 1,
    "cancelled": 1,
    "by_ticket_type": {"Speaker": {"expected": 1, "checked_in": 1}, "Visitor": {"expected": 1, "checked_in": 0}},
}


async def print_one(redis: Redis, venue: str) -> None:
    """Renée's badge printed (through the protocol's own steps), Lee's queued, Dimitris's ticket cancelled."""
    store = await listed(redis, venue)
    await store.badge("secret-renee", "kiosk")
    venue_store = Store(redis, venue)
    taken = await venue_store.take("hall-a-1")
    assert taken is not None
    begun = await venue_store.begin("hall-a-1", "Hall A", taken.job_id)
    await venue_store.confirm("hall-a-1", "Hall A", taken.job_id, begun.epoch)
    await store.badge("secret-lee", "kiosk")
    await store.set_status("secret-dimitris", "cancelled", "desk")


@pytest.mark.browser
async def test_counts_agree_in_status_board_and_metrics(
    tmp_path: Path, desk: Desk, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    await print_one(redis, venue)
    # Read-only first (status, the board), then folded by /metrics, then read-only again: the same numbers.
    status = json.loads(cli(redis_server, venue, "status", "--json").stdout)
    assert status["attendees"] == EXPECTED
    text = cli(redis_server, venue, "status").stdout
    assert "attendees: checked in 1 of 2 expected · Speaker 1/1 · Visitor 0/1 · tickets cancelled 1" in text
    # A cancelled ticket is not a cancelled job: each count is named for what it counts.
    assert "jobs cancelled 0" in text and " cancelled 0" not in text.replace("jobs cancelled 0", "")
    assert (await Board(redis, venue).poll())["attendees"] == EXPECTED
    m = samples(await (await desk.client.get("/metrics")).text())
    assert m[("badge_attendees", (("what", "expected"),))] == 2
    assert m[("badge_attendees", (("what", "checked_in"),))] == 1
    assert m[("badge_attendees_by_ticket_type", (("ticket_type", "Speaker"), ("what", "checked_in")))] == 1
    assert m[("badge_attendees_by_ticket_type", (("ticket_type", "Visitor"), ("what", "expected")))] == 1
    assert (await AttendeeStore(redis, venue).counts(fold=False)).as_dict() == EXPECTED
    assert json.loads(cli(redis_server, venue, "status", "--json").stdout)["attendees"] == EXPECTED

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = await asyncio.to_thread(start_chromium, tmp_path / "chromium-profile")
    try:
        with board_process(redis_server.url, venue) as url:
            await asyncio.to_thread(driver.get, url)

            def shown(d: object) -> bool:
                return bool(driver.find_element(By.ID, "checked-in").text == "1")

            await asyncio.to_thread(WebDriverWait(driver, 20).until, shown)
            assert await asyncio.to_thread(lambda: driver.find_element(By.ID, "expected").text) == "2"
            types = await asyncio.to_thread(lambda: driver.find_element(By.ID, "by-type").text)
            assert "Speaker 1/1" in types and "Visitor 0/1" in types
            for box, words in (("tickets-cancelled-box", "1 tickets cancelled"), ("cancelled-box", "0 jobs cancelled")):
                shown_text = await asyncio.to_thread(lambda b=box: driver.find_element(By.ID, b).text)
                assert " ".join(shown_text.split()) == words, (box, shown_text)
    finally:
        await asyncio.to_thread(driver.quit)


async def test_a_venue_without_a_list_shows_no_attendee_counts(
    desk: Desk, redis_server: RedisServer, venue: str
) -> None:
    assert json.loads(cli(redis_server, venue, "status", "--json").stdout)["attendees"] is None
    assert "badge_attendees" not in await (await desk.client.get("/metrics")).text()
