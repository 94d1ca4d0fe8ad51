"""The kiosk in lookup mode, in headless Chromium, through a real ``badge-agent intake`` process and agents on
emulated ZPL printers: scan a ticket, be greeted by the listed name, see where the badge came out; a second scan
prints nothing and says where and when; an unknown ticket goes to the help desk; the page clears itself."""

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

#: The kiosk page in headless Chromium: the slow lane (scripts/test --fast leaves it out).
pytestmark = pytest.mark.browser


async def test_scan_greets_by_the_listed_name_and_a_second_scan_prints_nothing(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    await Importer(AttendeeStore(redis, venue)).load(iter(rows(PEOPLE)))
    port = free_port()
    config = write_intake_config(tmp_path, venue, redis_server.url, port=port)
    config.write_text(config.read_text() + "kiosk: {reset_after: 3}\n")
    secret = TokenFile(tmp_path / "tokens.json").add("kiosk-hall-a", "kiosk")
    driver = await asyncio.to_thread(start_chromium, tmp_path / "chromium-profile")

    def status(d: Any) -> tuple[str, str]:
        element = d.find_element(By.ID, "status")
        return element.text, element.get_attribute("data-kind")

    async def scan(code: str) -> None:
        await asyncio.to_thread(lambda: driver.find_element(By.ID, "code").send_keys(code + "\n"))

    async def until(what: Any, timeout: float = 30) -> None:
        await asyncio.to_thread(WebDriverWait(driver, timeout).until, what)

    try:
        async with (
            zpl_printer("hall-a-1", 1.0) as one,
            running_agent(
                tmp_path, venue, redis_server.url, "hall-a-1", printer__driver=one, printer__location="Hall A, desk 2"
            ),
        ):
            with intake_process(config, port) as url:
                await asyncio.to_thread(driver.get, f"{url}/kiosk#token={secret}")
                code_field = await asyncio.to_thread(driver.find_element, By.ID, "code")
                assert await asyncio.to_thread(code_field.get_dom_attribute, "autocapitalize") == "off"
                await until(lambda d: not d.find_element(By.ID, "name").is_displayed())  # no names on this kiosk
                await asyncio.to_thread(
                    driver.execute_script,
                    "window.__seen = []; new MutationObserver(() => window.__seen.push("
                    "document.getElementById('status').textContent)).observe("
                    "document.getElementById('status'), {childList: true, characterData: true, subtree: true});",
                )
                await scan("secret-renee")
                await until(lambda d: status(d)[1] == "ready")
                assert status(driver)[0] == "Ready — collect it at Hall A, desk 2"
                seen = await asyncio.to_thread(driver.execute_script, "return window.__seen;")
                assert "Hello Renée — Printing at Hall A, desk 2" in seen, seen
                # Ready for the next attendee at once: the form is there, no "Next attendee" tap needed.
                assert await asyncio.to_thread(lambda: driver.find_element(By.ID, "code").is_displayed())
                await scan("secret-renee")
                await until(lambda d: "Your badge was printed at" in status(d)[0])
                assert status(driver)[0].endswith("collect it at Hall A, desk 2")
                job = await redis.hgetall(Keys(venue).job("ORD1-1"))
                assert job[b"state"] == b"printed" and job.get(b"reprints", b"0") == b"0"
                assert await redis.llen(Keys(venue).pool) == 0
                await scan("not-a-ticket")
                unknown = "We could not find this code. Please scan the code on your ticket, or go to the help desk."
                await until(lambda d: status(d) == (unknown, "error"))
                await until(lambda d: status(d)[0] == "", timeout=10)  # cleared itself after reset_after
                widths = await asyncio.to_thread(
                    driver.execute_script, "return [document.documentElement.scrollWidth, window.innerWidth];"
                )
                assert widths[0] <= widths[1], widths
    finally:
        await asyncio.to_thread(driver.quit)
