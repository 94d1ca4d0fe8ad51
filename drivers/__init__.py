"""Printer drivers: transports (tcp, usb, serial) and printer languages (zpl, brother_ql, escpos, dymo, tspl), IPP
printers and CUPS queues (``ipp``), plus ``sim``."""

from __future__ import annotations

from typing import Any

from drivers.base import Badge, DeviceState, DeviceStatus, Driver, DriverError, Outcome, PrintResult, RenderError
from drivers.config import DriverConfig

__all__ = [
    "Badge",
    "DeviceState",
    "DeviceStatus",
    "Driver",
    "DriverConfig",
    "DriverError",
    "Outcome",
    "PrintResult",
    "RenderError",
    "build_driver",
    "build_language_driver",
]


def build_driver(config: DriverConfig, printer_name: str) -> Driver:
    """Make the driver a config asks for. Opening it is the caller's job."""
    if config.language == "sim":
        from drivers.sim import SimDriver

        return SimDriver(
            printer_name,
            print_time=config.print_time,
            control_file=config.control_file,
            print_log=config.print_log,
            status_timeout=config.io_timeout,
        )
    if config.language == "ipp":
        from drivers.ipp.driver import IppDriver

        assert config.uri is not None  # DriverConfig checks it
        if config.template is not None:
            raise DriverError("'template' is for ZPL printers; ipp badges are always drawn as graphics")
        return IppDriver(
            config.uri,
            printer_name=printer_name,
            label=config.label,
            tls_fingerprint=config.tls_fingerprint,
            connect_timeout=config.connect_timeout,
            io_timeout=config.io_timeout,
        )
    return build_language_driver(config, printer_name)


def build_language_driver(config: DriverConfig, printer_name: str, usb_backend: Any = None) -> Driver:
    """A real printer: the config's language over its transport. ``usb_backend`` plugs in an emulated USB device."""
    from drivers.languages import LANGUAGES, ZplDriver
    from drivers.transports import build_transport

    transport = build_transport(config, usb_backend=usb_backend)
    if config.language == "zpl":
        return ZplDriver(
            transport,
            printer_name=printer_name,
            label=config.label,
            io_timeout=config.io_timeout,
            template=config.template,
        )
    if config.language == "brother_ql":
        from drivers.languages.brother import BrotherDriver

        return BrotherDriver(
            transport, printer_name=printer_name, label=config.label, io_timeout=config.io_timeout, model=config.model
        )
    if config.language == "dymo":
        from drivers.languages.dymo import DymoDriver

        if config.template is not None:
            raise DriverError("'template' is for ZPL printers; dymo badges are always drawn as graphics")
        return DymoDriver(
            transport,
            printer_name=printer_name,
            label=config.label,
            io_timeout=config.io_timeout,
            model=config.model,
            product_id=config.product_id,
        )
    if config.template is not None:
        raise DriverError(f"'template' is for ZPL printers; {config.language} badges are always drawn as graphics")
    return LANGUAGES[config.language](
        transport, printer_name=printer_name, label=config.label, io_timeout=config.io_timeout
    )
