"""How hosts reach an emulated printer: a TCP port (raw 9100 style) and a serial pty (``os.openpty()``).

Power off closes the TCP listener and every connection (the host sees "connection refused"); a pty has no way to
say so and simply goes silent, like a real serial printer that is switched off.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import termios
import tty

from drivers.emulators.core import EmulatedPrinter

_WATCH = 0.02


class TcpFront:
    def __init__(self, printer: EmulatedPrinter, host: str = "127.0.0.1", port: int = 0) -> None:
        self.printer = printer
        self.host = host
        self.port = port
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._watcher: asyncio.Task[None] | None = None

    async def start(self) -> tuple[str, int]:
        """Listen (port 0 picks a free one) and return the address hosts connect to."""
        await self._listen()
        self._watcher = asyncio.create_task(self._watch_power())
        return self.host, self.port

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._client, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while data := await reader.read(65536):
                self.printer.receive(data, writer.write)
        except (ConnectionError, OSError):
            pass  # the host went away; the printer keeps what it received
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _drop_all(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        if server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(server.wait_closed(), 1.0)

    async def _watch_power(self) -> None:
        while True:
            await asyncio.sleep(_WATCH)
            off = self.printer.fault == "power_off"
            if off and self._server is not None:
                await self._drop_all()
            elif not off and self._server is None:
                await self._listen()

    async def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None
        await self._drop_all()


class PtyFront:
    """A pty pair: the host opens :attr:`path` with pyserial; we answer on the master side.

    With ``baudrate``, the printer's line runs at that rate: bytes the host sends while its side of the line is
    set to another rate are not understood (a real UART sees framing garbage), so probing rates can be tested.
    """

    def __init__(self, printer: EmulatedPrinter, baudrate: int | None = None) -> None:
        self.printer = printer
        self.baudrate = baudrate
        self.path = ""
        self._master = -1
        self._slave = -1

    async def start(self) -> str:
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)  # no echo, no CR/LF translation: a serial line carries bytes as they are
        os.set_blocking(self._master, False)
        self.path = os.ttyname(self._slave)
        asyncio.get_running_loop().add_reader(self._master, self._readable)
        return self.path

    def _readable(self) -> None:
        try:
            data = os.read(self._master, 65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            return  # EIO: no process holds the slave end right now
        if data and self._same_rate():
            self.printer.receive(data, self._write)

    def _same_rate(self) -> bool:
        if self.baudrate is None:
            return True
        speed = getattr(termios, f"B{self.baudrate}")
        return bool(termios.tcgetattr(self._slave)[4] == speed)

    def _write(self, data: bytes) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._master, data)

    async def stop(self) -> None:
        if self._master >= 0:
            asyncio.get_running_loop().remove_reader(self._master)
            os.close(self._master)
            os.close(self._slave)
            self._master = self._slave = -1
