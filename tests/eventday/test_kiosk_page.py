"""The kiosk page in headless Chromium says about how long a badge waits when its zone is busy."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer, free_port
from eventday.counts import zone_waits
from intake.tokens import TokenFile
from tests.eventday.test_kiosk_desk import ZONES, beat, rushed
from tests.support.attendee_files import listed
from tests.support.browser import start_chromium
from tests.support.intake import write_intake_config
from tests.support.processes import intake_process

pytestmark = pytest.mark.browser


async def test_the_kiosk_page_says_about_how_long(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    await listed(redis, venue)
    await rushed(redis, venue, waiting=20, per_minute=2)
    port = free_port()
    config = write_intake_config(tmp_path, venue, redis_server.url, ZONES, port=port)
    secret = TokenFile(tmp_path / "tokens.json").add("kiosk-1", "kiosk")
    driver = await asyncio.to_thread(start_chromium, tmp_path / "chromium-profile")

    def status(d: Any) -> str:
        return str(d.find_element(By.ID, "status").text)

    try:
        with intake_process(config, port) as url:
            await asyncio.to_thread(driver.get, f"{url}/kiosk#token={secret}")
            await beat(redis, venue)  # again: the intake's process may have taken longer to start than a beat lasts
            await asyncio.to_thread(lambda: driver.find_element(By.ID, "code").send_keys("secret-renee\n"))
            await asyncio.to_thread(WebDriverWait(driver, 15).until, lambda d: "about" in status(d))
            shown = await asyncio.to_thread(status, driver)
    finally:
        await asyncio.to_thread(driver.quit)
    (hall,) = await zone_waits(redis, venue)
    assert hall.wait_minutes is not None
    # Said when the badge was made (one more waiting since then: this attendee's own).
    assert shown.startswith("Hello Renée — Your badge is in line: about ") and shown.endswith(" min…"), shown
    assert abs(int(shown.split("about ")[1].split()[0]) - hall.wait_minutes) <= 1, (shown, hall)


async def test_the_kiosk_page_says_about_how_long_for_a_typed_name_too(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """No list: the attendee types a name (``POST /v1/jobs``), and the page says the wait as for a scanned ticket."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    await rushed(redis, venue, waiting=20, per_minute=2)
    port = free_port()
    config = write_intake_config(tmp_path, venue, redis_server.url, ZONES, port=port)
    secret = TokenFile(tmp_path / "tokens.json").add("kiosk-1", "kiosk")
    driver = await asyncio.to_thread(start_chromium, tmp_path / "chromium-profile")

    def status(d: Any) -> str:
        return str(d.find_element(By.ID, "status").text)

    def type_in(d: Any) -> None:
        d.find_element(By.ID, "code").send_keys("walk-7\n")  # Enter moves on to the name
        d.find_element(By.ID, "name").send_keys("Ana Walk\n")

    try:
        with intake_process(config, port) as url:
            await asyncio.to_thread(driver.get, f"{url}/kiosk#token={secret}")
            await asyncio.to_thread(
                WebDriverWait(driver, 15).until, lambda d: d.find_element(By.ID, "name").is_displayed()
            )
            await beat(redis, venue)
            await asyncio.to_thread(type_in, driver)
            await asyncio.to_thread(WebDriverWait(driver, 15).until, lambda d: "about" in status(d))
            shown = await asyncio.to_thread(status, driver)
            # Closed while the intake runs: the page follows its job by a long-poll the intake would wait out.
            await asyncio.to_thread(driver.quit)
    finally:
        await asyncio.to_thread(driver.quit)
    hall = next(w for w in await zone_waits(redis, venue) if w.zone == "hall-a")
    assert hall.wait_minutes is not None
    assert shown.startswith("Your badge is in line: about ") and shown.endswith(" min…"), shown
    assert abs(int(shown.split("about ")[1].split()[0]) - hall.wait_minutes) <= 1, (shown, hall)
