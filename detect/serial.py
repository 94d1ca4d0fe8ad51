"""Serial printers: each USB-serial adapter the kernel lists, or the ports named, asked at the common baud rates in
turn until one answers in a printer language.

On-board UARTs (``ttyS*``, ``ttyAMA*``) are never asked unless named: on a Raspberry Pi or a VM one is often the
kernel console, and printer queries written there land on the console (or on whatever is wired to it). Nor is a
console the kernel names on its command line (``console=ttyUSB0,115200``), nor ``/dev/console``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from pathlib import Path

from detect.identify import Found, found, identify_transport
from drivers.base import DriverError
from drivers.transports.serial import SerialTransport

log = logging.getLogger(__name__)

#: The factory settings of Zebra and receipt printers first, then the faster ones crews set.
BAUD_RATES = (9600, 19200, 38400, 115200)


#: Serial ports on the board itself (PC UARTs, a Pi's PL011): never a USB-serial adapter, often the console.
_ON_BOARD = re.compile(r"ttyS\d+|ttyAMA\d+|console")
_USB_BUS = re.compile(r"usb\d+")


def kernel_consoles(cmdline: Path = Path("/proc/cmdline")) -> set[str]:
    """The tty names of the consoles the kernel was started with (``console=ttyS0,115200`` -> ``ttyS0``)."""
    try:
        words = cmdline.read_text(encoding="utf-8", errors="replace").split()
    except OSError:
        return set()
    return {w.removeprefix("console=").split(",", 1)[0] for w in words if w.startswith("console=")}


def serial_ports(sys_root: Path = Path("/sys"), cmdline: Path = Path("/proc/cmdline")) -> list[str]:
    """Device paths of the USB-serial adapters the kernel reports (their sysfs device sits on a USB bus), minus
    any the kernel uses as a console. ``sys_root`` and ``cmdline``: where sysfs and the kernel command line are
    read (tests pass trees of their own)."""
    consoles = kernel_consoles(cmdline)
    ports = []
    with contextlib.suppress(OSError):
        for entry in sorted((sys_root / "class" / "tty").iterdir()):
            name = entry.name
            if _ON_BOARD.fullmatch(name) or name in consoles:
                continue
            device = entry / "device"
            if not device.exists():
                continue  # a virtual terminal or a pty: no hardware behind it
            real = Path(os.path.realpath(device))
            parts = real.parts[len(Path(os.path.realpath(sys_root)).parts) :]
            if any(_USB_BUS.fullmatch(part) for part in parts):
                ports.append(f"/dev/{name}")
    return ports


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
    asked only on the ports in ``named`` (the ones the user named); a console port only when the user named it."""
    unnamed = _not_consoles([d for d in devices if d not in named], console_ports() if consoles is None else consoles)
    devices = [d for d in devices if d in named] + unnamed
    results = await asyncio.gather(*(_probe(d, rates, timeout, d in named) for d in devices))
    return [r for r in results if r is not None]
