"""Printer drivers: transports (tcp, usb, serial) and printer languages (zpl, brother_ql, escpos), plus ``sim``."""

from __future__ import annotations

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
    raise NotImplementedError(f"driver {config.language} over {config.transport} is not built yet")
