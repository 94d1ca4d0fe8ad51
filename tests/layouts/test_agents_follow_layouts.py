"""Real agent processes on emulated printers follow the venue's layouts: a new version is drawn from the next
badge on without a restart (read back from what the printers printed), each printed event names layout and
version, and a printer whose stock no variant fits takes no work and says why, as a wrong roll does."""

from __future__ import annotations

import asyncio
import json
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from redis.asyncio import Redis

from cli.redis_server import RedisServer, free_port
from drivers.emulators.brother import BrotherPrinter
from drivers.emulators.core import EmulatedPrinter
from drivers.emulators.fronts import TcpFront
from drivers.emulators.zpl import ZplPrinter
from layouts.files import load_layout
from layouts.store import LayoutStore
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import enqueue_many, running_process, write_agent_config
from tests.support.layouts import band_layout, write_logo
from tests.support.waiting import wait_until


def qr_layout(tmp_path: Path, name: str, data: str, width: float = 101.6, height: float = 152.4) -> Path:
    """The band layout whose QR code carries ``data`` (a template): which version drew a badge shows in its code."""
    doc = band_layout(width, height, inset_mm=2 if width < 100 else 0)
    doc["elements"][5]["data"] = data  # type: ignore[index]
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return path


async def serve(printer: EmulatedPrinter, stack: list[TcpFront]) -> dict[str, Any]:
    await printer.start()
    front = TcpFront(printer)
    host, port = await front.start()
    stack.append(front)
    return {"host": host, "port": port, "io_timeout": 1.0, "print_timeout": 10.0}


async def printed_events(redis: Redis, venue: str) -> list[dict[str, str]]:
    """The venue's events, each with its time (ms, from the stream id) as ``ms``."""
    entries = await redis.xrange(Keys(venue).events)
    return [
        {"ms": eid.decode().split("-")[0], **{k.decode(): v.decode() for k, v in fields.items()}}
        for eid, fields in entries
    ]


async def test_a_new_version_prints_from_the_next_badge_without_a_restart(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    write_logo(tmp_path / "logo.png")
    layouts = LayoutStore(redis, venue)
    await layouts.set("default", [load_layout(qr_layout(tmp_path, "v1.yaml", "{attendee_id}"))], by="test")
    printers = [ZplPrinter(f"desk-{i}", print_time=0.25) for i in (1, 2)]
    fronts: list[TcpFront] = []
    ids = await enqueue_many(Store(redis, venue), 24, "att-")
    try:
        with ExitStack() as stack:
            for printer in printers:
                link = await serve(printer, fronts)
                config = write_agent_config(
                    tmp_path / f"{printer.name}.yaml", venue, redis_server.url, printer.name,
                    printer__driver={"language": "zpl", "transport": "tcp", **link},
                )  # fmt: skip
                stack.enter_context(running_process(config))
            await wait_until(lambda: sum(len(p.printed()) for p in printers) >= 6, timeout=60)
            await layouts.set("default", [load_layout(qr_layout(tmp_path, "v2.yaml", "NEW-{attendee_id}"))], by="test")
            await wait_until(lambda: _all_done(redis, venue, ids), timeout=90)
    finally:
        for front in fronts:
            await front.stop()
        for printer in printers:
            await printer.stop()

    events = await printed_events(redis, venue)
    changed_at = next(i for i, e in enumerate(events) if e["event"] == "layout_set" and e["layout_version"] == "2")
    printed = [(i, e) for i, e in enumerate(events) if e["event"] == "printed"]
    assert len(printed) == len(ids) and all(e.get("layout") == "default" for _, e in printed)
    # What each printer printed, read back from its bytes: the QR code says which version drew it.
    codes = {entry["job"]: entry["attendee_id"] for p in printers for entry in p.printed()}
    for _, event in printed:
        job = event["job_id"]
        expected = job if event["layout_version"] == "1" else f"NEW-{job}"
        assert codes[job] == expected, (job, event)
    # The agents hear of the change within milliseconds (announced on pub/sub): every badge begun from 0.2 s after
    # it is the new version; before that, at most the badge each printer had in hand and one begun as it heard.
    set_ms = int(events[changed_at]["ms"])
    begun_late = {e["job_id"] for e in events if e["event"] == "printing" and int(e["ms"]) > set_ms + 200}
    old_after = [e["job_id"] for i, e in printed if i > changed_at and e["layout_version"] == "1"]
    assert not (set(old_after) & begun_late), old_after
    assert len(old_after) <= 2 * len(printers), old_after
    assert {e["layout_version"] for _, e in printed} == {"1", "2"}


async def _all_done(redis: Redis, venue: str, ids: list[str]) -> bool:
    return bool(await redis.exists(*(Keys(venue).done(i) for i in ids)) == len(ids))


async def _healthz(port: int) -> tuple[int, dict[str, Any]]:
    try:
        async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/healthz") as resp:
            return resp.status, await resp.json()
    except aiohttp.ClientError:
        return 0, {}


async def test_a_printer_whose_stock_no_variant_fits_takes_no_work_and_says_why(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    write_logo(tmp_path / "logo.png")
    layouts = LayoutStore(redis, venue)
    await layouts.set("default", [load_layout(qr_layout(tmp_path, "zebra.yaml", "{attendee_id}"))], by="test")
    printer = BrotherPrinter("desk-ql", print_time=0.05)  # 62 mm tape: the layout has only a 4x6 in variant
    fronts: list[TcpFront] = []
    k = Keys(venue)
    [job] = await enqueue_many(Store(redis, venue), 1, "ql-")
    http_port = free_port()
    fault = "wrong stock for layout 'default': loaded 62x100 mm, the layout has 101.6x152.4 mm"
    try:
        link = await serve(printer, fronts)
        config = write_agent_config(
            tmp_path / "desk-ql.yaml", venue, redis_server.url, "desk-ql",
            printer__driver={"language": "brother_ql", "transport": "tcp", "model": "QL-820NWB", **link},
            http__listen=f"127.0.0.1:{http_port}",
        )  # fmt: skip
        with running_process(config):

            async def healthz_names_the_layout() -> bool:
                status, body = await _healthz(http_port)
                return status == 503 and fault in json.dumps(body)

            await wait_until(healthz_names_the_layout, timeout=30)
            health = json.loads(await redis.get(k.health("desk-ql")) or b"{}")
            assert fault in json.dumps(health) and health["stock"] == "62x100"
            await asyncio.sleep(1.0)  # the behaviour under test: over many probes, the badge must not move
            assert await redis.hget(k.job(job), "state") == b"queued"
            assert await redis.hget(k.job(job), "attempts") == b"0"
            assert printer.log == []
            # A variant for 62 mm tape: the printer takes the badge and prints it in that variant.
            variants = [
                load_layout(qr_layout(tmp_path, "zebra.yaml", "{attendee_id}")),
                load_layout(qr_layout(tmp_path, "ql.yaml", "QL-{attendee_id}", 62, 100)),
            ]
            await layouts.set("default", variants, by="test")
            await wait_until(lambda: redis.exists(k.done(job)), timeout=30)
        assert [e["attendee_id"] for e in printer.printed()] == [f"QL-{job}"]
        assert "Traceback" not in config.with_suffix(".log").read_text()
    finally:
        for front in fronts:
            await front.stop()
        await printer.stop()


async def test_the_stock_the_printer_reports_wins_over_the_config_and_a_roll_swap_is_followed(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    write_logo(tmp_path / "logo.png")
    layouts = LayoutStore(redis, venue)
    variants = [
        load_layout(qr_layout(tmp_path, "zebra.yaml", "{attendee_id}")),
        load_layout(qr_layout(tmp_path, "ql.yaml", "QL-{attendee_id}", 62, 90)),
    ]
    await layouts.set("default", variants, by="test")
    # The config says 29x90 mm die-cut labels (no variant has it); the printer reports 62 mm tape, cut at 90 mm.
    printer = BrotherPrinter("desk-ql", print_time=0.05)
    fronts: list[TcpFront] = []
    k = Keys(venue)
    store = Store(redis, venue)
    [first] = await enqueue_many(store, 1, "ql-")
    http_port = free_port()
    try:
        link = await serve(printer, fronts)
        config = write_agent_config(
            tmp_path / "desk-ql.yaml", venue, redis_server.url, "desk-ql",
            printer__driver={
                "language": "brother_ql", "transport": "tcp", "model": "QL-820NWB", **link,
                "label": {"width_mm": 29, "height_mm": 90, "dpi": 300, "die_cut": True},
            },
            http__listen=f"127.0.0.1:{http_port}",
        )  # fmt: skip
        with running_process(config):
            await wait_until(lambda: redis.exists(k.done(first)), timeout=30)
            assert [e["attendee_id"] for e in printer.printed()] == [f"QL-{first}"]
            health = json.loads(await redis.get(k.health("desk-ql")) or b"{}")
            assert health["stock"] == "62x90"
            # A volunteer loads 29x90 mm labels: no variant fits them, so the printer stops taking work and says so.
            printer.roll = (29, True, 90)
            fault = "wrong stock for layout 'default': loaded 29x90 mm, the layout has 101.6x152.4, 62x90 mm"

            async def paused_naming_layout_and_stock() -> bool:
                # The heartbeat says so once the agent has stopped taking work (not at the first faulted probe).
                status, body = await _healthz(http_port)
                health = json.loads(await redis.get(k.health("desk-ql")) or b"{}")
                return (
                    status == 503
                    and fault in json.dumps(body)
                    and health.get("state") != "ready"
                    and (fault in json.dumps(health))
                )

            await wait_until(paused_naming_layout_and_stock, timeout=30)
            [second] = await enqueue_many(store, 1, "ql2-")
            await asyncio.sleep(1.0)  # the behaviour under test: over many probes, the badge must not move
            assert await redis.hget(k.job(second), "state") == b"queued"
            assert await redis.hget(k.job(second), "attempts") == b"0"
            # The tape is back: the printer takes the badge again, in the variant for the tape.
            printer.roll = (62, False, 0)
            await wait_until(lambda: redis.exists(k.done(second)), timeout=30)
        assert [e["attendee_id"] for e in printer.printed()] == [f"QL-{first}", f"QL-{second}"]
        assert "Traceback" not in config.with_suffix(".log").read_text()
    finally:
        for front in fronts:
            await front.stop()
        await printer.stop()
