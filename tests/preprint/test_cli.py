"""``badge-agent preprint`` as staff type it: one clear message and exit 2 for what cannot be done, never a
traceback; a plan, its status, its PDF, done, the void list and rm."""

from __future__ import annotations

import json
from pathlib import Path

from redis.asyncio import Redis

from attendees.importer import Importer
from attendees.store import AttendeeStore
from cli.redis_server import RedisServer
from tests.support.attendee_files import rows
from tests.support.processes import cli

PEOPLE = [
    {"attendee_id": "a1", "name": "Eva Adams", "fields": {"ticket_type": "Visitor"}},
    {"attendee_id": "k1", "name": "Jan Kowalski", "fields": {"ticket_type": "Speaker"}},
    {"attendee_id": "m1", "name": "Anna Müller", "fields": {"ticket_type": "Visitor"}},
]


async def test_the_night_before_from_the_command_line(
    redis: Redis, redis_server: RedisServer, venue: str, tmp_path: Path
) -> None:
    attendees = AttendeeStore(redis, venue)
    await Importer(attendees).load(iter(rows(PEOPLE)))
    for args, message in (
        (["plan", "--box-size", "0"], "--box-size must be 1-100000 badges a box (it was 0)"),
        (["plan", "--ticket-type", "Speeker"], "no attendee has ticket type 'Speeker' (the list's ticket types:"),
        (["status", "nope"], "no pre-print run named 'nope' in this venue (runs: none)"),
        (["done", "nope"], "no pre-print run named 'nope'"),
    ):
        done = cli(redis_server, venue, "preprint", *args)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
    planned = cli(redis_server, venue, "preprint", "plan", "--box-size", "2", "--pickup", "Hall A")
    assert planned.returncode == 0, planned.stderr
    assert "run run-1: planned" in planned.stdout and "Box 1: Adams - Kowalski (2)" in planned.stdout
    assert "Box 2: Müller (1)" in planned.stdout
    done = cli(redis_server, venue, "preprint", "done", "run-1")
    assert done.returncode == 2 and "has no PDF (write it first" in done.stderr
    pdf = cli(redis_server, venue, "preprint", "pdf", "run-1", "-o", str(tmp_path / "b.pdf"), "--dpi", "72")
    assert pdf.returncode == 0, pdf.stderr
    assert "3 badges on 4 pages" in pdf.stdout and (tmp_path / "b.pdf").read_bytes().startswith(b"%PDF-1.4")
    assert cli(redis_server, venue, "preprint", "done", "run-1").returncode == 0
    again = cli(redis_server, venue, "preprint", "done", "run-1")
    assert again.returncode == 2 and "was marked printed already" in again.stderr
    await attendees.edit("m1", {"name": "Anna Schmidt"})
    voids = cli(redis_server, venue, "preprint", "voids", "run-1")
    assert "box 2: Anna Müller (m1): name changed — pull" in voids.stdout
    status = json.loads(cli(redis_server, venue, "preprint", "status", "--json").stdout)
    assert status[0]["counts"]["void"] == 1 and status[0]["counts"]["in_boxes"] == 2
    refused = cli(redis_server, venue, "preprint", "rm", "run-1")
    assert refused.returncode == 2 and "is done: its badges exist" in refused.stderr
