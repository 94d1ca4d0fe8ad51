"""Emulated printers on every link a venue uses: a TCP socket, a serial pty, and pyusb with an emulated device."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from drivers.emulators.core import EmulatedPrinter
from drivers.emulators.fronts import PtyFront, TcpFront
from drivers.emulators.usb_backend import EmulatedUsbBackend
from drivers.transports import SerialTransport, TcpTransport, Transport, UsbTransport


async def open_link(printer: EmulatedPrinter, link: str, stack: list[Any]) -> Transport:
    """Serve ``printer`` on ``link`` and return an (unopened) transport that reaches it."""
    await printer.start()
    stack.append(printer)
    if link == "tcp":
        front = TcpFront(printer)
        host, port = await front.start()
        stack.append(front)
        return TcpTransport(host, port, connect_timeout=1.0, io_timeout=0.5)
    if link == "serial":
        pty = PtyFront(printer)
        path = await pty.start()
        stack.append(pty)
        return SerialTransport(path, baudrate=115200, io_timeout=0.5)
    backend = EmulatedUsbBackend(printer, asyncio.get_running_loop(), serial_number="ZBR123")
    stack.append(backend)
    return UsbTransport(vendor_id=0x0A5F, product_id=0x0164, serial_number="ZBR123", io_timeout=0.5, backend=backend)


@pytest.fixture
async def serve() -> AsyncIterator[Callable[[EmulatedPrinter, str], Any]]:
    stack: list[Any] = []

    async def _serve(printer: EmulatedPrinter, link: str) -> Transport:
        return await open_link(printer, link, stack)

    yield _serve
    for item in reversed(stack):
        stop = getattr(item, "stop", None)
        if stop is not None:
            await stop()
