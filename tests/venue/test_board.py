"""The fleet board: its app with aiohttp's test client, and the real page in headless Chromium (Selenium)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from redis.asyncio import Redis

from board.server import Board, make_board_app
from cli.redis_server import RedisServer, free_port
from drivers.sim import SimControl
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import running_agent
from tests.support.browser import start_chromium
from tests.support.processes import board_process, cli
from tests.support.waiting import wait_until


async def make_maybe_duplicate(store: Store, job_id: str, ghost: str, where: str) -> None:
    """A real 'may exist twice': printer ``ghost`` lost track of the badge mid-print and released it as unknown."""
    job = parse_job({"attendee_id": job_id, "name": "Zoë Ağaoğlu", "printer": ghost})
    await store.enqueue(job.job_id, job.payload(), job.printer)
    taken = await store.take(ghost)
    assert taken is not None and taken[1] == job_id
    begun = await store.begin(ghost, where, job_id)
    assert begun.kind == "print"
    assert await store.release(ghost, where, job_id, "unknown", "label jam while printing", 3) == "released"


async def make_printed_twice(store: Store, job_id: str, first: str, second: str) -> None:
    """A real 'printed twice': ``first`` confirmed the badge, then ``second`` confirmed a copy of the same print."""
    job = parse_job({"attendee_id": job_id, "name": "Ana", "printer": first})
    await store.enqueue(job.job_id, job.payload(), job.printer)
    assert await store.take(first) is not None
    begun = await store.begin(first, "Hall X", job_id)
    assert begun.kind == "print"
    assert await store.confirm(first, "Hall X", job_id, begun.epoch) == ("printed", "")
    assert await store.confirm(second, "Hall Y", job_id, begun.epoch) == ("duplicate", first)


async def test_status_job_board_and_metrics_use_the_same_staff_words_and_counts(
    redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """One of each: an intended reprint, a cancel, a badge that may exist twice, one printed twice."""
    store = Store(redis, venue)
    await make_maybe_duplicate(store, "maybe-1", "ghost", "Hall Z, desk 9")
    assert await store.take("desk-9") is not None
    begun = await store.begin("desk-9", "Hall Z, desk 1", "maybe-1")
    assert await store.confirm("desk-9", "Hall Z, desk 1", "maybe-1", begun.epoch) == (
        "printed",
        "ghost (Hall Z, desk 9)",
    )
    await make_printed_twice(store, "twice-1", "first", "second")
    assert (await store.reprint("twice-1", "coffee", "staff", 2, False))[0] == "reprint"
    for attendee in ("gone-1", "kept-1"):
        job = parse_job({"attendee_id": attendee, "name": "N"})
        await store.enqueue(job.job_id, job.payload(), job.printer)
    assert await store.cancel("gone-1", "staff") == ("cancelled", "")

    line = "reprints 1 (intended) · jobs cancelled 1 · may exist twice 1 · printed twice 1"
    status = cli(redis_server, venue, "status")
    assert line in status.stdout and "2 badge(s) to find (may exist twice or printed twice)" in status.stdout
    staff = {"reprints": 1, "cancelled": 1, "may_exist_twice": 1, "printed_twice": 1}
    assert json.loads(cli(redis_server, venue, "status", "--json").stdout)["staff"] == staff

    maybe = cli(redis_server, venue, "job", "maybe-1")
    assert "badge maybe-1 may exist twice — look at ghost (Hall Z, desk 9)" in maybe.stdout
    twice = cli(redis_server, venue, "job", "twice-1")
    assert "reprints 1 (intended)" in twice.stdout
    assert "badge twice-1 printed twice — pull one; the first came out at first (Hall X)" in twice.stdout
    kept = cli(redis_server, venue, "job", "kept-1", "--json")
    assert json.loads(kept.stdout)["staff"] == []  # nothing to say about a plain job

    snap = await Board(redis, venue).poll()
    assert snap["staff"] == staff and snap["duplicates_count"] == 2
    assert snap["words"]["reprints"] == "reprints (intended)" and snap["words"]["duplicate_print"] == "printed twice"
    assert snap["words"]["maybe_duplicate"] == snap["words"]["may_exist_twice"] == "may exist twice"
    assert {d["job_id"]: d["event"] for d in snap["duplicates"]} == {
        "maybe-1": "maybe_duplicate",
        "twice-1": "duplicate_print",
    }


async def test_board_app_serves_page_snapshot_and_pushes_updates(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    await make_maybe_duplicate(store, "dup-1", "ghost", "Hall Z, desk 9")
    async with (
        running_agent(tmp_path, venue, redis_server.url, print_time=0.01) as agent,
        TestClient(TestServer(make_board_app(Board(redis, venue, interval=0.1)))) as client,
    ):
        await wait_until(lambda: agent.printed == 1)
        page = await client.get("/")
        assert page.status == 200 and page.content_type == "text/html"
        assert "/board.js" in await page.text()
        for asset, kind in (("/board.js", "text/javascript"), ("/board.css", "text/css")):
            resp = await client.get(asset)
            assert resp.status == 200 and resp.content_type == kind

        async def duplicate_listed_and_count_beaten() -> bool:
            snap = await (await client.get("/snapshot.json")).json()
            printed = [p["printed"] for p in snap.get("printers", []) if p["name"] == "desk-1"]
            return printed == [1] and any(d["job_id"] == "dup-1" for d in snap.get("duplicates", []))

        await wait_until(duplicate_listed_and_count_beaten)
        snap = await (await client.get("/snapshot.json")).json()
        dup = next(d for d in snap["duplicates"] if d["job_id"] == "dup-1")
        assert dup["event"] == "maybe_duplicate" and "ghost (Hall Z, desk 9)" in dup["reason"]
        desk = next(p for p in snap["printers"] if p["name"] == "desk-1")
        assert desk["state"] == "ready" and desk["printed"] == 1 and desk["location"] == "desk of desk-1"

        # The stream: the current snapshot at once, then a new one when something changes.
        resp = await client.get("/events")
        assert resp.headers["Content-Type"] == "text/event-stream"
        first = json.loads((await resp.content.readuntil(b"\n\n"))[len(b"data: ") :])
        assert any(p["name"] == "desk-1" for p in first["printers"])
        SimControl(tmp_path / "desk-1.control.json").set_fault("media_out")
        async with asyncio.timeout(15):
            while True:
                chunk = await resp.content.readuntil(b"\n\n")
                if chunk.startswith(b"data: "):
                    snap = json.loads(chunk[len(b"data: ") :])
                    if next(p for p in snap["printers"] if p["name"] == "desk-1")["state"] == "device_down":
                        break
        resp.close()


async def test_board_says_when_redis_is_unreachable() -> None:
    board = Board(Redis(port=free_port(), socket_connect_timeout=0.2), "nowhere", interval=0.05)
    task = asyncio.create_task(board.run())
    try:
        await wait_until(lambda: "Redis unreachable" in str(board.snapshot.get("error")), 10)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await board.redis.aclose()


def card(driver: Any, name: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, f'article[data-printer="{name}"]')


@pytest.mark.browser
async def test_board_in_chromium_shows_the_fleet_and_a_printer_going_down(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    k = Keys(venue)
    await make_maybe_duplicate(store, "dup-7", "ghost", "Hall Z, desk 9")
    driver = await asyncio.to_thread(start_chromium, tmp_path / "chromium-profile")
    try:
        from selenium.common.exceptions import StaleElementReferenceException
        from selenium.webdriver.support.ui import WebDriverWait

        async with (
            running_agent(tmp_path, venue, redis_server.url, "desk-1", print_time=0.01) as one,
            # Markup in a location must show as text, never be parsed: locations and names reach the page.
            running_agent(
                tmp_path, venue, redis_server.url, "desk-2", print_time=0.01, printer__location="<i>Hall B</i> & co"
            ) as two,
        ):
            # dup-7, printed again (by whichever desk took it first): now flagged maybe_duplicate.
            await wait_until(lambda: one.printed + two.printed == 1)
            with board_process(redis_server.url, venue) as url:
                await asyncio.to_thread(driver.get, url)

                def fleet_shown(d: Any) -> bool:
                    try:
                        return card(d, "desk-1").get_attribute("data-state") == "ready" and bool(card(d, "desk-2"))
                    except Exception:  # noqa: BLE001  (not rendered yet)
                        return False

                await asyncio.to_thread(WebDriverWait(driver, 15).until, fleet_shown)
                await asyncio.to_thread(driver.execute_script, "window.__sameDocument = 42;")
                text = await asyncio.to_thread(lambda: driver.find_element("tag name", "body").text)
                assert "desk of desk-1" in text and "<i>Hall B</i> & co" in text
                assert "badge dup-7" in text and "ghost (Hall Z, desk 9)" in text  # the badge to pull, and where
                assert "maybe_duplicate" in text  # in the recent events too
                # The counts with the staff words (protocol/vocabulary.py), reprints and cancels among them.
                for box, words, value in (
                    ("reprints-box", "reprints (intended)", "0"),
                    ("cancelled-box", "jobs cancelled", "0"),
                    ("dup-box", "may exist twice", "1"),
                    ("twice-box", "printed twice", "0"),
                ):
                    shown = await asyncio.to_thread(lambda b=box: driver.find_element("id", b).text)
                    assert shown.split() == [value, *words.split()], (box, shown)
                # Readable on a phone: nothing wider than the screen.
                widths = await asyncio.to_thread(
                    driver.execute_script, "return [document.documentElement.scrollWidth, window.innerWidth];"
                )
                assert widths[0] <= widths[1], widths

                SimControl(tmp_path / "desk-2.control.json").set_fault("media_out")

                async def down_in_redis() -> bool:
                    raw = await redis.get(k.health("desk-2"))
                    return raw is not None and json.loads(raw)["state"] == "device_down"

                await wait_until(down_in_redis)
                declared = time.monotonic()
                # Pushed to the open page, no reload: within 3 s of the agent saying so.
                await asyncio.to_thread(
                    WebDriverWait(driver, 3).until,
                    lambda d: card(d, "desk-2").get_attribute("data-state") == "device_down",
                )
                assert time.monotonic() - declared <= 3.5
                # Read again should the page redraw the card between finding it and reading it (a later push).
                down_card = await asyncio.to_thread(
                    WebDriverWait(driver, 3, ignored_exceptions=[StaleElementReferenceException]).until,
                    lambda d: card(d, "desk-2").text,
                )
                assert "printer down" in down_card and "out of labels" in down_card
                assert await asyncio.to_thread(driver.execute_script, "return window.__sameDocument;") == 42
                await asyncio.to_thread(driver.save_screenshot, str(tmp_path / "board.png"))
    finally:
        await asyncio.to_thread(driver.quit)


async def read_first_snapshot(session: Any, url: str) -> dict[str, Any]:
    async with session.get(url + "events") as resp:
        assert resp.status == 200
        async for line in resp.content:
            if line.startswith(b"data: ") and "events" in (snap := json.loads(line[6:])):  # not "connecting"
                return dict(snap)
    raise AssertionError("stream ended without a snapshot")


async def test_ids_of_any_bytes_reach_every_viewer_escaped_and_bounded(redis_server: RedisServer, venue: str) -> None:
    """A non-UTF-8 id and a 1 MB id in Redis: every one of many real viewers still gets a small, valid snapshot."""
    import aiohttp

    redis = Redis.from_url(redis_server.url)
    k = Keys(venue)
    await redis.xadd(k.events, {b"event": b"dead", b"job_id": b"bad\xffid", b"reason": b"x"})
    await redis.xadd(k.events, {b"event": b"dead", b"job_id": b"L" * 1_000_000, b"reason": b"evil\r\x1b[2J"})
    await redis.lpush(k.inflight("hall-a-1"), b"bad\xffid")
    await Store(redis, venue).beat("hall-a-1", {"state": "ready", "location": "\xff" * 10, "printed": 0}, 5000, True)
    await redis.aclose()
    with board_process(redis_server.url, venue) as url:
        async with aiohttp.ClientSession() as session:
            snapshots = await asyncio.gather(*(read_first_snapshot(session, url) for _ in range(40)))
            async with session.get(url + "snapshot.json") as resp:
                whole = await resp.read()
    assert len(whole) < 50_000
    for snap in snapshots:
        ids = [e.get("job_id") for e in snap["events"]]
        assert "bad\\xffid" in ids and any(i and i.startswith("LLL") and i.endswith("more chars)") for i in ids)
        assert snap["printers"][0]["inflight"] == "bad\\xffid"
        assert "evil\\x0d\\x1b[2J" in [e.get("reason") for e in snap["events"]]


async def test_the_board_caps_viewers_and_drops_one_that_stops_reading(
    redis: Redis, venue: str, monkeypatch: Any
) -> None:
    import socket

    import aiohttp

    import board.server

    monkeypatch.setattr(board.server, "MAX_VIEWERS", 3)
    monkeypatch.setattr(board.server, "SEND_TIMEOUT", 0.5)
    board = Board(redis, venue, interval=3600)
    async with TestServer(make_board_app(board)) as server:
        url = str(server.make_url("/"))
        # A viewer that connects and never reads, with a tiny receive buffer so the board's sends back up.
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect((server.host, server.port))
        stalled.sendall(f"GET /events HTTP/1.1\r\nHost: {server.host}\r\n\r\n".encode())
        await wait_until(lambda: board.viewers == 1, 10)
        async with aiohttp.ClientSession() as session:
            readers = [await session.get(url + "events") for _ in range(2)]
            await wait_until(lambda: board.viewers == 3, 10)
            for stream in ("events", "updates"):  # the cap counts the viewers of both streams together
                async with session.get(url + stream) as refused:
                    assert refused.status == 503, stream
                    assert refused.headers["Retry-After"] == "10"
            for i in range(400):  # big snapshots, until the stalled viewer's send times out
                await board.publish({"venue": venue, "filler": f"{i}" + "x" * 100_000})
                await asyncio.sleep(0.02)
                if board.viewers == 2:
                    break
            assert board.viewers == 2, "the viewer that stopped reading is still held"
            for resp in readers:
                resp.close()
        stalled.close()
        await wait_until(lambda: board.viewers == 0, 10)


async def test_a_key_of_the_wrong_type_shows_as_a_venue_fault_logged_once(
    redis: Redis, venue: str, caplog: Any
) -> None:
    import logging

    caplog.set_level(logging.WARNING, logger="board")
    await redis.set(Keys(venue).pool, "oops")
    board = Board(redis, venue, interval=0.02)
    task = asyncio.create_task(board.run())
    try:
        await wait_until(lambda: "venue fault in Redis" in str(board.snapshot.get("error")), 10)
        assert "WRONGTYPE" in str(board.snapshot["error"])
        await asyncio.sleep(0.5)  # some 25 polls, all failing the same way
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert len([r for r in caplog.records if r.name == "board"]) == 1
