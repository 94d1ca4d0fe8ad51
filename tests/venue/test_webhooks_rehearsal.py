"""The webhooks rehearsal: the rehearsal venue (2,000 attendees, every tenth a speaker, 4 printers in 2 zones, kiosks
checking people in) with the speaker room's webhook and the organiser's, both added with the real command, and the
sender running as its own process under its own Redis user. The speaker room hears each arriving speaker once,
signed, and nothing of a reprint or of anyone else; the organiser hears a printer run out of labels once when it
starts and once when it clears."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Awaitable
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from attendees.importer import Importer
from attendees.store import AttendeeStore
from cli.redis_server import RedisServer
from drivers.sim import SimControl
from protocol.keys import Keys
from tests.support.agents import running_agent
from tests.support.attendee_files import rows
from tests.support.intake import Desk, start_desk
from tests.support.processes import ROOT, cli, create_user
from tests.support.waiting import wait_until
from tests.webhooks.receiver import Receiver
from webhooks.alerts import dlq_samples_key
from webhooks.sender import webhooks_status

ZONES = "zones:\n  hall-a: {printers: [a1, a2], tokens: [kiosk-1]}\n  hall-b: {printers: [b1, b2], tokens: [kiosk-2]}\n"
PEOPLE = 2000
CHECKED_IN = 60
#: Every tenth attendee is a speaker: code-0, code-10, ... (six of the sixty checked in).
SPEAKERS = [f"code-{n}" for n in range(0, CHECKED_IN, 10)]
#: The sender's alert thresholds (seconds), as short as tests/webhooks/test_alerts.py's, so the rehearsal waits for
#: its alerts little; printer_down and fault short too, so any other alert the scenario caused would be sent.
ALERTS = {"out_of_labels": 0.5, "printer_down": 0.5, "fault": 0.5, "clear_after": 0.5, "interval": 0.05}


@pytest.mark.slow
async def test_the_speaker_room_hears_each_speaker_arrive_once_and_the_organiser_the_printer_out_of_labels(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    people: list[dict[str, object]] = [
        {"attendee_id": f"code-{n}", "name": f"Guest {n}", "fields": {"ticket_type": _ticket_type(n)}}
        for n in range(PEOPLE)
    ]
    attendees = AttendeeStore(redis, venue)
    room, organiser = Receiver(), Receiver()
    secret_file = tmp_path / "speakers.secret"
    password = tmp_path / "webhooks.pw"
    sender_log = tmp_path / "webhooks.log"
    sender: subprocess.Popen[bytes] | None = None
    async with AsyncExitStack() as stack:
        for receiver in (room, organiser):
            await receiver.start()
            stack.push_async_callback(receiver.stop)
        # The admin adds the webhooks (the command creates the speaker room's secret file) and generates the
        # sender's user, before anyone is checked in: every print confirmed from then on is kept for the sender.
        room_added, organiser_added, user, _ = await asyncio.gather(
            asyncio.to_thread(
                cli, redis_server, venue, "webhooks", "add", "speakers", room.url, "--events", "printed,handed_over",
                "--when", "ticket_type=Speaker", "--when", "arrival=true", "--secret-file", str(secret_file),
            ),
            asyncio.to_thread(
                cli, redis_server, venue, "webhooks", "add", "organiser", organiser.url, "--events", "alert"
            ),
            create_user(redis, venue, password, role="webhooks"),
            Importer(attendees).load(iter(rows(people))),
        )  # fmt: skip
        assert room_added.returncode == 0, room_added.stderr
        assert organiser_added.returncode == 0, organiser_added.stderr
        secret = secret_file.read_bytes().strip()
        speaker_jobs = {await attendees.job_id_for(code): code for code in SPEAKERS}
        config = _sender_config(tmp_path, redis_server, venue, user, password)

        desk, client = await start_desk(tmp_path, venue, redis_server.url, ZONES)
        stack.push_async_callback(client.aclose)
        stack.push_async_callback(desk.client.close)
        for name in ("a1", "a2", "b1", "b2"):
            await stack.enter_async_context(running_agent(tmp_path, venue, redis_server.url, name, print_time=0.02))
        k = Keys(venue)
        await wait_until(lambda: _at_least(redis.zcard(k.hb), 4), 15)
        sender = _start_sender(config, sender_log)
        stack.callback(_kill, sender)  # the sender stops first (before the agents): SIGTERM below, else killed

        # Kiosks of both halls check people in, five at a time each (a kiosk token's cap of badges not yet
        # printed), the speakers among them in both halls.
        for start in range(0, CHECKED_IN, 10):
            await asyncio.gather(*(_check_in(desk, n) for n in range(start, start + 10)))
            await wait_until(partial(_printed_at_least, redis, venue, start + 10), 30)

        # Staff reprint a speaker's badge at the desk (coffee on it): a print, but not an arrival.
        reprinted = next(job for job, code in speaker_jobs.items() if code == "code-20")
        again = await desk.client.post(
            f"/v1/jobs/{reprinted}/reprint", json={"reason": "coffee on it"}, headers=desk.auth("staff")
        )
        assert again.status == 200, await again.text()
        await wait_until(partial(_printed_at_least, redis, venue, CHECKED_IN + 1), 30)

        # b2 runs out of labels, for as long as it takes the organiser to hear of it; then its roll is replaced.
        control = SimControl(tmp_path / "b2.control.json")
        control.set_fault("media_out")
        await wait_until(lambda: _statuses(organiser, "b2") == ["firing"] or _exited(sender), 30)
        control.set_fault(None)
        rolled, _ = await asyncio.gather(
            asyncio.to_thread(cli, redis_server, venue, "roll", "b2", "--labels", "500"),
            wait_until(lambda: len(_statuses(organiser, "b2")) >= 2 or _exited(sender), 30),
        )
        assert rolled.returncode == 0, rolled.stderr

        # Everything the record holds was queued and sent; then the sender evaluates its rules over more server
        # time than a hold and a clear_after together, so an alert that started again (or a clear sent twice)
        # would have been sent, as would a print queued twice.
        await wait_until(lambda: _nothing_waits(redis, venue) if not _exited(sender) else True, 30)
        await _evaluated_for(redis, venue, ALERTS["out_of_labels"] + ALERTS["clear_after"] + 1)
        assert not _exited(sender), sender_log.read_text()
        sender.send_signal(signal.SIGTERM)
        await asyncio.to_thread(sender.wait, 20)
    log = sender_log.read_text()
    assert sender is not None and sender.returncode == 0, log
    assert "Traceback" not in log and secret.decode() not in log

    # The speaker room: each checked-in speaker's arrival exactly once, signed with the room's secret; nothing of
    # the reprint, nothing of the 54 others.
    assert room.got == room.ok  # it answered every one: nothing was tried twice
    arrivals = [r.data for r in room.ok]
    assert sorted(d["job_id"] for d in arrivals) == sorted(speaker_jobs)
    assert sorted(d["job"]["attendee_id"] for d in arrivals) == sorted(SPEAKERS)
    assert all(r.signed_with(secret) and not r.signed_with(secret + b"x") for r in room.ok)
    assert all(
        (d["event"], d["kind"], d["arrival"], d["reprint"]) == ("printed", "badge", True, False) for d in arrivals
    )
    assert all(d["job"]["fields"]["ticket_type"] == "Speaker" for d in arrivals)
    assert len({r.delivery for r in room.ok}) == len(SPEAKERS)

    # The organiser: b2 out of labels, once when it started and once when it cleared, and nothing else (the
    # other printers printed all along; nothing went to the DLQ; no zone waited; Redis did not fail over).
    alerts = [r.data for r in organiser.ok]
    assert organiser.got == organiser.ok
    assert [(a["alert"], a["subject"], a["status"]) for a in alerts] == [
        ("out_of_labels", "b2", "firing"),
        ("out_of_labels", "b2", "resolved"),
    ], alerts
    firing, resolved = alerts
    assert firing["since"] == resolved["since"] and firing["id"] != resolved["id"]
    assert firing["printer"] == "b2" and "out of labels" in firing["summary"]


def _ticket_type(n: int) -> str:
    return "Speaker" if n % 10 == 0 else "Attendee"


def _sender_config(tmp_path: Path, server: RedisServer, venue: str, user: str, password: Path) -> Path:
    """``webhooks run``'s config: the venue, Redis as the webhooks user, and short alert thresholds."""
    path = tmp_path / "webhooks.yaml"
    thresholds = "".join(f"  {name}: {value}\n" for name, value in ALERTS.items())
    path.write_text(
        f"venue: {venue}\nredis:\n  url: {server.url}\n  username: {user}\n  password_file: {password}\n"
        f"alerts:\n{thresholds}",
        encoding="utf-8",
    )
    return path


def _start_sender(config: Path, log: Path) -> subprocess.Popen[bytes]:
    """``badge-agent webhooks run -c CONFIG`` as its own process, its log in ``log`` (a pipe nobody reads could fill
    and stall it)."""
    with log.open("ab") as out:  # the process has its own copy
        return subprocess.Popen(
            [sys.executable, "-m", "agent", "webhooks", "run", "-c", str(config)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def _exited(proc: subprocess.Popen[bytes] | None) -> bool:
    """The sender died: the waits stop at once and the assertion after them shows its log."""
    return proc is not None and proc.poll() is not None


async def _check_in(desk: Desk, n: int) -> None:
    """Attendee ``code-n`` scans their ticket at a kiosk of one hall or the other (speakers alternate halls too); a
    kiosk at its cap is answered 429 until one of its badges printed, and the attendee scans again."""
    kiosk = "kiosk" if (n + n // 10) % 2 else "kiosk-2"

    async def scanned() -> bool:
        resp = await desk.client.post(f"/v1/attendees/code-{n}/badge", headers=desk.auth(kiosk))
        if resp.status == 429:
            return False
        assert resp.status == 201, await resp.text()
        return True

    await wait_until(scanned, 30, every=0.2)


def _statuses(receiver: Receiver, printer: str) -> list[str]:
    return [r.data["status"] for r in receiver.ok if r.data.get("printer") == printer]


async def _at_least(value: Awaitable[Any], n: int) -> bool:
    return int(await value or 0) >= n


async def _printed_at_least(redis: Redis, venue: str, n: int) -> bool:
    """The venue counted ``n`` badges printed (its stats hash: every confirmed print, reprints too)."""
    return int(await redis.hget(Keys(venue).stats, "printed") or 0) >= n


async def _nothing_waits(redis: Redis, venue: str) -> bool:
    status = await webhooks_status(redis, venue)
    return status is not None and status["waiting"] == 0


async def _evaluated_for(redis: Redis, venue: str, seconds: float) -> None:
    """Until the sender evaluated its alert rules ``seconds`` (server time) after now: each evaluation samples the
    DLQ's length under the server time it ran at (``P alerts:dlq``), so the newest sample tells (not a sleep)."""
    key = dlq_samples_key(venue)
    (sec, usec) = await redis.time()
    until = int(sec) * 1000 + int(usec) // 1000 + seconds * 1000

    async def evaluated() -> bool:
        last = await redis.zrange(key, -1, -1, withscores=True)
        return bool(last) and float(last[0][1]) >= until

    await wait_until(evaluated, seconds + 30)
