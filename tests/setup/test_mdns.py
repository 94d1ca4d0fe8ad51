"""detect finds printers that announce themselves over mDNS: real zeroconf announcements on a venue network of the
test's own (a network namespace, tests/support/netns.py), each for an emulator, asked on the raw port announced
(``_pdl-datastream``) or on 9100 (``_ipp``), found beside a neighbour that announces other things, and none prints a
label. detect and the responders run as they do at a venue: mDNS on every interface."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest
from click.testing import CliRunner, Result
from zeroconf.asyncio import AsyncZeroconf

from cli.commands.detect import Scanners
from cli.main import main
from detect.mdns import browse
from drivers.emulators import EMULATORS, EmulatedPrinter
from drivers.emulators.fronts import TcpFront
from tests.support.mdns import RESPONDER_PAUSE, announce, responder, service_info

ZEBRA, BROTHER, NEIGHBOUR = "10.99.0.31", "10.99.0.32", "10.99.0.40"
pytestmark = pytest.mark.netns(addresses=[ZEBRA, BROTHER, NEIGHBOUR])
# Only announced printers: no subnet scan, no serial ports; mDNS on every interface (the default).
ANNOUNCED_ONLY = Scanners(serial_ports=list, subnets=list)


@pytest.fixture
async def announcer() -> AsyncIterator[AsyncZeroconf]:
    zc = responder()
    yield zc
    await zc.async_unregister_all_services()
    await zc.async_close()


@pytest.fixture
async def neighbour() -> AsyncIterator[AsyncZeroconf]:
    """Another device on the venue network, announcing things of its own (its own mDNS socket on port 5353)."""
    zc = responder()
    await announce(
        zc,
        service_info("_http._tcp", "Router", NEIGHBOUR, 80),
        service_info("_ipp._tcp", "Laser", NEIGHBOUR, 631),
    )
    yield zc
    await zc.async_unregister_all_services()
    await zc.async_close()


async def _printer(kind: str, host: str, port: int, stack: list[object]) -> tuple[EmulatedPrinter, int]:
    printer = EMULATORS[kind](f"mdns-{kind}", print_time=0.05)
    await printer.start()
    front = TcpFront(printer, host, port)
    _, bound = await front.start()
    stack += [front, printer]
    return printer, bound


# Slow (about 20 s): mDNS browses in a row, each after the responders' one-second pause.
@pytest.mark.slow
async def test_detect_finds_announced_printers_on_their_raw_port(
    announcer: AsyncZeroconf, neighbour: AsyncZeroconf
) -> None:
    stack: list[object] = []
    try:
        zebra, zebra_port = await _printer("zpl", ZEBRA, 0, stack)
        # A Brother that announces only IPP (port 631) is asked on 9100.
        brother, _ = await _printer("brother_ql", BROTHER, 9100, stack)
        await announce(
            announcer,
            service_info("_pdl-datastream._tcp", "Zebra ZT410", ZEBRA, zebra_port),
            service_info("_ipp._tcp", "Brother QL-820NWB", BROTHER, 631),
            service_info("_printer._tcp", "Zebra ZT410", ZEBRA, 515),
        )

        # Within the one-second window, though three mDNS sockets share port 5353 on this machine.
        announced = {(a.name, a.host, a.port) for a in await browse(1.0)}
        # LPD's 515 is no raw port, and the raw-service announcement already named the Zebra's real one.
        assert announced == {
            ("Zebra ZT410", ZEBRA, zebra_port),
            ("Brother QL-820NWB", BROTHER, 9100),
            ("Laser", NEIGHBOUR, 9100),
        }

        args = ["detect", "--no-usb", "--timeout", "0.5"]
        await asyncio.sleep(RESPONDER_PAUSE)
        listed: Result = await asyncio.to_thread(CliRunner().invoke, main, [*args, "--json"], obj=ANNOUNCED_ONLY)
        assert listed.exit_code == 0, listed.output
        z, b = json.loads(listed.output)  # the neighbour's laser printer answers nothing on 9100
        assert (z["announced"], z["language"], z["model"], z["driver"]["host"], z["driver"]["port"]) == (
            "Zebra ZT410",
            "zpl",
            "ZT410-203dpi",
            ZEBRA,
            zebra_port,
        )
        assert (b["announced"], b["language"], b["model"], b["driver"]["host"], b["driver"]["port"]) == (
            "Brother QL-820NWB",
            "brother_ql",
            "QL-820NWB",
            BROTHER,
            9100,
        )
        await asyncio.sleep(RESPONDER_PAUSE)
        text: Result = await asyncio.to_thread(CliRunner().invoke, main, args, obj=ANNOUNCED_ONLY)
        assert f"1. tcp {ZEBRA}:{zebra_port}  zpl  ZT410-203dpi" in text.output
        assert 'mDNS "Zebra ZT410"' in text.output
        quiet: Result = await asyncio.to_thread(CliRunner().invoke, main, [*args, "--no-mdns"], obj=ANNOUNCED_ONLY)
        assert quiet.output.startswith("no printer answered\n") and "asked: " in quiet.output, quiet.output
        assert "mDNS" not in quiet.output and "--host HOST[:PORT]" in quiet.output  # what was asked, and what next
        assert zebra.log == [] and brother.log == [] and zebra.printed() == brother.printed() == []
    finally:
        for item in stack:
            await item.stop()  # type: ignore[attr-defined]
