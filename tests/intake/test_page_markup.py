"""Markup in a name (from a ticket shop, an import or a walk-in) on the desk and kiosk pages, in headless Chromium
through a real ``badge-agent intake`` process: shown as the text it is, never parsed into elements or run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from attendees.importer import Importer
from attendees.store import AttendeeStore
from cli.redis_server import RedisServer
from tests.intake.test_busy_door import beating
from tests.intake.test_busy_door_pages import page, shown, until
from tests.support.attendee_files import rows

#: Pages in headless Chromium: the slow lane (scripts/test --fast leaves it out).
pytestmark = pytest.mark.browser

#: The kiosk greets by the first word: markup that needs no space.
NAME = "<img/src=x/onerror=window.pwned=1>Mallory <b>Bold</b>"
COMPANY = "<script>window.pwned=2</script>Evil &amp; Co"
HOSTILE = {"attendee_id": "secret-mallory", "name": NAME, "company": COMPANY, "fields": {"ticket_type": "Visitor"}}


def _planted(d: Any) -> dict[str, Any]:
    """What the markup would have made, had it been parsed: elements, and what its scripts set."""
    return dict(
        d.execute_script(
            # The desk's own <b> (its day counts at the top) are the page's, not a name's.
            "return {img: document.querySelectorAll('img').length, b: document.querySelectorAll('body b:not(#day b)')"
            ".length, script: [...document.scripts].filter(s => !s.src).length, pwned: window.pwned || null};"
        )
    )


async def test_markup_in_a_name_is_text_on_the_desk_and_kiosk_pages(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    from selenium.webdriver.common.by import By

    await Importer(AttendeeStore(redis, venue)).load(iter(rows([HOSTILE])))
    await beating(redis, venue, "hall-a-1", location="Hall A")
    nothing = {"img": 0, "b": 0, "script": 0, "pwned": None}
    async with page(tmp_path, redis_server, venue) as (driver, url, tokens):
        desk = tokens.add("desk-1", "desk")
        await asyncio.to_thread(driver.get, f"{url}/desk#token={desk}")
        await asyncio.to_thread(lambda: driver.find_element(By.ID, "q").send_keys("mallory"))
        await until(driver, lambda d: shown(d, "#results .name") == [NAME])
        assert shown(driver, "#results .company") == [COMPANY]
        assert await asyncio.to_thread(_planted, driver) == nothing

        kiosk = tokens.add("kiosk-1", "kiosk")
        await asyncio.to_thread(driver.get, f"{url}/kiosk#token={kiosk}")
        await asyncio.to_thread(driver.refresh)
        await beating(redis, venue, "hall-a-1", location="Hall A")
        await asyncio.to_thread(lambda: driver.find_element(By.ID, "code").send_keys("secret-mallory\n"))
        await until(driver, lambda d: "Mallory" in d.find_element(By.ID, "status").text)
        status = await asyncio.to_thread(lambda: driver.find_element(By.ID, "status").text)
        assert NAME.split(maxsplit=1)[0] in status, status
        assert await asyncio.to_thread(_planted, driver) == nothing
