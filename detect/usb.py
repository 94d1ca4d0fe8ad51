"""USB printers: every device of the USB printer class (7) or from a badge-printer vendor, asked over its bulk
endpoints through the driver's own transport (``drivers/transports/usb.py``)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import usb.core
import usb.util

from detect.identify import Found, found, identify_dymo, identify_transport
from drivers.base import DriverError
from drivers.languages.dymo_status import VENDOR_ID as DYMO_VENDOR
from drivers.transports.usb import UsbTransport, is_printer

#: Makers of the printers the drivers speak to; some of their devices present a vendor-specific class, not 7.
PRINTER_VENDORS = {
    0x0A5F: "Zebra",
    0x04F9: "Brother",
    0x04B8: "Epson",
    0x0519: "Star",
    0x1504: "Bixolon",
    0x0DD4: "Custom",
    0x0FE6: "ICS (ESC/POS clones)",
    0x0922: "DYMO",
    0x1203: "TSC",
}
TSC_VENDOR = 0x1203


def _serial_of(dev: Any) -> str | None:
    if not dev.iSerialNumber:
        return None
    try:
        return str(usb.util.get_string(dev, dev.iSerialNumber))
    except (usb.core.USBError, ValueError, NotImplementedError):
        return None  # no permission to read strings (udev rules not installed) or no string there


def printer_devices(backend: Any = None) -> list[tuple[int, int, str | None]]:
    """(vendor id, product id, serial number) of each candidate device; [] when the machine has no libusb."""

    def candidate(dev: Any) -> bool:
        if dev.idVendor in PRINTER_VENDORS:
            return True
        try:
            return is_printer(dev)
        except usb.core.USBError:
            return False

    try:
        devices = list(usb.core.find(find_all=True, backend=backend, custom_match=candidate))
    except usb.core.NoBackendError:
        return []
    return [(d.idVendor, d.idProduct, _serial_of(d)) for d in devices]


async def _probe(vendor: int, product: int, serial: str | None, timeout: float, backend: Any) -> Found | None:
    link = UsbTransport(
        vendor_id=vendor,
        product_id=product,
        serial_number=serial,
        io_timeout=timeout,
        backend=backend,
        give_back_to_kernel=True,
    )
    try:
        await link.open()
    except DriverError:
        return None  # in use by another program, or no permission: detect says nothing it cannot check
    try:
        if vendor == DYMO_VENDOR:
            try:
                what = await identify_dymo(link.ask, timeout, product)
            except DriverError:
                what = None
        else:
            what = await identify_transport(link, timeout, tspl=vendor == TSC_VENDOR)
    finally:
        with contextlib.suppress(DriverError):
            await link.aclose()
    if what is None:
        return None
    ids = {"vendor_id": f"{vendor:04x}", "product_id": f"{product:04x}"}
    if serial:
        ids["serial_number"] = serial
    what.setdefault("serial_number", serial or "")
    address = f"{vendor:04x}:{product:04x}" + (f" serial {serial}" if serial else "")
    return found("usb", address, what, **ids)


async def probe_usb(timeout: float = 0.5, backend: Any = None) -> list[Found]:
    """Each USB printer that answers in a printer language, one after another (they share the bus)."""
    devices = await asyncio.to_thread(printer_devices, backend)
    results = [await _probe(v, p, s, timeout, backend) for v, p, s in devices]
    return [r for r in results if r is not None]
