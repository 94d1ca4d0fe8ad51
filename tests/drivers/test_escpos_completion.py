"""An ESC/POS badge's completion reply that arrives while the driver asks the real-time status is not left waiting."""

from __future__ import annotations

import asyncio
import time

from drivers.base import Outcome
from drivers.label import LabelConfig
from drivers.languages import escpos_info as ei
from drivers.languages import escpos_status as es
from drivers.languages.escpos import EscposDriver
from drivers.transports import TcpTransport

_PROCESS_ID = b"\x1d\x28\x48\x06\x00\x30\x30"


async def test_a_process_id_that_comes_with_the_status_replies_is_printed_at_once() -> None:
    """A printer that finishes the badge just as the host asks its status sends the process ID in the middle of the
    status replies: that is the badge's proof, and the driver must not sit out a poll interval before using it."""
    sent_token = asyncio.Event()

    async def printer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen = b""
        token = b""
        while data := await reader.read(65536):
            seen += data
            if not token and (at := seen.find(_PROCESS_ID)) >= 0 and len(seen) >= at + len(_PROCESS_ID) + 4:
                token = seen[at + len(_PROCESS_ID) : at + len(_PROCESS_ID) + 4]
                seen = seen[at + len(_PROCESS_ID) + 4 :]
                continue
            while (at := seen.find(es.DLE_EOT)) >= 0 and len(seen) >= at + 3:
                n = seen[at + 2]
                reply = bytes([es.format_realtime(n, None)])
                if token and n == 2:  # the badge is out between the first and second status answers
                    reply = b"\x37\x22" + token + b"\x00" + reply
                    sent_token.set()
                writer.write(reply)
                seen = seen[at + 3 :]
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(printer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    poll = 1.0
    driver = EscposDriver(
        TcpTransport("127.0.0.1", port, connect_timeout=1.0, io_timeout=1.0),
        label=LabelConfig(width_mm=72, height_mm=100),
        io_timeout=1.0,
        poll_interval=poll,
    )
    # What open learns from a printer that answers process IDs and is set for 80 mm paper.
    driver.completion_replies, driver.info = True, ei.PrinterInfo(paper_mm=80)
    await driver.transport.open()
    try:
        data = driver._job_bytes(b"badge")
        started = time.monotonic()
        await driver.transport.write(data)
        # One poll interval of silence (the badge prints), then the status query that carries the process ID.
        result = await driver._watch(started + 10 * poll)
        took = time.monotonic() - started
        assert sent_token.is_set()
        assert result.outcome is Outcome.PRINTED, result.reason
        assert took < 1.5 * poll, f"confirmed {took:.2f} s after sending: a second poll interval was waited out"
    finally:
        await driver.transport.aclose()
        server.close()
