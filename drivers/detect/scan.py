"""Every printer detect reaches, in the one order both ``badge-agent detect`` and ``setup --detected N`` count in:
USB, then serial ports, then network hosts."""

from __future__ import annotations

from typing import Any

from drivers.detect.identify import Found
from drivers.detect.network import probe_hosts
from drivers.detect.serial import probe_serial
from drivers.detect.usb import probe_usb


async def detect_all(
    targets: list[tuple[str, int]], devices: list[str], *, usb: bool, timeout: float, usb_backend: Any = None
) -> list[Found]:
    """USB devices (when ``usb``), the serial ``devices`` and the network ``targets`` that answer as printers."""
    found = await probe_usb(timeout, usb_backend) if usb else []
    found += await probe_serial(devices, timeout)
    return found + await probe_hosts(targets, timeout)
