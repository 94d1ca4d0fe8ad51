"""RS-232 (pyserial): older Zebras and receipt printers on a USB-serial adapter. Blocking calls run in a worker
thread, each bounded by a pyserial timeout, so a dead line never blocks the event loop."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import serial

from drivers.base import DriverError
from drivers.transports.base import Transport

_PARITY = {"none": serial.PARITY_NONE, "even": serial.PARITY_EVEN, "odd": serial.PARITY_ODD}


class SerialTransport(Transport):
    def __init__(
        self,
        device: str,
        *,
        baudrate: int = 9600,
        parity: str = "none",
        stopbits: int = 1,
        flow_control: str = "none",
        io_timeout: float = 3.0,
    ) -> None:
        self.device = device
        self.settings: dict[str, Any] = {
            "baudrate": baudrate,
            "parity": _PARITY[parity],
            "stopbits": serial.STOPBITS_TWO if stopbits == 2 else serial.STOPBITS_ONE,
            "bytesize": serial.EIGHTBITS,
            "rtscts": flow_control == "rtscts",
            "xonxoff": flow_control == "xonxoff",
        }
        self.io_timeout = io_timeout
        self.description = f"serial {device} {baudrate} baud"
        self._port: serial.Serial | None = None

    @property
    def is_open(self) -> bool:
        return self._port is not None

    async def open(self) -> None:
        if self._port is not None:
            return
        try:
            self._port = await asyncio.to_thread(
                serial.Serial, self.device, timeout=self.io_timeout, write_timeout=self.io_timeout, **self.settings
            )
        except (serial.SerialException, OSError, ValueError) as exc:
            raise DriverError(f"{self.description}: cannot open ({exc})") from exc

    async def aclose(self) -> None:
        port, self._port = self._port, None
        if port is not None:
            # An unplugged adapter leaves nothing to close.
            with contextlib.suppress(serial.SerialException, OSError):
                await asyncio.to_thread(port.close)

    def _port_or_raise(self) -> serial.Serial:
        if self._port is None:
            raise DriverError(f"{self.description}: not open")
        return self._port

    async def write(self, data: bytes) -> None:
        port = self._port_or_raise()

        def _write() -> None:
            port.write(data)
            port.flush()

        try:
            await asyncio.to_thread(_write)
        except serial.SerialTimeoutException as exc:
            # Hardware flow control held us off for the whole timeout: the printer is busy, off, or faulted.
            raise DriverError(f"{self.description}: printer did not accept data within {self.io_timeout:g} s") from exc
        except (serial.SerialException, OSError) as exc:
            await self.aclose()
            raise DriverError(f"{self.description}: write failed ({exc})") from exc

    async def read_ready(self) -> bytes:
        return await self.read(0.0)  # pyserial's timeout 0 returns what the tty already holds

    async def read(self, within: float) -> bytes:
        port = self._port_or_raise()

        def _read() -> bytes:
            port.timeout = max(within, 0.0)
            first = bytes(port.read(1))  # blocks up to the timeout for the first byte only
            if not first:
                return b""
            return first + bytes(port.read(port.in_waiting)) if port.in_waiting else first

        try:
            return await asyncio.to_thread(_read)
        except (serial.SerialException, OSError) as exc:
            await self.aclose()
            raise DriverError(f"{self.description}: read failed ({exc})") from exc
