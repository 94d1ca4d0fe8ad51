"""detect finds a DYMO LabelWriter by its USB vendor id and a TSPL printer by ``~!T`` on a serial port the user
named (never on a port they did not name, never on the console), and ``setup --detected N`` writes a config that
prints on each."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import yaml
from click.testing import CliRunner, Result

from agent.config import load_config
from cli.commands.detect import Scanners
from cli.main import main
from cli.redis_server import RedisServer
from detect.serial import console_ports, probe_serial
from drivers import build_language_driver
from drivers.base import Outcome
from drivers.config import DriverConfig
from drivers.emulators import EMULATORS
from drivers.emulators.fronts import PtyFront, TcpFront
from drivers.emulators.usb_backend import EmulatedUsbBackend
from drivers.label import DEFAULT_LABELS
from tests.support.drivers import BADGE


async def test_detect_finds_a_labelwriter_by_usb_id_and_tspl_on_a_named_port(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    dymo = EMULATORS["dymo"]("usb-dymo", print_time=0.05)
    tspl = EMULATORS["tspl"]("pty-tspl", print_time=0.05)
    for printer in (dymo, tspl):
        await printer.start()
    pty = PtyFront(tspl)
    path = await pty.start()
    backend = EmulatedUsbBackend(dymo, asyncio.get_running_loop(), vendor_id=0x0922, product_id=0x0020)
    scan = Scanners(
        usb_backend=backend,
        serial_ports=lambda: [path],
        subnets=list,
        mdns_interfaces=["127.0.0.1"],
        ipp_port=None,
        cups=None,
    )
    args = ["detect", "--host", "127.0.0.1:9", "--timeout", "0.3", "--no-mdns", "--json"]
    try:
        unnamed: Result = await asyncio.to_thread(CliRunner().invoke, main, args, obj=scan)
        assert unnamed.exit_code == 0, unnamed.output
        # Listed by the kernel but not named: not asked ~!T, which another printer would print as text.
        assert [f["language"] for f in json.loads(unnamed.output)] == ["dymo"]
        assert b"~!T" not in tspl.received
        listed: Result = await asyncio.to_thread(CliRunner().invoke, main, [*args, "--serial", path], obj=scan)
        found = json.loads(listed.output)
        assert [(f["transport"], f["language"], f["model"]) for f in found] == [
            ("usb", "dymo", "LabelWriter 450"),
            ("serial", "tspl", "TDP-247"),
        ]
        assert found[0]["driver"] == {
            "language": "dymo",
            "transport": "usb",
            "vendor_id": "0922",
            "product_id": "0020",
            "serial_number": "EMU0001",
            "model": "LabelWriter 450",
        }
        assert dymo.log == [] and tspl.log == []  # nothing printed by asking
        # The config detect gives the LabelWriter prints with it.
        ids = {k: int(found[0]["driver"][k], 16) for k in ("vendor_id", "product_id")}  # as the YAML loader reads them
        config_1 = DriverConfig(**{**found[0]["driver"], **ids}, label=DEFAULT_LABELS["dymo"])
        driver = build_language_driver(config_1, "desk-1", usb_backend=backend)
        async with driver:
            assert (await driver.print(driver.render(BADGE), BADGE, timeout=5)).outcome is Outcome.PRINTED
        assert [e["attendee_id"] for e in dymo.printed()] == [BADGE.attendee_id]
        # setup --detected 2 --serial PATH writes the TSPL printer's config (and test-prints on it).
        out = tmp_path / "desk-2.yaml"
        setup = ["setup", "--yes", "--venue", venue, "--name", "desk-2", "--location", "Desk"]
        setup += ["--redis", redis_server.url, "--out", str(out), "--detected", "2", "--serial", path, "--no-mdns"]
        done: Result = await asyncio.to_thread(CliRunner().invoke, main, setup, obj=scan)
        assert done.exit_code == 0, done.output
        written = yaml.safe_load(out.read_text())["printer"]["driver"]
        assert (written["language"], written["transport"], written["device"]) == ("tspl", "serial", path)
        config = load_config(out)
        driver = build_language_driver(config.printer.driver, "desk-2")
        async with driver:
            assert (await driver.print(driver.render(BADGE), BADGE, timeout=5)).outcome is Outcome.PRINTED
        assert BADGE.attendee_id in [e["attendee_id"] for e in tspl.printed()]
    finally:
        await pty.stop()
        for printer in (dymo, tspl):
            await printer.stop()


async def test_a_console_port_is_asked_only_when_named(tmp_path: Path) -> None:
    tspl = EMULATORS["tspl"]("console", print_time=0.05)
    await tspl.start()
    pty = PtyFront(tspl)
    path = await pty.start()
    try:
        assert await probe_serial([path], 0.2, consoles={path}) == []  # listed by the kernel, not named: not asked
        assert tspl.received == b""
        # Named with --serial, it is the user's choice: asked, TSPL included.
        (answered,) = await probe_serial([path], 0.2, named=frozenset([path]), consoles={path})
        assert answered.language == "tspl"
        active = tmp_path / "active"
        active.write_text("tty0 ttyAMA0\n")
        assert console_ports(active) == {"/dev/ttyAMA0"}
    finally:
        await pty.stop()
        await tspl.stop()


async def test_a_host_named_with_host_is_asked_tspl_and_dymo_and_setup_counts_it_so(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    """A network printer the user names (``--host``) is asked TSPL and DYMO last, as a named serial port is asked
    TSPL; ``setup --detected N --host HOST`` counts as ``detect --host HOST`` lists."""
    printers = {kind: EMULATORS[kind](f"tcp-{kind}", print_time=0.05) for kind in ("dymo550", "tspl")}
    fronts = []
    addresses = {}
    for kind, printer in printers.items():
        await printer.start()
        front = TcpFront(printer, "127.0.0.1", 0)
        host, port = await front.start()
        fronts.append(front)
        addresses[kind] = f"{host}:{port}"
    scan = Scanners(serial_ports=list, subnets=list, ipp_port=None, cups=None)
    try:
        args = [
            "detect",
            "--json",
            "--no-usb",
            "--no-mdns",
            "--host",
            addresses["dymo550"],
            "--host",
            addresses["tspl"],
        ]
        listed: Result = await asyncio.to_thread(CliRunner().invoke, main, args, obj=scan)
        assert listed.exit_code == 0, listed.output
        found = json.loads(listed.output)
        assert [(f["transport"], f["language"], f["address"]) for f in found] == [
            ("tcp", "dymo", addresses["dymo550"]),
            ("tcp", "tspl", addresses["tspl"]),
        ]
        assert printers["dymo550"].log == [] and printers["tspl"].log == []  # nothing printed by asking
        out = tmp_path / "desk-3.yaml"
        setup = ["setup", "--yes", "--venue", venue, "--name", "desk-3", "--location", "Desk", "--redis"]
        setup += [redis_server.url, "--out", str(out), "--detected", "1", "--host", addresses["tspl"], "--no-mdns"]
        done: Result = await asyncio.to_thread(CliRunner().invoke, main, setup, obj=scan)
        assert done.exit_code == 0, done.output
        assert "test badge: printed" in done.output
        written = yaml.safe_load(out.read_text())["printer"]["driver"]
        assert (written["language"], written["transport"], written["port"]) == ("tspl", "tcp", fronts[1].port)
    finally:
        for front in fronts:
            await front.stop()
        for printer in printers.values():
            await printer.stop()
