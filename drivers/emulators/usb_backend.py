"""A pyusb backend (``usb.backend.IBackend``) that presents an emulated printer as a USB printer-class device.

pyusb does the real work above it (finding the device, reading its descriptors, claiming the interface, bulk
transfers with timeouts, string descriptors for the serial number), so the USB transport is exercised with the
same calls it makes on a venue's Pi. Bulk transfers arrive on pyusb's worker thread and are handed to the
printer on its event loop; replies wait in a thread-safe queue for the next bulk IN read.
"""

from __future__ import annotations

import asyncio
import errno
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import usb.backend
import usb.core

from drivers.emulators.core import EmulatedPrinter

EP_OUT, EP_IN = 0x01, 0x81
_TIMEOUT_ERRNO = -7  # LIBUSB_ERROR_TIMEOUT, what pyusb's libusb backend reports


@dataclass
class _Descriptor:
    fields: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.fields[name]
        except KeyError:
            raise AttributeError(name) from None


class EmulatedUsbBackend(usb.backend.IBackend):  # type: ignore[misc]
    def __init__(
        self,
        printer: EmulatedPrinter,
        loop: asyncio.AbstractEventLoop,
        *,
        vendor_id: int = 0x0A5F,
        product_id: int = 0x0164,
        serial_number: str = "EMU0001",
        max_packet: int = 512,
    ) -> None:
        self.printer = printer
        self.loop = loop
        self.strings = {1: "Emulated", 2: f"{printer.kind} badge printer", 3: serial_number}
        self.kernel_driver_active = True  # like usblp holding it: the transport must detach it
        self.claimed = False
        self.max_packet = max_packet
        self._replies: deque[bytes] = deque()
        self._ready = threading.Condition()
        self._config = 0
        self._device = _Descriptor(
            {
                "bLength": 18,
                "bDescriptorType": 1,
                "bcdUSB": 0x0200,
                "bDeviceClass": 0,
                "bDeviceSubClass": 0,
                "bDeviceProtocol": 0,
                "bMaxPacketSize0": 64,
                "idVendor": vendor_id,
                "idProduct": product_id,
                "bcdDevice": 0x0100,
                "iManufacturer": 1,
                "iProduct": 2,
                "iSerialNumber": 3,
                "bNumConfigurations": 1,
                "address": 5,
                "bus": 1,
                "port_number": 1,
                "port_numbers": (1,),
                "speed": 3,
            }
        )

    # -- the device's world ---------------------------------------------------------------------------------------
    def _check_powered(self) -> None:
        if self.printer.fault == "power_off":
            raise usb.core.USBError("No such device (it may have been disconnected)", -4, errno.ENODEV)

    def _reply(self, data: bytes) -> None:  # called on the event loop by the printer
        with self._ready:
            self._replies.append(bytes(data))
            self._ready.notify_all()

    # -- IBackend -------------------------------------------------------------------------------------------------
    def enumerate_devices(self) -> Any:
        if self.printer.fault != "power_off":
            yield "emulated-printer"

    def get_device_descriptor(self, dev: Any) -> Any:
        return self._device

    def get_configuration_descriptor(self, dev: Any, config: int) -> Any:
        return _Descriptor(
            {
                "bLength": 9,
                "bDescriptorType": 2,
                "wTotalLength": 32,
                "bNumInterfaces": 1,
                "bConfigurationValue": 1,
                "iConfiguration": 0,
                "bmAttributes": 0xC0,
                "bMaxPower": 1,
                "extra_descriptors": [],
            }
        )

    def get_interface_descriptor(self, dev: Any, intf: int, alt: int, config: int) -> Any:
        return _Descriptor(
            {
                "bLength": 9,
                "bDescriptorType": 4,
                "bInterfaceNumber": 0,
                "bAlternateSetting": 0,
                "bNumEndpoints": 2,
                "bInterfaceClass": 7,  # printer
                "bInterfaceSubClass": 1,
                "bInterfaceProtocol": 2,  # bidirectional
                "iInterface": 0,
                "extra_descriptors": [],
            }
        )

    def get_endpoint_descriptor(self, dev: Any, ep: int, intf: int, alt: int, config: int) -> Any:
        return _Descriptor(
            {
                "bLength": 7,
                "bDescriptorType": 5,
                "bEndpointAddress": (EP_OUT, EP_IN)[ep],
                "bmAttributes": 2,  # bulk
                "wMaxPacketSize": self.max_packet,
                "bInterval": 0,
                "bRefresh": 0,
                "bSynchAddress": 0,
                "extra_descriptors": [],
            }
        )

    def open_device(self, dev: Any) -> Any:
        self._check_powered()
        return dev

    def close_device(self, dev_handle: Any) -> None:
        self.claimed = False

    def set_configuration(self, dev_handle: Any, config_value: int) -> None:
        self._config = config_value

    def get_configuration(self, dev_handle: Any) -> int:
        if not self._config:
            raise usb.core.USBError("Configuration not set", -5, errno.EIO)
        return self._config

    def claim_interface(self, dev_handle: Any, intf: int) -> None:
        self._check_powered()
        if self.kernel_driver_active:
            raise usb.core.USBError("Resource busy (usblp holds it)", -6, errno.EBUSY)
        self.claimed = True

    def release_interface(self, dev_handle: Any, intf: int) -> None:
        self.claimed = False

    def is_kernel_driver_active(self, dev_handle: Any, intf: int) -> bool:
        return self.kernel_driver_active

    def detach_kernel_driver(self, dev_handle: Any, intf: int) -> None:
        self.kernel_driver_active = False

    def attach_kernel_driver(self, dev_handle: Any, intf: int) -> None:
        self.kernel_driver_active = True

    def ctrl_transfer(
        self, dev_handle: Any, bmRequestType: int, bRequest: int, wValue: int, wIndex: int, data: Any, timeout: int
    ) -> int:
        self._check_powered()
        if bRequest != 0x06 or wValue >> 8 != 3:  # only GET_DESCRIPTOR(string) is needed
            raise usb.core.USBError("Pipe error (request not supported)", -9, errno.EPIPE)
        index = wValue & 0xFF
        payload = b"\x09\x04" if index == 0 else self.strings.get(index, "").encode("utf-16-le")
        desc = bytes([2 + len(payload), 3]) + payload
        n = min(len(desc), len(data))
        data[:n] = type(data)(data.typecode, desc[:n])
        return n

    def bulk_write(self, dev_handle: Any, ep: int, intf: int, data: Any, timeout: int) -> int:
        self._check_powered()
        payload = bytes(data)
        self.loop.call_soon_threadsafe(self.printer.receive, payload, self._reply)
        return len(payload)

    def bulk_read(self, dev_handle: Any, ep: int, intf: int, buff: Any, timeout: int) -> int:
        self._check_powered()
        with self._ready:
            if not self._replies and not self._ready.wait_for(lambda: bool(self._replies), timeout / 1000):
                raise usb.core.USBTimeoutError("Operation timed out", _TIMEOUT_ERRNO, errno.ETIMEDOUT)
            chunk = self._replies.popleft()
            n = min(len(chunk), len(buff))
            if n < len(chunk):
                self._replies.appendleft(chunk[n:])
        buff[:n] = type(buff)(buff.typecode, chunk[:n])
        return n
