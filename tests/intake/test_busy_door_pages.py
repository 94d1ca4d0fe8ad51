"""The desk and kiosk pages at a busy door, in headless Chromium through a real ``badge-agent intake`` process: the
desk shows only what its token may do and asks before cancelling a ticket, with an undo; a kiosk whose badge no
printer can print sends the attendee to the help desk, in view on a landscape and a portrait tablet; an order code
typed at a kiosk is sent to the ticket's code."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from attendees.importer import Importer
from attendees.store import AttendeeStore
from cli.redis_server import RedisServer, free_port
from intake.tokens import TokenFile
from protocol.keys import Keys
from protocol.store import Store
from tests.intake.test_busy_door import beating
from tests.support.agents import print_it
from tests.support.attendee_files import PEOPLE, rows
from tests.support.browser import start_chromium
from tests.support.intake import write_intake_config
from tests.support.processes import intake_process

#: Pages in headless Chromium: the slow lane (scripts/test --fast leaves it out).
pytestmark = pytest.mark.browser


@asynccontextmanager
async def page(tmp_path: Path, redis_server: RedisServer, venue: str) -> AsyncIterator[tuple[Any, str, TokenFile]]:
    """A browser, the intake's address and its token file."""
    port = free_port()
    config = write_intake_config(tmp_path, venue, redis_server.url, port=port)
    tokens = TokenFile(tmp_path / "tokens.json")
    driver = await asyncio.to_thread(start_chromium, tmp_path / "chromium-profile")
    try:
        with intake_process(config, port) as url:
            yield driver, url, tokens
    finally:
        await asyncio.to_thread(driver.quit)


async def until(driver: Any, what: Any, timeout: float = 30) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    # The desk redraws its rows as badge states change: an element read mid-redraw is looked up again.
    wait = WebDriverWait(driver, timeout, ignored_exceptions=[StaleElementReferenceException])
    await asyncio.to_thread(wait.until, what)


def shown(d: Any, selector: str) -> list[str]:
    """The texts of the visible elements matching ``selector``."""
    from selenium.webdriver.common.by import By

    return [e.text for e in d.find_elements(By.CSS_SELECTOR, selector) if e.is_displayed()]


async def test_the_desk_shows_what_its_token_may_do_and_cancels_after_asking_with_an_undo(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.expected_conditions import staleness_of

    await Importer(AttendeeStore(redis, venue)).load(iter(rows(PEOPLE)))
    await beating(redis, venue, "hall-a-1", location="Hall A")
    store = Store(redis, venue)
    await AttendeeStore(redis, venue).badge("secret-renee", "desk")
    assert await print_it(store, "hall-a-1", "ORD1-1") == ("printed", "")

    async def search(driver: Any, text: str) -> None:
        def typed() -> None:
            box = driver.find_element(By.ID, "q")
            box.clear()
            box.send_keys(text)

        await asyncio.to_thread(typed)

    async def click(driver: Any, selector: str) -> None:
        await asyncio.to_thread(driver.execute_script, f"document.querySelector('{selector}').click();")

    async with page(tmp_path, redis_server, venue) as (driver, url, tokens):
        # A desk token: Reprint (with its reason), never Cancel.
        desk = tokens.add("desk-3", "desk", printers=("hall-a-1",))
        await asyncio.to_thread(driver.get, f"{url}/desk#token={desk}")
        await search(driver, "renee")
        await until(driver, lambda d: shown(d, "#results .name") == ["Renée Lefèvre"])
        await until(driver, lambda d: shown(d, "#results .reprint") == ["Reprint"])
        assert shown(driver, "#results .cancel") == [] and shown(driver, "#results .restore") == []
        await asyncio.to_thread(lambda: driver.find_element(By.CSS_SELECTOR, "#results .reason").send_keys("lost"))
        # The desk's printer beats as its agent would (every second): the page may have taken longer than a
        # heartbeat window to get here on a loaded machine, and a printer that stopped beating takes no reprint.
        await beating(redis, venue, "hall-a-1", location="Hall A")
        await click(driver, "#results .reprint")
        await until(driver, lambda d: shown(d, "#message") == ["Reprinting the badge of Renée Lefèvre"])
        job = await redis.hgetall(Keys(venue).job("ORD1-1"))
        assert job[b"reprints"] == b"1" and job[b"pinned"] == b"hall-a-1"  # at the desk's own printer
        # A search that finds no one, then one that does: no stale "No one found" above the results.
        await search(driver, "zzzz")
        await until(driver, lambda d: shown(d, "#message") == ["No one found for “zzzz”"])
        await search(driver, "δημ")
        await until(driver, lambda d: shown(d, "#results .name") == ["Δημήτρης Παπαδόπουλος"])
        assert shown(driver, "#message") in ([], [""])

        # A staff token: Cancel asks first, then offers Undo.
        staff = tokens.add("staff-1", "staff")
        await asyncio.to_thread(driver.get, f"{url}/desk#token={staff}")
        await asyncio.to_thread(driver.refresh)
        await search(driver, "δημ")
        await until(driver, lambda d: shown(d, "#results .cancel") == ["Cancel ticket"])
        await click(driver, "#results .cancel")
        await until(
            driver, lambda d: shown(d, "#results .confirm-text") == ["Cancel the ticket of Δημήτρης Παπαδόπουλος?"]
        )
        assert await redis.hget(AttendeeStore(redis, venue).keys.attendee("secret-dimitris"), "st") == b"valid"
        # The page redraws its rows as badge states change: the question stays open across a redraw.
        row = await asyncio.to_thread(lambda: driver.find_element(By.CSS_SELECTOR, "#results .attendee"))
        await until(driver, staleness_of(row))
        assert shown(driver, "#results .confirm-cancel") == ["Yes, cancel the ticket"]
        await click(driver, "#results .keep")
        await until(driver, lambda d: shown(d, "#results .confirm-cancel") == [])
        await click(driver, "#results .cancel")
        await click(driver, "#results .confirm-cancel")
        await until(driver, lambda d: shown(d, "#message") == ["Cancelled the ticket of Δημήτρης Παπαδόπουλος"])
        await until(driver, lambda d: shown(d, "#results .badge") == ["Ticket cancelled"])
        assert shown(driver, "#undo") == ["Undo"]
        await click(driver, "#undo")
        await until(driver, lambda d: shown(d, "#message") == ["Restored the ticket of Δημήτρης Παπαδόπουλος"])
        await until(driver, lambda d: shown(d, "#results .badge") == ["No badge yet"])
        assert await redis.hget(AttendeeStore(redis, venue).keys.attendee("secret-dimitris"), "st") == b"valid"


#: A landscape and a portrait tablet.
TABLETS = ((1024, 768), (800, 1280))


def in_view(d: Any, element_id: str) -> dict[str, Any]:
    """The element's bounding box and the viewport; ``seen``: the box lies inside the viewport, unscrolled."""
    return dict(
        d.execute_script(
            "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
            "return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: window.innerHeight,"
            " width: window.innerWidth, seen: r.width > 0 && r.top >= 0 && r.left >= 0"
            " && r.bottom <= window.innerHeight && r.right <= window.innerWidth && window.scrollY === 0};",
            element_id,
        )
    )


@pytest.mark.parametrize("size", TABLETS, ids=["landscape", "portrait"])
async def test_a_kiosk_sends_to_the_help_desk_when_no_printer_can_print(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str, size: tuple[int, int]
) -> None:
    from selenium.webdriver.common.by import By

    await Importer(AttendeeStore(redis, venue)).load(iter(rows(PEOPLE)))
    for name in ("hall-a-1", "hall-b-1"):
        await beating(redis, venue, name, state="paused")  # every printer out of labels

    def status(d: Any) -> tuple[str, str]:
        element = d.find_element(By.ID, "status")
        return element.text, element.get_attribute("data-kind")

    async def scan(driver: Any, code: str) -> None:
        await asyncio.to_thread(lambda: driver.find_element(By.ID, "code").send_keys(code + "\n"))

    async with page(tmp_path, redis_server, venue) as (driver, url, tokens):
        secret = tokens.add("kiosk-1", "kiosk")
        await asyncio.to_thread(driver.get, f"{url}/kiosk#token={secret}")
        # The viewport (the tablet's screen) at exactly this size: the window is that much larger than its own bars.
        inner = "return [window.innerWidth, window.innerHeight];"
        await asyncio.to_thread(driver.set_window_size, *size)
        width, height = await asyncio.to_thread(driver.execute_script, inner)
        await asyncio.to_thread(driver.set_window_size, 2 * size[0] - width, 2 * size[1] - height)
        assert tuple(await asyncio.to_thread(driver.execute_script, inner)) == size
        await scan(driver, "secret-renee")
        no_printer = "No printer can print your badge right now. Please go to the help desk."
        await until(driver, lambda d: status(d) == (no_printer, "error"))
        for element in ("status", "again"):
            box = await asyncio.to_thread(in_view, driver, element)
            assert box["seen"], (element, box)
        # An order code typed is not the ticket's code: scan the code on the ticket, or the help desk.
        await scan(driver, "ORD2")
        unknown = "We could not find this code. Please scan the code on your ticket, or go to the help desk."
        await until(driver, lambda d: status(d) == (unknown, "error"))
        for element in ("status", "again"):
            box = await asyncio.to_thread(in_view, driver, element)
            assert box["seen"], (element, box)
        assert "Δημήτρης" not in await asyncio.to_thread(lambda: driver.page_source)
