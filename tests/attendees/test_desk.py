"""The help desk page in headless Chromium, through a real ``badge-agent intake`` process and an agent on an emulated
ZPL printer: search as you type in three scripts by accent-free prefixes, print, reprint with a reason, walk-in."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from attendees.importer import Importer
from attendees.store import AttendeeStore
from cli.redis_server import RedisServer, free_port
from intake.tokens import TokenFile
from protocol.keys import Keys
from tests.support.agents import running_agent
from tests.support.attendee_files import PEOPLE, rows
from tests.support.browser import start_chromium
from tests.support.drivers import zpl_printer
from tests.support.intake import write_intake_config
from tests.support.processes import intake_process

#: The desk page in headless Chromium: the slow lane (scripts/test --fast leaves it out).
pytestmark = pytest.mark.browser


async def test_the_desk_finds_prints_and_reprints_with_a_reason(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    await Importer(AttendeeStore(redis, venue)).load(iter(rows(PEOPLE)))
    port = free_port()
    config = write_intake_config(tmp_path, venue, redis_server.url, port=port)
    secret = TokenFile(tmp_path / "tokens.json").add("help-desk", "staff")
    driver = await asyncio.to_thread(start_chromium, tmp_path / "chromium-profile")

    async def until(what: Any, timeout: float = 30) -> None:
        # The page redraws its rows as badge states change: an element read mid-redraw is looked up again.
        wait = WebDriverWait(driver, timeout, ignored_exceptions=[StaleElementReferenceException])
        await asyncio.to_thread(wait.until, what)

    def names(d: Any) -> list[str]:
        return [e.text for e in d.find_elements(By.CSS_SELECTOR, "#results .name")]

    def badge_of(d: Any) -> str:
        return str(d.find_element(By.CSS_SELECTOR, "#results .badge").text)

    async def search(text: str) -> None:
        def typed() -> None:
            box = driver.find_element(By.ID, "q")
            box.clear()
            box.send_keys(text)

        await asyncio.to_thread(typed)

    async def click(selector: str) -> None:
        await asyncio.to_thread(driver.execute_script, f"document.querySelector('{selector}').click();")

    try:
        async with (
            zpl_printer("hall-a-1", 0.2) as one,
            running_agent(
                tmp_path, venue, redis_server.url, "hall-a-1", printer__driver=one, printer__location="Hall A, desk 2"
            ),
        ):
            with intake_process(config, port) as url:
                await asyncio.to_thread(driver.get, f"{url}/desk#token={secret}")
                assert "token" not in await asyncio.to_thread(lambda: driver.current_url)
                # The day's counts at the top: the list's expected, arrived (checked in) and still to come.
                counts = await AttendeeStore(redis, venue).counts()
                day = [str(counts.expected), str(counts.checked_in), str(counts.expected - counts.checked_in)]
                await until(
                    lambda d: (
                        [d.find_element(By.ID, f"day-{n}").text for n in ("expected", "arrived", "to-come")] == day
                    )
                )
                for query, name in (("renee lef", "Renée Lefèvre"), ("δημ", "Δημήτρης Παπαδόπουλος"), ("李", "李小龍")):
                    await search(query)
                    await until(lambda d, n=name: names(d) == [n])  # type: ignore[misc]
                await search("renee")
                await until(lambda d: names(d) == ["Renée Lefèvre"] and badge_of(d) == "No badge yet")
                await click("#results .print")
                await until(lambda d: badge_of(d).startswith("Printed at Hall A, desk 2"))
                await asyncio.to_thread(
                    driver.execute_script,
                    "const r = document.querySelector('#results .reason'); r.focus(); r.value = 'name misspelt';",
                )
                await click("#results .reprint")
                await until(lambda d: "reprinted 1×" in badge_of(d))
                job = await redis.hgetall(Keys(venue).job("ORD1-1"))
                assert job[b"reprints"] == b"1" and job[b"state"] == b"printed"
                await asyncio.to_thread(driver.find_element(By.CSS_SELECTOR, "#walk-in summary").click)
                await asyncio.to_thread(lambda: driver.find_element(By.ID, "walk-in-name").send_keys("Walk-in Guest\n"))
                await until(lambda d: "Added Walk-in Guest" in d.find_element(By.ID, "message").text)
                await search("walk guest")
                await until(lambda d: names(d) == ["Walk-in Guest"])
                await until(lambda d: badge_of(d).startswith("Printed at Hall A"))
                widths = await asyncio.to_thread(
                    driver.execute_script, "return [document.documentElement.scrollWidth, window.innerWidth];"
                )
                assert widths[0] <= widths[1], widths
    finally:
        await asyncio.to_thread(driver.quit)
