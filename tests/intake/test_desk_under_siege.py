"""A desk at the door while one kiosk token floods the intake with requests and its tablet's script holds hundreds
of half-sent ones open (slowloris), against ``badge-agent intake`` as its own process: every request of the desk is
answered, none refused, while the kiosk is refused. How fast the desk is answered is bench/desk_siege.py's to say
(its p99), not a test's on a shared machine. Loopback only."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from cli.redis_server import RedisServer, free_port
from intake.tokens import TokenFile
from tests.support.intake import write_intake_config
from tests.support.processes import spawn_intake
from tests.support.siege import half_sent

#: Half-sent connections the kiosk's script holds open, re-opened as the intake closes them.
HALF_SENT = 300
#: Kiosk clients sending requests back to back, never waiting as Retry-After asks.
FLOODERS = 20
#: The desk's check-ins (a job created, then read back) while both go on.
CHECK_INS = 40


@pytest.fixture
def intake(tmp_path: Path, redis_server: RedisServer, venue: str) -> Iterator[tuple[str, str, str]]:
    port = free_port()
    config = write_intake_config(tmp_path, venue, redis_server.url, "limits: {header_timeout: 2}\n", port=port)
    tokens = TokenFile(tmp_path / "tokens.json")
    desk = tokens.add("desk-1", "desk")
    kiosk = tokens.add("kiosk-1", "kiosk")
    proc = spawn_intake(config, port, tmp_path / "intake.log")
    try:
        yield f"http://127.0.0.1:{port}", desk, kiosk
    finally:
        proc.terminate()
        proc.wait(10)


async def _flood(
    session: aiohttp.ClientSession, base: str, secret: str, stop: asyncio.Event, got: Counter[int]
) -> None:
    headers = {"Authorization": f"Bearer {secret}"}
    while not stop.is_set():
        with contextlib.suppress(aiohttp.ClientError):
            async with session.post(f"{base}/v1/jobs", json={"name": "Flood"}, headers=headers) as resp:
                await resp.read()
                got[resp.status] += 1


async def test_desks_are_answered_while_one_kiosk_token_floods_and_holds_half_sent_requests(
    intake: tuple[str, str, str],
) -> None:
    base, desk, kiosk = intake
    port = int(base.rsplit(":", 1)[1])
    stop = asyncio.Event()
    opened: Counter[str] = Counter()
    kiosk_got: Counter[int] = Counter()
    desk_got: Counter[int] = Counter()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        siege = [asyncio.create_task(half_sent(port, kiosk, stop, opened)) for _ in range(HALF_SENT)]
        siege += [asyncio.create_task(_flood(session, base, kiosk, stop, kiosk_got)) for _ in range(FLOODERS)]
        try:
            while opened["opened"] < HALF_SENT or sum(kiosk_got.values()) < 200:  # the siege is on first
                await asyncio.sleep(0.05)
            headers = {"Authorization": f"Bearer {desk}"}
            for n in range(CHECK_INS):
                job = {"attendee_id": f"desk-{n}", "name": f"Guest {n}"}
                async with session.post(f"{base}/v1/jobs", json=job, headers=headers) as resp:
                    desk_got[resp.status] += 1
                async with session.get(f"{base}/v1/jobs/desk-{n}", headers=headers) as resp:
                    desk_got[resp.status] += 1
                # A busy desk's pace (a check-in every 50 ms), inside the default rate of a token.
                await asyncio.sleep(0.05)
        finally:
            stop.set()
            for task in siege:
                task.cancel()
            await asyncio.gather(*siege, return_exceptions=True)
    assert desk_got == Counter({201: CHECK_INS, 200: CHECK_INS}), desk_got
    # The kiosk was refused past its cap and its rate: a flood, not a busy kiosk.
    assert kiosk_got[429] > 0, kiosk_got
