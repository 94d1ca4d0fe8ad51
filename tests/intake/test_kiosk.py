"""The kiosk page in headless Chromium: an attendee checks in on a venue of agents on emulated ZPL printers (TCP)
through a real ``badge-agent intake`` process, and the page says where the badge came out."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer, free_port
from intake.tokens import TokenFile
from tests.support.agents import running_agent
from tests.support.browser import start_chromium
from tests.support.drivers import zpl_printer
from tests.support.intake import write_intake_config
from tests.support.processes import intake_process

#: The kiosk page in headless Chromium: the slow lane (scripts/test --fast leaves it out).
pytestmark = pytest.mark.browser


async def test_kiosk_checks_in_an_attendee_and_says_where_the_badge_came_out(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    port = free_port()
    config = write_intake_config(tmp_path, venue, redis_server.url, port=port)
    secret = TokenFile(tmp_path / "tokens.json").add("kiosk-hall-a", "kiosk")
    driver = await asyncio.to_thread(start_chromium, tmp_path / "chromium-profile")
    try:
        async with (
            # Slow enough to print that the page has time to show "printing at".
            zpl_printer("hall-a-1", 1.0) as one,
            zpl_printer("hall-a-2", 1.0) as two,
            running_agent(
                tmp_path, venue, redis_server.url, "hall-a-1", printer__driver=one, printer__location="Hall A, desk 1"
            ),
            running_agent(
                tmp_path, venue, redis_server.url, "hall-a-2", printer__driver=two, printer__location="Hall A, desk 2"
            ),
        ):
            with intake_process(config, port) as url:
                await asyncio.to_thread(driver.get, f"{url}/kiosk#token={secret}")
                # The token left the address bar (it was only ever in the fragment).
                assert "token" not in await asyncio.to_thread(lambda: driver.current_url)

                def type_in() -> None:
                    driver.find_element(By.ID, "code").send_keys("PRETIX-7QX\n")  # a scanner ends with Enter
                    driver.find_element(By.ID, "name").send_keys("Zoë Ağaoğlu\n")

                await asyncio.to_thread(
                    driver.execute_script,
                    "window.__seen = []; new MutationObserver(() => window.__seen.push("
                    "document.getElementById('status').textContent)).observe("
                    "document.getElementById('status'), {childList: true, characterData: true, subtree: true});",
                )
                await asyncio.to_thread(type_in)

                def ready(d: Any) -> bool:
                    return d.find_element(By.ID, "status").get_attribute("data-kind") == "ready"

                await asyncio.to_thread(WebDriverWait(driver, 30).until, ready)
                text = await asyncio.to_thread(lambda: driver.find_element(By.ID, "status").text)
                job = await redis.hgetall(f"badge:{{{venue}}}:job:kiosk:kiosk-hall-a:PRETIX-7QX")  # a kiosk's own id
                where = {b"hall-a-1": "Hall A, desk 1", b"hall-a-2": "Hall A, desk 2"}[job[b"printer"]]
                assert job[b"state"] == b"printed"
                assert text == f"Ready — collect it at {where}", text
                seen = await asyncio.to_thread(driver.execute_script, "return window.__seen;")
                assert f"Printing at {where}" in seen, seen
                widths = await asyncio.to_thread(
                    driver.execute_script, "return [document.documentElement.scrollWidth, window.innerWidth];"
                )
                assert widths[0] <= widths[1], widths
                await asyncio.to_thread(driver.save_screenshot, str(tmp_path / "kiosk.png"))
    finally:
        await asyncio.to_thread(driver.quit)


async def test_kiosk_without_a_token_says_it_is_not_set_up(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    port = free_port()
    config = write_intake_config(tmp_path, venue, redis_server.url, port=port)
    driver = await asyncio.to_thread(start_chromium, tmp_path / "chromium-profile")
    try:
        with intake_process(config, port) as url:
            await asyncio.to_thread(driver.get, f"{url}/kiosk")

            def type_in() -> None:
                driver.find_element(By.ID, "code").send_keys("X1\n")
                driver.find_element(By.ID, "name").send_keys("Ann\n")

            await asyncio.to_thread(type_in)
            await asyncio.to_thread(
                WebDriverWait(driver, 10).until,
                lambda d: "not set up" in d.find_element(By.ID, "status").text,
            )
    finally:
        await asyncio.to_thread(driver.quit)
