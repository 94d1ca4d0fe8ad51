"""USB (pyusb): find the printer by vendor/product id (and serial number), or any device of the USB printer class.

The kernel's ``usblp`` driver claims printers first; we detach it (udev rules give the service user access).
Bulk OUT carries the job, bulk IN the status replies. Every blocking libusb call runs in a worker thread with a
libusb timeout, so an unplugged printer costs at most that timeout, never a hung event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
from typing import Any

import usb.core
import usb.util

from drivers.base import DriverError
from drivers.transports.base import Transport

USB_CLASS_PRINTER = 7


def is_printer(dev: Any) -> bool:
    if dev.bDeviceClass == USB_CLASS_PRINTER:
        return True
    return any(intf.bInterfaceClass == USB_CLASS_PRINTER for cfg in dev for intf in cfg)


class UsbTransport(Transport):
    def __init__(
        self,
        *,
        vendor_id: int | None = None,
        product_id: int | None = None,
        serial_number: str | None = None,
        interface: int = 0,
        io_timeout: float = 3.0,
        backend: Any = None,
        give_back_to_kernel: bool = False,
    ) -> None:
        self.vendor_id = vendor_id
        self.product_id = product_id
        self.serial_number = serial_number
        self.interface = interface
        self.io_timeout = io_timeout
        self.backend = backend  # a pyusb backend; tests pass an emulated device's backend
        # A probe (badge-agent detect) must leave the machine as it found it: a CUPS queue on the printer needs
        # usblp back. The agent keeps the printer, so it does not.
        self.give_back_to_kernel = give_back_to_kernel
        self._detached = False
        ident = f"{vendor_id:04x}:{product_id:04x}" if vendor_id is not None and product_id is not None else "printer"
        self.description = f"usb {ident}" + (f" serial {serial_number}" if serial_number else "")
        self._dev: Any = None
        self._ep_out: Any = None
        self._ep_in: Any = None

    @property
    def is_open(self) -> bool:
        return self._dev is not None

    def _find(self) -> Any:
        def match(dev: Any) -> bool:
            if self.vendor_id is not None and (dev.idVendor, dev.idProduct) != (self.vendor_id, self.product_id):
                return False
            if self.vendor_id is None and not is_printer(dev):
                return False
            return self.serial_number is None or usb.util.get_string(dev, dev.iSerialNumber) == self.serial_number

        return usb.core.find(backend=self.backend, custom_match=match)

    def _open_blocking(self) -> None:
        dev = self._find()
        if dev is None:
            raise DriverError(f"{self.description}: no such device (unplugged or powered off?)")
        try:
            if dev.is_kernel_driver_active(self.interface):
                dev.detach_kernel_driver(self.interface)  # usblp holds it otherwise (EBUSY)
                self._detached = True
        except NotImplementedError:
            pass  # backends without kernel drivers (macOS, tests)
        try:
            dev.get_active_configuration()
        except usb.core.USBError:
            dev.set_configuration()
        intf = dev.get_active_configuration()[(self.interface, 0)]
        usb.util.claim_interface(dev, self.interface)

        def direction(want: int) -> Any:
            return usb.util.find_descriptor(
                intf,
                custom_match=lambda ep: (
                    usb.util.endpoint_direction(ep.bEndpointAddress) == want
                    and usb.util.endpoint_type(ep.bmAttributes) == usb.util.ENDPOINT_TYPE_BULK
                ),
            )

        self._ep_out = direction(usb.util.ENDPOINT_OUT)
        self._ep_in = direction(usb.util.ENDPOINT_IN)
        if self._ep_out is None:
            usb.util.dispose_resources(dev)
            raise DriverError(f"{self.description}: interface {self.interface} has no bulk OUT endpoint")
        self.can_read = self._ep_in is not None
        self._dev = dev

    async def open(self) -> None:
        if self._dev is not None:
            return
        try:
            await asyncio.to_thread(self._open_blocking)
        except usb.core.USBError as exc:
            hint = " (permission denied: install systemd/99-badge-printers.rules)" if exc.errno == errno.EACCES else ""
            raise DriverError(f"{self.description}: cannot open ({exc}){hint}") from exc

    async def aclose(self) -> None:
        dev, self._dev = self._dev, None
        if dev is None:
            return

        def _close() -> None:
            with contextlib.suppress(usb.core.USBError):  # already gone (unplugged)
                usb.util.release_interface(dev, self.interface)
            usb.util.dispose_resources(dev)
            if self._detached and self.give_back_to_kernel:
                with contextlib.suppress(usb.core.USBError, NotImplementedError):
                    dev.attach_kernel_driver(self.interface)
                self._detached = False

        await asyncio.to_thread(_close)

    async def write(self, data: bytes) -> None:
        dev, ep = self._dev, self._ep_out
        if dev is None:
            raise DriverError(f"{self.description}: not open")
        timeout_ms = int(self.io_timeout * 1000)
        try:
            written = await asyncio.to_thread(dev.write, ep.bEndpointAddress, data, timeout_ms)
        except usb.core.USBTimeoutError as exc:
            raise DriverError(f"{self.description}: printer did not take data within {self.io_timeout:g} s") from exc
        except usb.core.USBError as exc:
            await self.aclose()
            raise DriverError(f"{self.description}: write failed ({exc})") from exc
        if written != len(data):
            raise DriverError(f"{self.description}: short write ({written} of {len(data)} bytes)")

    async def read(self, within: float) -> bytes:
        dev, ep = self._dev, self._ep_in
        if dev is None:
            raise DriverError(f"{self.description}: not open")
        if ep is None:
            return b""  # one-way device: silence, which never reads as "ready"
        timeout_ms = max(1, int(within * 1000))
        try:
            data = await asyncio.to_thread(dev.read, ep.bEndpointAddress, ep.wMaxPacketSize * 8, timeout_ms)
        except usb.core.USBTimeoutError:
            return b""
        except usb.core.USBError as exc:
            await self.aclose()
            raise DriverError(f"{self.description}: read failed ({exc})") from exc
        return bytes(data)
