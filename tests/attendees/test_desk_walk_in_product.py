"""The help desk page in headless Chromium offers the pretix products the pretix sync published for a walk-in's
order, and the walk-in added with one waits for the sync to make it (``P pretix:walk-ins``); with none published
the page shows no choice. The order itself is made against the real pretix in tests/pretix/test_walk_ins.py."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from attendees.store import AttendeeStore
from cli.redis_server import RedisServer, free_port
from intake.tokens import TokenFile
from pretix_sync.keys import PretixKeys
from pretix_sync.walk_ins import Product, publish_products
from tests.support.browser import start_chromium
from tests.support.intake import write_intake_config
from tests.support.processes import intake_process

#: The desk page in headless Chromium: the slow lane (scripts/test --fast leaves it out).
pytestmark = pytest.mark.browser


async def test_the_desk_offers_the_sync_s_pretix_products_for_a_walk_in(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    port = free_port()
    config = write_intake_config(tmp_path, venue, redis_server.url, port=port)
    secret = TokenFile(tmp_path / "tokens.json").add("help-desk", "desk")
    driver = await asyncio.to_thread(start_chromium, tmp_path / "chromium-profile")

    async def until(what: Any, timeout: float = 30) -> None:
        await asyncio.to_thread(WebDriverWait(driver, timeout).until, what)

    def product_box(d: Any) -> Any:
        return d.find_element(By.ID, "walk-in-product")

    def offered(d: Any) -> bool:  # inside the closed walk-in form: shown once opened, unless hidden
        return product_box(d).get_property("hidden") is False

    async def add(name: str, product: str | None) -> None:
        def typed() -> None:
            if not driver.find_element(By.ID, "walk-in").get_property("open"):  # open after the first one
                driver.find_element(By.CSS_SELECTOR, "#walk-in summary").click()
            if product is not None:
                Select(product_box(driver)).select_by_visible_text(product)
            driver.find_element(By.ID, "walk-in-name").send_keys(name + "\n")

        await asyncio.to_thread(typed)
        await until(lambda d: f"Added {name}" in d.find_element(By.ID, "message").text)

    try:
        with intake_process(config, port) as url:
            await asyncio.to_thread(driver.get, f"{url}/desk#token={secret}")
            await until(lambda d: d.find_element(By.ID, "walk-in").is_displayed())
            assert not await asyncio.to_thread(offered, driver)  # none published

            await publish_products(redis, venue, [Product(7, "Day ticket"), Product(9, "Student day ticket")])
            await asyncio.to_thread(driver.refresh)
            await until(offered)
            choices = await asyncio.to_thread(lambda: Select(product_box(driver)).options)
            options = [await asyncio.to_thread(o.get_property, "text") for o in choices]
            assert options == ["No pretix order", "Day ticket", "Student day ticket"]
            await add("Walk-In With Order", "Student day ticket")
            await add("Walk-In Without", None)
    finally:
        await asyncio.to_thread(driver.quit)

    entries = await redis.xrange(PretixKeys(venue).walk_ins)
    assert [fields[b"product"] for _, fields in entries] == [b"9"]
    store = AttendeeStore(redis, venue)
    ordered = await store.get(entries[0][1][b"code"].decode())
    assert ordered is not None and ordered.name == "Walk-In With Order" and ordered.source == "walk-in"
