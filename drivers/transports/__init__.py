"""Links to printers: tcp (asyncio streams), usb (pyusb), serial (pyserial)."""

from __future__ import annotations

from typing import Any

from drivers.base import DriverError
from drivers.config import DriverConfig
from drivers.transports.base import Transport
from drivers.transports.serial import SerialTransport
from drivers.transports.tcp import TcpTransport
from drivers.transports.usb import UsbTransport

__all__ = ["SerialTransport", "TcpTransport", "Transport", "UsbTransport", "build_transport"]


def build_transport(config: DriverConfig, usb_backend: Any = None) -> Transport:
    """Make the link a config asks for (not opened). ``usb_backend`` lets tests plug in an emulated USB device."""
    if config.transport == "tcp":
        if config.host is None:
            raise DriverError("transport 'tcp' needs 'host'")
        return TcpTransport(config.host, config.port, config.connect_timeout, config.io_timeout)
    if config.transport == "serial":
        if config.device is None:
            raise DriverError("transport 'serial' needs 'device'")
        return SerialTransport(
            config.device,
            baudrate=config.baudrate,
            parity=config.parity,
            stopbits=config.stopbits,
            flow_control=config.flow_control,
            io_timeout=config.io_timeout,
        )
    if config.transport == "usb":
        return UsbTransport(
            vendor_id=config.vendor_id,
            product_id=config.product_id,
            serial_number=config.serial_number,
            interface=config.usb_interface,
            io_timeout=config.io_timeout,
            backend=usb_backend,
        )
    raise DriverError(f"no transport {config.transport!r} for a real printer")
