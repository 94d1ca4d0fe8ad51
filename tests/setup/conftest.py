"""What the setup tests share: a Brother QL emulator on loopback TCP for ``--host``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from drivers.emulators.brother import BrotherPrinter
from drivers.emulators.fronts import TcpFront


@pytest.fixture
async def brother() -> AsyncIterator[tuple[BrotherPrinter, str]]:
    """A Brother QL emulator on loopback TCP, and its HOST:PORT for --host."""
    printer = BrotherPrinter("p1", print_time=0.05)
    await printer.start()
    front = TcpFront(printer)
    host, port = await front.start()
    try:
        yield printer, f"{host}:{port}"
    finally:
        await front.stop()
        await printer.stop()
