"""The board's small "Pre-printed" section in headless Chromium: the five counts of the venue's runs, as
``preprint status`` counts them, and no section for a venue without a run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer
from tests.preprint.test_door import PEOPLE, printed_pdf_run
from tests.support.attendee_files import rows
from tests.support.browser import start_chromium
from tests.support.processes import board_process


def _counts(driver: Any) -> dict[str, str] | None:
    """The section's numbers by what they count, None while it is hidden."""
    if not driver.find_element("id", "preprint-section").is_displayed():
        return None
    return {b.get_attribute("data-preprint"): b.text for b in driver.find_elements("css selector", "[data-preprint]")}


@pytest.mark.browser
async def test_the_board_shows_the_pre_printed_counts_only_for_a_venue_with_a_run(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    from attendees.importer import Importer

    driver = await asyncio.to_thread(start_chromium, tmp_path / "chromium-profile")
    try:
        with board_process(redis_server.url, venue) as url:
            await asyncio.to_thread(driver.get, url)
            await asyncio.to_thread(
                WebDriverWait(driver, 15).until, lambda d: d.find_element("id", "pool").text not in ("", "–")
            )
            assert await asyncio.to_thread(_counts, driver) is None
            store = await printed_pdf_run(redis, venue)
            # One void (renamed since the plan) and one handed over: every count differs from the others.
            await Importer(store.attendees).load(iter(rows([{**PEOPLE[1], "name": "Anna Schmidt"}])))
            assert (await store.handover("k1", "desk-1"))[0] == "handed_over"
            want = {"planned": "0", "preprinted": "3", "in_boxes": "1", "handed_over": "1", "void": "1"}
            await asyncio.to_thread(WebDriverWait(driver, 20).until, lambda d: _counts(d) == want)
            text = await asyncio.to_thread(lambda: driver.find_element("id", "preprint-section").text)
            assert text.startswith("Pre-printed")
    finally:
        await asyncio.to_thread(driver.quit)
