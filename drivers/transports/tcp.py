"""Raw TCP (port 9100, "JetDirect"): the link of networked Zebra, Brother and ESC/POS printers."""

from __future__ import annotations

import asyncio
import contextlib

from drivers.base import DriverError
from drivers.transports.base import Transport


class TcpTransport(Transport):
    def __init__(self, host: str, port: int, connect_timeout: float, io_timeout: float) -> None:
        self.host = host
        self.port = port
        self.connect_timeout = connect_timeout
        self.io_timeout = io_timeout
        self.description = f"tcp {host}:{port}"
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    @property
    def is_open(self) -> bool:
        return self._writer is not None

    async def open(self) -> None:
        if self.is_open:
            return
        try:
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port), self.connect_timeout
            )
        except TimeoutError as exc:
            raise DriverError(f"{self.description}: no connection within {self.connect_timeout:g} s") from exc
        except OSError as exc:
            raise DriverError(f"{self.description}: cannot connect ({exc.strerror or exc})") from exc

    async def aclose(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is None:
            return
        writer.close()
        with contextlib.suppress(OSError, TimeoutError):
            await asyncio.wait_for(writer.wait_closed(), 1.0)

    async def write(self, data: bytes) -> None:
        writer = self._writer
        if writer is None:
            raise DriverError(f"{self.description}: not connected")
        try:
            writer.write(data)
            await asyncio.wait_for(writer.drain(), self.io_timeout)
        except TimeoutError as exc:
            await self.aclose()
            raise DriverError(f"{self.description}: printer stopped accepting data (send timed out)") from exc
        except OSError as exc:
            await self.aclose()
            raise DriverError(f"{self.description}: connection lost while sending ({exc})") from exc

    async def read_ready(self) -> bytes:
        reader = self._reader
        if reader is None:
            raise DriverError(f"{self.description}: not connected")
        # One turn of the event loop lets the selector hand over what the kernel already holds; then take what
        # the stream has buffered without waiting (StreamReader has no public "what is buffered" call).
        await asyncio.sleep(0)
        buffered = len(getattr(reader, "_buffer", b""))
        if buffered == 0:
            if reader.at_eof():
                await self.aclose()
                raise DriverError(f"{self.description}: printer closed the connection")
            return b""
        return await reader.read(buffered)

    async def read(self, within: float) -> bytes:
        reader = self._reader
        if reader is None:
            raise DriverError(f"{self.description}: not connected")
        try:
            data = await asyncio.wait_for(reader.read(4096), max(within, 0.001))
        except TimeoutError:
            return b""
        except OSError as exc:
            await self.aclose()
            raise DriverError(f"{self.description}: connection lost while reading ({exc})") from exc
        if not data:
            # The printer closed the connection: power cycle, or another host took its one session.
            await self.aclose()
            raise DriverError(f"{self.description}: printer closed the connection")
        return data
