"""What a kiosk's broken script does to the intake, for the siege test and bench/desk_siege.py alike."""

from __future__ import annotations

import asyncio
from collections import Counter


async def half_sent(port: int, secret: str, stop: asyncio.Event, opened: Counter[str]) -> None:
    """One connection that sends part of its headers and nothing more (slowloris), opened again each time the intake
    closes it, until ``stop`` is set. ``opened`` counts the connections made ("opened") and refused ("refused")."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            opened["refused"] += 1
            await asyncio.sleep(0.1)
            continue
        opened["opened"] += 1
        writer.write(f"GET /v1/printers HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {secret}\r\n".encode())
        stopped = asyncio.ensure_future(stop.wait())
        closed = asyncio.ensure_future(reader.read())  # until the intake closes it
        try:
            await asyncio.wait((stopped, closed), return_when=asyncio.FIRST_COMPLETED)
        finally:  # cancelled as well: neither waits on after this connection
            stopped.cancel()
            closed.cancel()
            if closed.done() and not closed.cancelled():
                closed.exception()  # a reset is the intake closing it as well: seen, not raised
            writer.close()
