"""Serial printers: each port pyserial lists (USB-serial adapters included), or the ones named, asked at the
common baud rates in turn until one answers in a printer language."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path

from serial.tools import list_ports

from drivers.base import DriverError
from drivers.detect.identify import Found, found, identify_transport
from drivers.transports.serial import SerialTransport

log = logging.getLogger(__name__)

#: The factory settings of Zebra and receipt printers first, then the faster ones crews set.
BAUD_RATES = (9600, 19200, 38400, 115200)


def serial_ports() -> list[str]:
    """Device paths of the serial ports the kernel reports hardware for (on-board UARTs, USB-serial adapters)."""
    return sorted(p.device for p in list_ports.comports())


def console_ports(active: Path = Path("/sys/class/tty/console/active")) -> set[str]:
    """The serial ports the kernel writes its console to (a Pi's ttyAMA0/ttyS0 login line): never asked, since a
    question there is typed at a shell."""
    try:
        names = active.read_text(encoding="ascii").split()
    except OSError:
        return set()
    return {f"/dev/{n}" for n in names if not n.startswith("tty") or not n[3:].isdigit()}


async def _probe(device: str, rates: tuple[int, ...], timeout: float, tspl: bool = False) -> Found | None:
    for rate in rates:
        link = SerialTransport(device, baudrate=rate, io_timeout=timeout)
        try:
            await link.open()
        except DriverError:
            return None  # no such port, or no permission (the service user's group; see systemd/)
        try:
            what = await identify_transport(link, timeout, tspl)
        finally:
            with contextlib.suppress(DriverError):
                await link.aclose()
        if what is not None:
            return found("serial", f"{device} {rate} baud", what, device=device, baudrate=rate)
    return None


def _not_consoles(devices: list[str], consoles: set[str]) -> list[str]:
    kept = []
    for device in devices:
        if device in consoles or os.path.realpath(device) in consoles:  # /dev/serial0 links to the console UART
            log.warning("%s is the system console: not asked", device)
        else:
            kept.append(device)
    return kept


async def probe_serial(
    devices: list[str],
    timeout: float = 0.5,
    rates: tuple[int, ...] = BAUD_RATES,
    named: frozenset[str] = frozenset(),
    consoles: set[str] | None = None,
) -> list[Found]:
    """Each of ``devices`` that answers at one of ``rates``; the ports are asked at the same time. TSPL (``~!T``) is
    asked only on the ports in ``named`` (the ones the user named); a console port is never asked at all."""
    devices = _not_consoles(devices, console_ports() if consoles is None else consoles)
    results = await asyncio.gather(*(_probe(d, rates, timeout, d in named) for d in devices))
    return [r for r in results if r is not None]
