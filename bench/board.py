"""The board as the event day's view, with 50 printers in 10 zones: how fast a slow phone draws it, what each viewer
is sent a second, and whether 100 viewers slow the intake's desks.

Run: .venv/bin/python -m bench.board [--seconds S] [--viewers N] [--loads L]
Prints one table and writes bench/results/board.json.

A private redis-server (loopback) holds a venue in its rush (tests/support/eventday.py: 50 printers, 10 zones, one
printer out of labels), kept busy for the whole run: every printer beats once a second as its agent would, and badges
are enqueued, taken, begun and confirmed through the protocol's own steps, about 17 a second across the venue.
``badge-agent board`` and ``badge-agent intake`` run as their own processes.

* **Page ready**: headless Chromium at a phone's size with the CPU slowed 4x (CDP ``Emulation.setCPUThrottlingRate``)
  loads the board L times; ready = the page's own ``performance.now()`` when the first snapshot is drawn (chart and
  tables: ``data-ready`` on the body). Target: at most 1 s (median).
* **Bytes a second per viewer**: one ``/updates`` stream read for S seconds after its first (whole) snapshot, all
  bytes counted (patches and keep-alives). Target: at most 2 KB/s.
* **Desk p99 with 100 viewers**: a desk token creates a job and reads it back every 50 ms for S seconds
  (bench/kiosk_flood.py's desk), first with no board viewer, then with N ``/updates`` streams open. Target: p99 at
  most 50 ms with the viewers.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
from redis.asyncio import Redis

from bench.common import bench_main, fmt, redis_server, table, verdict
from bench.kiosk_flood import desk_loop, start_intake
from protocol.jobs import parse_job
from protocol.store import Store
from tests.support.browser import start_chromium
from tests.support.eventday import Rush, make_rush
from tests.support.processes import board_process

VENUE = "bench-flood"  # start_intake's venue


async def busy_venue(redis: Redis, rush: Rush, stop: asyncio.Event) -> int:
    """Beat every printer each second and print about 17 badges a second across the zones until ``stop``."""
    store = Store(redis, VENUE)
    printed: dict[str, int] = {}
    n = 0
    names = [(zone, name) for zone, printers in rush.zones.items() for name in printers if name != rush.out_of_labels]
    while not stop.is_set():
        second = time.monotonic()
        for _zone, name in names:
            state = {"state": "ready", "location": f"desk {name}", "printed": printed.get(name, 0)}
            await store.beat(name, state, 600_000, first=False)
        for i in range(17):
            zone, name = names[(n + i * 3) % len(names)]
            n += 1
            job = parse_job({"attendee_id": f"b-{n}", "name": f"Guest {n}", "printer": name, "zone": zone,
                             "zone_printers": rush.zones[zone]})  # fmt: skip
            await store.enqueue(job.job_id, job.payload(), job.printer, zone=job.zoned)
            if await store.take(name) is None:
                continue
            begun = await store.begin(name, f"desk {name}", job.job_id)
            if begun.kind == "print":
                await store.confirm(name, f"desk {name}", job.job_id, begun.epoch)
                printed[name] = printed.get(name, 0) + 1
        await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - second)))
    return n


def page_ready(url: str, profile: Path, loads: int) -> list[float]:
    """Milliseconds from navigation to the first snapshot drawn, at 4x CPU slowdown, ``loads`` fresh loads."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver = start_chromium(profile)
    try:
        driver.execute_cdp_cmd("Emulation.setCPUThrottlingRate", {"rate": 4})
        out = []
        for _ in range(loads):
            driver.get("about:blank")
            driver.get(url)
            WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.body.dataset.ready"))
            out.append(float(driver.execute_script("return Number(document.body.dataset.readyMs)")))
        return out
    finally:
        driver.quit()


async def viewer_bytes(session: aiohttp.ClientSession, url: str, seconds: float) -> float:
    """Bytes a second one viewer is sent after its first snapshot."""
    async with session.get(url + "updates") as resp:
        await resp.content.readuntil(b"\n\n")  # the whole snapshot, once
        got, start = 0, time.monotonic()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(seconds):
                async for chunk in resp.content.iter_any():
                    got += len(chunk)
        return got / (time.monotonic() - start)


async def hold_viewers(url: str, viewers: int) -> None:
    async def one(session: aiohttp.ClientSession) -> None:
        async with session.get(url + "updates") as resp:
            async for _ in resp.content.iter_any():
                pass

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        await asyncio.gather(*(one(session) for _ in range(viewers)))


def viewers_process(url: str, viewers: int) -> None:
    """The phones, in a process of their own: their reading must not slow the desk client measured here."""
    asyncio.run(hold_viewers(url, viewers))


async def run(seconds: float, viewers: int, loads: int) -> dict[str, Any]:
    with redis_server() as server, tempfile.TemporaryDirectory(prefix="badge-bench-board-") as tmp:
        redis = Redis.from_url(server.url)
        rush = await make_rush(redis, VENUE)
        stop = asyncio.Event()
        activity = asyncio.create_task(busy_venue(redis, rush, stop))
        Path(tmp, "intake").mkdir()
        intake, base, desk, _kiosk = start_intake(Path(tmp) / "intake", server.url, {})
        try:
            with board_process(server.url, VENUE) as url:
                ready = await asyncio.to_thread(page_ready, url, Path(tmp) / "chromium", int(loads))
                async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
                    per_viewer = await viewer_bytes(session, url, seconds)
                    await desk_loop(session, base, desk, 1.0)  # warm up
                    alone = await desk_loop(session, base, desk, seconds)
                    phones = multiprocessing.get_context("spawn").Process(
                        target=viewers_process, args=(url, int(viewers)), daemon=True
                    )
                    phones.start()
                    await asyncio.sleep(3.0)  # all streams open and sent their first snapshot
                    watched = await desk_loop(session, base, desk, seconds)
                    phones.terminate()
                    phones.join(10)
        finally:
            stop.set()
            printed = await activity
            intake.terminate()
            intake.wait(10)
            await redis.aclose()
    return {
        "printers": 50,
        "zones": 10,
        "badges_during_run": printed,
        "page_ready_ms": ready,
        "page_ready_median_ms": statistics.median(ready),
        "bytes_per_s_per_viewer": per_viewer,
        "viewers": int(viewers),
        "desk_alone": alone,
        "desk_with_viewers": watched,
    }


def report(r: dict[str, Any]) -> str:
    return table(
        f"The board with {r['printers']} printers in {r['zones']} zones ({r['badges_during_run']} badges printed "
        "during the run)",
        "lower is better",
        ["what", "measured", "target", "met"],
        [
            [
                "page ready at 4x CPU slowdown, median ms",
                fmt(r["page_ready_median_ms"], 0),
                "<= 1000",
                verdict(r["page_ready_median_ms"] <= 1000),
            ],
            [
                "bytes a second per viewer",
                fmt(r["bytes_per_s_per_viewer"], 0),
                "<= 2048",
                verdict(r["bytes_per_s_per_viewer"] <= 2048),
            ],
            ["desk p99 ms, no viewer", fmt(r["desk_alone"]["p99_ms"], 1), "", ""],
            [
                f"desk p99 ms, {r['viewers']} viewers",
                fmt(r["desk_with_viewers"]["p99_ms"], 1),
                "<= 50",
                verdict(r["desk_with_viewers"]["p99_ms"] <= 50),
            ],
        ],
    )


if __name__ == "__main__":
    bench_main(
        "board",
        __doc__,
        run,
        report,
        [
            ("--seconds", 20.0, "seconds of each measurement (viewer bytes, desk alone, desk with viewers)"),
            ("--viewers", 100, "board viewers open while the desk is measured"),
            ("--loads", 5, "page loads at 4x CPU slowdown"),
        ],
    )
