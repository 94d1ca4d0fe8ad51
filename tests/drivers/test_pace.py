"""The completion pace and the stale-input drain the languages rely on between status queries."""

from __future__ import annotations

import asyncio

from drivers.languages.pace import FAST, LEAD, CompletionPace
from drivers.transports import TcpTransport


def test_pace_polls_fast_until_it_has_learned_a_print_time() -> None:
    assert CompletionPace(0.1).wait(0.0) == FAST


def test_pace_polls_slowly_while_the_label_surely_prints_then_fast_near_its_end() -> None:
    pace = CompletionPace(0.1)
    for took in (1.0, 1.0, 5.0):  # one odd badge does not move the median
        pace.learn(took)
    assert pace.expected == 1.0
    assert pace.wait(0.0) == 0.1
    assert abs(pace.wait(1.0 - LEAD - 0.02) - 0.02) < 1e-9  # wakes exactly when fast polling should start
    assert pace.wait(1.0 - LEAD) == FAST
    assert pace.wait(3.0) == FAST  # late label: keep asking often


async def test_discard_input_drops_what_already_arrived_and_keeps_the_next_answer() -> None:
    answered = asyncio.Event()

    async def printer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"late answer")  # a reply to a question the host stopped waiting for
        await writer.drain()
        await reader.readexactly(1)
        writer.write(b"new answer")
        await writer.drain()
        answered.set()
        await reader.read()
        writer.close()

    server = await asyncio.start_server(printer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    link = TcpTransport("127.0.0.1", port, connect_timeout=1.0, io_timeout=1.0)
    await link.open()
    try:
        await asyncio.sleep(0.1)  # the late answer is in our receive buffer
        await link.discard_input()
        assert await link.read_ready() == b""
        await link.write(b"?")
        await asyncio.wait_for(answered.wait(), 1.0)
        assert await link.read_until(lambda b: b"answer" in b, 1.0) == b"new answer"
    finally:
        await link.aclose()
        server.close()
