"""Serial printers: each port pyserial lists (USB-serial adapters included), or the ones named, asked at the
common baud rates in turn until one answers in a printer language."""

from __future__ import annotations

import asyncio
import contextlib

from serial.tools import list_ports

from drivers.base import DriverError
from drivers.detect.identify import Found, found, identify_transport
from drivers.transports.serial import SerialTransport

#: The factory settings of Zebra and receipt printers first, then the faster ones crews set.
BAUD_RATES = (9600, 19200, 38400, 115200)


def serial_ports() -> list[str]:
    """Device paths of the serial ports the kernel reports hardware for (on-board UARTs, USB-serial adapters)."""
    return sorted(p.device for p in list_ports.comports())


async def _probe(device: str, rates: tuple[int, ...], timeout: float) -> Found | None:
    for rate in rates:
        link = SerialTransport(device, baudrate=rate, io_timeout=timeout)
        try:
            await link.open()
        except DriverError:
            return None  # no such port, or no permission (the service user's group; see systemd/)
        try:
            what = await identify_transport(link, timeout)
        finally:
            with contextlib.suppress(DriverError):
                await link.aclose()
        if what is not None:
            return found("serial", f"{device} {rate} baud", what, device=device, baudrate=rate)
    return None


async def probe_serial(devices: list[str], timeout: float = 0.5, rates: tuple[int, ...] = BAUD_RATES) -> list[Found]:
    """Each of ``devices`` that answers at one of ``rates``; the ports are asked at the same time."""
    results = await asyncio.gather(*(_probe(d, rates, timeout) for d in devices))
    return [r for r in results if r is not None]
