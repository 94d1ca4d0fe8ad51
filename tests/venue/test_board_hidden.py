"""The board's page in headless Chromium: a part the page hides (the ``hidden`` attribute) is not displayed, whatever
class it also has (``.summary`` sets ``display: grid``, which would otherwise win over ``hidden``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer
from tests.support.attendee_files import listed
from tests.support.browser import start_chromium
from tests.support.processes import board_process


def _hidden_but_displayed(driver: Any) -> list[str]:
    """The ids of the elements that carry ``hidden`` and still take up room on the page."""
    return [
        e.get_attribute("id") or e.tag_name
        for e in driver.find_elements("css selector", "[hidden]")
        if e.is_displayed()
    ]


@pytest.mark.browser
async def test_a_hidden_section_is_not_displayed_and_shows_once_the_page_unhides_it(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver = await asyncio.to_thread(start_chromium, tmp_path / "chromium-profile")
    try:
        with board_process(redis_server.url, venue) as url:
            await asyncio.to_thread(driver.get, url)
            await asyncio.to_thread(
                WebDriverWait(driver, 15).until, lambda d: d.find_element("id", "pool").text not in ("", "–")
            )
            # No attendee list yet: the check-in section (class "summary") is hidden, and so not displayed.
            section = driver.find_element("id", "attendees-section")
            assert await asyncio.to_thread(section.get_attribute, "hidden") is not None
            assert not await asyncio.to_thread(section.is_displayed)
            assert await asyncio.to_thread(_hidden_but_displayed, driver) == []
            # With a list the page unhides it, and it shows.
            await listed(redis, venue)
            await asyncio.to_thread(WebDriverWait(driver, 20).until, lambda d: section.is_displayed())
            assert await asyncio.to_thread(_hidden_but_displayed, driver) == []
    finally:
        await asyncio.to_thread(driver.quit)
