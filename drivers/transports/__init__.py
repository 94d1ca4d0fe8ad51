"""Links to printers: tcp (asyncio streams), usb (pyusb), serial (pyserial).

Each transport's module is imported when that transport is built or named: an agent on a TCP Zebra does not load
pyusb and pyserial (about 1 MB resident on a Pi), one on a USB printer does not load pyserial.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from drivers.base import DriverError
from drivers.config import DriverConfig
from drivers.transports.base import Transport

if TYPE_CHECKING:
    from drivers.transports.serial import SerialTransport
    from drivers.transports.tcp import TcpTransport
    from drivers.transports.usb import UsbTransport

__all__ = ["SerialTransport", "TcpTransport", "Transport", "UsbTransport", "build_transport"]

_MODULES = {"SerialTransport": "serial", "TcpTransport": "tcp", "UsbTransport": "usb"}


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return getattr(importlib.import_module(f"drivers.transports.{_MODULES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_transport(config: DriverConfig, usb_backend: Any = None) -> Transport:
    """Make the link a config asks for (not opened). ``usb_backend`` lets tests plug in an emulated USB device."""
    if config.transport == "tcp":
        if config.host is None:
            raise DriverError("transport 'tcp' needs 'host'")
        from drivers.transports.tcp import TcpTransport

        return TcpTransport(config.host, config.port, config.connect_timeout, config.io_timeout)
    if config.transport == "serial":
        if config.device is None:
            raise DriverError("transport 'serial' needs 'device'")
        from drivers.transports.serial import SerialTransport

        return SerialTransport(
            config.device,
            baudrate=config.baudrate,
            parity=config.parity,
            stopbits=config.stopbits,
            flow_control=config.flow_control,
            io_timeout=config.io_timeout,
        )
    if config.transport == "usb":
        from drivers.transports.usb import UsbTransport

        return UsbTransport(
            vendor_id=config.vendor_id,
            product_id=config.product_id,
            serial_number=config.serial_number,
            interface=config.usb_interface,
            io_timeout=config.io_timeout,
            backend=usb_backend,
        )
    raise DriverError(f"no transport {config.transport!r} for a real printer")
