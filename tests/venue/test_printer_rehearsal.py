"""A venue rehearsal with every printer family in one pool: a DYMO LabelWriter 450 on (emulated) USB, a LabelWriter
550 and a TSPL printer over TCP, ippeveprinter as the AirPrint printer, a CUPS queue of the tests' own cupsd, and a
Zebra beside them. ``detect`` lists them (loopback and named hosts only), ``setup --detected N`` writes each one's
config and test-prints on it, and then the agents print the venue's badges, each confirmed as its printer allows:
by the device, or by the spooler for the CUPS queue that cannot read its printer."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from redis.asyncio import Redis

from agent.config import load_config
from agent.runtime import Agent
from cli.commands.detect import Scanners
from cli.main import main
from cli.redis_server import RedisServer
from drivers import build_driver, build_language_driver
from drivers.emulators import EMULATORS, EmulatedPrinter
from drivers.emulators.fronts import TcpFront
from drivers.emulators.usb_backend import EmulatedUsbBackend
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.store import Store
from tests.support import ipp
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.ipp, pytest.mark.slow]


@contextlib.asynccontextmanager
async def on_tcp(printer: EmulatedPrinter) -> AsyncIterator[str]:
    await printer.start()
    front = TcpFront(printer, "127.0.0.1", 0)
    host, port = await front.start()
    try:
        yield f"{host}:{port}"
    finally:
        await front.stop()
        await printer.stop()


async def test_every_family_in_one_pool_is_detected_set_up_and_prints(
    tmp_path: Path, dnssd: dict[str, str], redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    dymo = EMULATORS["dymo"]("usb-dymo", print_time=0.05)
    await dymo.start()
    backend = EmulatedUsbBackend(dymo, asyncio.get_running_loop(), vendor_id=0x0922, product_id=0x0020)
    async with contextlib.AsyncExitStack() as stack:
        hosts = {}
        for kind in ("dymo550", "tspl", "zpl"):
            printer = EMULATORS[kind](f"tcp-{kind}", print_time=0.05)
            hosts[kind] = (printer, await stack.enter_async_context(on_tcp(printer)))
        eve = stack.enter_context(ipp.ippeveprinter(tmp_path / "eve", dnssd))
        cups = stack.enter_context(ipp.cupsd(tmp_path / "cups"))
        spool = cups.directory / "out" / "badges.out"
        cups.add_queue("tofile", f"file://{spool}")
        scan = Scanners(usb_backend=backend, serial_ports=list, subnets=list, ipp_port=eve.port, cups=cups.server)
        named = [arg for _, address in hosts.values() for arg in ("--host", address)]
        detect = ["detect", "--json", "--no-mdns", "--timeout", "1", "--host", "127.0.0.1", *named]
        listed: Result = await asyncio.to_thread(CliRunner().invoke, main, detect, obj=scan)
        assert listed.exit_code == 0, listed.output
        found = json.loads(listed.output)
        families = sorted((f["transport"], f["driver"]["language"]) for f in found)
        assert families == sorted(
            [("usb", "dymo"), ("tcp", "dymo"), ("tcp", "tspl"), ("tcp", "zpl"), ("ipp", "ipp"), ("ipp", "ipp")]
        ), found
        # Each one set up from the list, as a volunteer would: its config written and a test badge printed on it.
        # setup --detected N --host HOST counts as detect --host HOST lists: a network printer by its own address,
        # the others beside the IPP printer's host.
        configs = []
        for n, printer in enumerate(found, 1):
            host = printer["address"] if printer["transport"] == "tcp" else "127.0.0.1"
            alone: Result = await asyncio.to_thread(
                CliRunner().invoke, main, ["detect", "--json", "--no-mdns", "--host", host], obj=scan
            )
            m = 1 + [f["driver"] for f in json.loads(alone.output)].index(printer["driver"])
            out = tmp_path / f"p{n}.yaml"
            setup = ["setup", "--yes", "--venue", venue, "--name", f"p{n}", "--location", f"Desk {n}", "--redis"]
            setup += [redis_server.url, "--out", str(out), "--no-start", "--detected", str(m), "--no-mdns"]
            setup += ["--host", host]
            done: Result = await asyncio.to_thread(CliRunner().invoke, main, setup, obj=scan)
            assert done.exit_code == 0, (found[n - 1], done.output)
            assert "test badge: printed" in done.output, done.output
            configs.append(load_config(out))
        # The venue's badges, one pinned to each printer and as many in the pool, printed by the agents together.
        store, k = Store(redis, venue), Keys(venue)
        ids = []
        for n in range(1, len(configs) + 1):
            for printer in (f"p{n}", None):
                job = parse_job({"attendee_id": f"A{len(ids)}", "name": f"Guest {len(ids)}", "printer": printer})
                await store.enqueue(job.job_id, job.payload(), job.printer)
                ids.append(job.job_id)
        agents = []
        for config in configs:
            driver_config = config.printer.driver
            if driver_config.transport == "usb":
                driver = build_language_driver(driver_config, config.printer.name, usb_backend=backend)
            else:
                driver = build_driver(driver_config, config.printer.name)
            agent = Agent(config, driver)
            agents.append((agent, asyncio.create_task(agent.run())))
        try:
            for job_id in ids:
                await wait_until(lambda job_id=job_id: _printed(redis, k, job_id), 90)  # type: ignore[misc]
        finally:
            for agent, _ in agents:
                agent.stop()
            await asyncio.gather(*(asyncio.wait_for(task, 30) for _, task in agents))
        by = {}
        for job_id in ids:
            printer, confirmed_by = await redis.hmget(k.job(job_id), ["printer", "confirmed_by"])
            by[printer.decode()] = confirmed_by.decode()
        spooler = next(f"p{n}" for n, f in enumerate(found, 1) if f["driver"].get("uri") == cups.queue_uri("tofile"))
        assert by == {f"p{n}": "spooler" if f"p{n}" == spooler else "device" for n in range(1, len(found) + 1)}, by
        # Nothing printed twice: every printer's own record against the badges (and the test badges of setup).
        emulated = [dymo, *(p for p, _ in hosts.values())]
        seen = [e["attendee_id"] for p in emulated for e in p.printed()] + [p.name for p in eve.printed()]
        assert all(seen.count(i) <= 1 for i in ids)
    await dymo.stop()


async def _printed(redis: Redis, k: Keys, job_id: str) -> bool:
    await asyncio.sleep(0)
    return await redis.hget(k.job(job_id), "state") == b"printed"
