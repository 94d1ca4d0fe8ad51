"""detect finds printers that announce themselves over mDNS: real zeroconf announcements on loopback, each for an
emulator, asked on the raw port announced (``_pdl-datastream``) or on 9100 (``_ipp``), and none prints a label."""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
from collections.abc import AsyncIterator

import pytest
from click.testing import CliRunner, Result
from zeroconf import IPVersion
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

from agent.cli import main
from agent.commands.detect import Scanners
from drivers.detect.mdns import browse
from drivers.emulators import EMULATORS, EmulatedPrinter
from drivers.emulators.fronts import TcpFront

LOOPBACK = Scanners(serial_ports=list, subnets=list, mdns_interfaces=["127.0.0.1"])


def _info(service: str, name: str, address: str, port: int) -> AsyncServiceInfo:
    return AsyncServiceInfo(
        f"{service}.local.",
        f"{name}.{service}.local.",
        addresses=[socket.inet_aton(address)],
        port=port,
        server=f"{name.replace(' ', '-').lower()}.local.",
    )


@pytest.fixture
async def announcer() -> AsyncIterator[AsyncZeroconf]:
    """A zeroconf responder on loopback: what a network printer runs in its firmware."""
    zc = AsyncZeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
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


async def test_detect_finds_announced_printers_on_their_raw_port(announcer: AsyncZeroconf) -> None:
    tag = f"{os.getpid()}-{random.randrange(10**6)}"  # other test runs on this machine announce their own
    # A Brother that announces only IPP (port 631) is asked on 9100, at an address of its own on loopback.
    brother_host = f"127.{random.randrange(1, 255)}.{random.randrange(1, 255)}.{random.randrange(2, 255)}"
    stack: list[object] = []
    try:
        zebra, zebra_port = await _printer("zpl", "127.0.0.1", 0, stack)
        brother, _ = await _printer("brother_ql", brother_host, 9100, stack)
        raw = _info("_pdl-datastream._tcp", f"Zebra ZT410 {tag}", "127.0.0.1", zebra_port)
        await announcer.async_register_service(raw)
        await announcer.async_register_service(_info("_ipp._tcp", f"Brother QL-820NWB {tag}", brother_host, 631))
        await announcer.async_register_service(_info("_printer._tcp", f"Zebra ZT410 {tag}", "127.0.0.1", 515))

        announced = {a.name: a for a in await browse(1.0, ["127.0.0.1"])}
        assert (announced[f"Zebra ZT410 {tag}"].host, announced[f"Zebra ZT410 {tag}"].port) == ("127.0.0.1", zebra_port)
        assert (announced[f"Brother QL-820NWB {tag}"].port, announced[f"Brother QL-820NWB {tag}"].host) == (
            9100,
            brother_host,
        )
        # LPD's 515 is no raw port, and the raw-service announcement already named the Zebra's real one.
        assert ("127.0.0.1", 515) not in {(a.host, a.port) for a in announced.values()}
        assert ("127.0.0.1", 9100) not in {(a.host, a.port) for a in announced.values() if tag in a.name}

        args = ["detect", "--no-usb", "--timeout", "0.5"]
        listed: Result = await asyncio.to_thread(CliRunner().invoke, main, [*args, "--json"], obj=LOOPBACK)
        assert listed.exit_code == 0, listed.output
        mine = {f["announced"]: f for f in json.loads(listed.output) if tag in f["announced"]}
        z, b = mine[f"Zebra ZT410 {tag}"], mine[f"Brother QL-820NWB {tag}"]
        assert (z["language"], z["model"], z["driver"]["port"]) == ("zpl", "ZT410-203dpi", zebra_port)
        assert (b["language"], b["model"], b["driver"]["host"], b["driver"]["port"]) == (
            "brother_ql",
            "QL-820NWB",
            brother_host,
            9100,
        )
        text: Result = await asyncio.to_thread(CliRunner().invoke, main, args, obj=LOOPBACK)
        assert f"tcp 127.0.0.1:{zebra_port}  zpl  ZT410-203dpi" in text.output
        assert f'mDNS "Zebra ZT410 {tag}"' in text.output
        quiet: Result = await asyncio.to_thread(CliRunner().invoke, main, [*args, "--no-mdns"], obj=LOOPBACK)
        assert quiet.output == "no printer answered\n"
        assert zebra.log == [] and brother.log == [] and zebra.printed() == brother.printed() == []
    finally:
        for item in stack:
            await item.stop()  # type: ignore[attr-defined]
