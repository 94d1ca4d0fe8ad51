"""setup --detected N takes the Nth printer detect lists (USB, serial, then network, mDNS-announced ones included),
writes its config without a question, test-prints on it, and `badge-agent run` prints a badge with that config.
On a venue network of the test's own (tests/support/netns.py), where mDNS runs on every interface as at a venue."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from redis.asyncio import Redis

from agent.config import load_config
from cli.commands.detect import Scanners
from cli.main import main
from cli.redis_server import RedisServer, free_port
from drivers.emulators import EMULATORS
from drivers.emulators.fronts import PtyFront, TcpFront
from drivers.emulators.usb_backend import EmulatedUsbBackend
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import enqueue_many, running_process
from tests.support.mdns import RESPONDER_PAUSE, announce, responder, service_info
from tests.support.waiting import wait_until

ZEBRA = "10.99.0.31"


# Slow (about 13 s): detect's timed scans, then setup and a run of the agent, in a network namespace.
@pytest.mark.slow
@pytest.mark.netns(addresses=[ZEBRA])
async def test_setup_detected_picks_the_nth_printer_and_run_prints_with_its_config(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    receipt = EMULATORS["escpos"]("usb-receipt", print_time=0.05)  # 1: USB
    brother = EMULATORS["brother_ql"]("pty-brother", print_time=0.05)  # 2: serial
    zebra = EMULATORS["zpl"]("net-zebra", print_time=0.05)  # 3: network, found by its mDNS announcement
    for printer in (receipt, brother, zebra):
        await printer.start()
    pty = PtyFront(brother)
    tcp = TcpFront(zebra, ZEBRA, 0)  # not on 9100: found by its announcement alone
    announcer = responder()
    try:
        path = await pty.start()
        host, port = await tcp.start()
        await announce(announcer, service_info("_pdl-datastream._tcp", "Zebra ZT410", host, port))
        scanners = Scanners(
            usb_backend=EmulatedUsbBackend(receipt, asyncio.get_running_loop(), vendor_id=0x04B8),
            serial_ports=lambda: [path],
        )
        out = tmp_path / "hall-c-1.yaml"
        args = ["setup", "--yes", "--venue", venue, "--name", "hall-c-1", "--location", "Hall C"]
        args += ["--redis", redis_server.url, "--out", str(out)]
        listed: Result = await asyncio.to_thread(CliRunner().invoke, main, ["detect", "--json"], obj=scanners)
        assert [(f["transport"], f["announced"]) for f in yaml.safe_load(listed.output)] == [
            ("usb", ""),
            ("serial", ""),
            ("tcp", "Zebra ZT410"),
        ], listed.output

        await asyncio.sleep(RESPONDER_PAUSE)
        result: Result = await asyncio.to_thread(CliRunner().invoke, main, [*args, "--detected", "3"], obj=scanners)
        assert result.exit_code == 0, result.output
        assert f"printer 3: tcp {host}:{port}  zpl  ZT410-203dpi" in result.output
        assert "test badge: printed" in result.output
        config = load_config(out)
        assert (config.printer.driver.language, config.printer.driver.host, config.printer.driver.port) == (
            "zpl",
            host,
            port,
        )
        assert len(zebra.printed()) == 1 and receipt.log == [] and brother.log == []

        # run with exactly that file; only the HTTP port is moved off 9731, which another agent here may hold.
        written = yaml.safe_load(out.read_text())
        written["http"]["listen"] = f"127.0.0.1:{free_port()}"
        out.write_text(yaml.safe_dump(written))
        k = Keys(venue)
        [job] = await enqueue_many(Store(redis, venue), 1, "detected-")
        with running_process(out):
            await wait_until(lambda: redis.exists(k.done(job)), timeout=40)
        assert [e["attendee_id"] for e in zebra.printed()][-1] == "detected-0" and len(zebra.printed()) == 2

        result = await asyncio.to_thread(CliRunner().invoke, main, [*args, "--detected", "9", "--force"], obj=scanners)
        assert result.exit_code == 2 and "--detected 9: detect found 3 printer(s)" in result.output, result.output
        # --no-mdns counts as `detect --no-mdns` lists: the Zebra, found only by its announcement, is not there.
        quiet = [*args, "--detected", "3", "--force", "--no-mdns"]
        result = await asyncio.to_thread(CliRunner().invoke, main, quiet, obj=scanners)
        assert result.exit_code == 2 and "--detected 3: detect found 2 printer(s)" in result.output, result.output
        result = await asyncio.to_thread(CliRunner().invoke, main, [*args, "--host", host, "--no-mdns"], obj=scanners)
        assert result.exit_code == 2 and "--no-mdns goes with --detected N" in result.output, result.output
    finally:
        await announcer.async_unregister_all_services()
        await announcer.async_close()
        await tcp.stop()
        await pty.stop()
        for printer in (receipt, brother, zebra):
            await printer.stop()
