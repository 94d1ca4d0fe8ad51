"""The fleet commands as a user runs them: real processes against a real redis-server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from protocol.keys import Keys
from protocol.store import Store
from tests.support.processes import ROOT, badge_agent, cli


def test_enqueue_one_job_from_flags_then_again_is_a_duplicate(redis_server: RedisServer, venue: str) -> None:
    first = cli(redis_server, venue, "enqueue", "--attendee-id", "A-1", "--name", "Ada Lovelace", "--company", "AE")
    assert first.returncode == 0, first.stderr
    assert "row 1: enqueued A-1" in first.stdout and "enqueued 1, duplicate 0, rejected 0" in first.stdout
    again = cli(redis_server, venue, "enqueue", "--attendee-id", "A-1", "--name", "Other")
    assert "duplicate A-1: already known (state queued)" in again.stdout
    assert "enqueued 0, duplicate 1, rejected 0" in again.stdout


async def test_enqueue_a_file_reports_every_row_and_never_stops_at_a_bad_one(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    rows = [
        json.dumps({"attendee_id": "A-1", "name": "Zoë Ó Briain", "email": "z@example.org"}),
        "{not json",
        json.dumps({"attendee_id": "A-2"}),
        json.dumps({"attendee_id": "A-3", "name": "محمد", "printer": "hall-b-1"}),
        json.dumps({"attendee_id": "A-1", "name": "Zoë again"}),
        json.dumps({"attendee_id": "A-4", "name": "Bell\x07"}),
        json.dumps({"attendee_id": "A-5", "name": "x" * 5000}),
        json.dumps({"attendee_id": "A-6", "name": "李小龙"}),
    ]
    path = tmp_path / "people.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    result = cli(redis_server, venue, "enqueue", "--file", str(path))
    assert result.returncode == 1  # some rows were rejected
    out = result.stdout
    assert "row 1: enqueued A-1" in out
    assert "row 2: rejected: not valid JSON" in out
    assert "row 3: rejected: name is required" in out
    assert "row 4: enqueued A-3 (pinned to hall-b-1)" in out
    assert "row 5: duplicate A-1" in out
    assert "row 6: rejected: name: contains a control character (U+0007)" in out
    assert "row 7: rejected: name: must be at most 200 characters" in out
    assert "row 8: enqueued A-6" in out
    assert "enqueued 3, duplicate 1, rejected 4" in out
    assert "ignored fields not used on badges: email" in result.stderr
    k = Keys(venue)
    assert await redis.lrange(k.pool, 0, -1) == [b"A-6", b"A-1"]
    assert await redis.lrange(k.queue("hall-b-1"), 0, -1) == [b"A-3"]


def test_enqueue_csv_from_stdin(redis_server: RedisServer, venue: str) -> None:
    csv_text = "attendee_id,name,company,role\nC-1,Ana Marić,Infobip,Speaker\nC-2,,Nobody,\nC-3,山田太郎,ソニー,\n"
    result = cli(redis_server, venue, "enqueue", "--file", "-", "--format", "csv", stdin=csv_text)
    assert "row 2: enqueued C-1" in result.stdout
    assert "row 3: rejected: name: must not be empty" in result.stdout
    assert "enqueued 2, duplicate 0, rejected 1" in result.stdout


async def test_status_job_and_events_show_what_happened(redis: Redis, redis_server: RedisServer, venue: str) -> None:
    store = Store(redis, venue)
    for i in range(3):
        await store.enqueue(f"J-{i}", json.dumps({"job_id": f"J-{i}", "attendee_id": f"J-{i}", "name": "N"}), None)
    await store.beat("hall-a-1", {"state": "ready", "location": "Hall A, desk 1", "printed": 0}, 5000, first=True)
    await store.take("hall-a-1")
    begun = await store.begin("hall-a-1", "Hall A, desk 1", "J-0")
    await store.confirm("hall-a-1", "Hall A, desk 1", "J-0", begun.epoch)
    status = json.loads(cli(redis_server, venue, "status", "--json").stdout)
    assert status["pool"] == 2 and status["counts"]["printed"] == 1 and status["counts"]["queued"] == 2
    (printer,) = status["printers"]
    assert printer["name"] == "hall-a-1" and printer["location"] == "Hall A, desk 1" and printer["state"] == "ready"
    assert printer["beat_age"] is not None and printer["beat_age"] >= 0
    table = cli(redis_server, venue, "status")
    assert "hall-a-1" in table.stdout and "Hall A, desk 1" in table.stdout and "pool 2" in table.stdout
    job = cli(redis_server, venue, "job", "J-0")
    assert "printed" in job.stdout and "hall-a-1" in job.stdout
    assert [line.split()[1] for line in job.stdout.split("events:")[1].strip().splitlines()] == [
        "enqueued",
        "printing",
        "printed",
    ]
    missing = cli(redis_server, venue, "job", "nope")
    assert missing.returncode == 1 and "no job 'nope'" in missing.stderr
    events = [json.loads(line) for line in cli(redis_server, venue, "events", "--json").stdout.splitlines()]
    assert [e["event"] for e in events].count("enqueued") == 3 and events[-1]["event"] == "printed"


def test_fleet_commands_explain_a_missing_target_and_an_unreachable_redis(venue: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BADGE_")}
    result = subprocess.run(
        [sys.executable, "-m", "agent", "status"], cwd=ROOT, capture_output=True, text=True, env=env
    )
    assert result.returncode == 2 and "say which venue" in result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "agent", "status", "--redis", "redis://127.0.0.1:1/0", "--venue", venue],
        cwd=ROOT, capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert result.returncode == 69 and "cannot reach Redis" in result.stderr and "Traceback" not in result.stderr


HOSTILE = [b"evil\r\x1b[2J", b"bad\xffid\x9b31m", b"[blink]x[/blink]\xe2\x80\xae", b"L" * 1_000_000]


async def test_cli_output_escapes_and_truncates_what_redis_holds(
    redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    k = Keys(venue)
    for raw in HOSTILE:
        await redis.xadd(k.events, {b"event": b"dead", b"job_id": raw, b"reason": raw})
        await redis.lpush(k.dlq, raw)
        await redis.hset(k.job("x").encode()[:-1] + raw, mapping={b"state": b"dead", b"error": raw})
    health = {"state": "ready", "location": "Hall\x1b[31m A", "printed": 0}
    await Store(redis, venue).beat("hall-a-1", health, 5000, first=True)
    await redis.lpush(k.inflight("hall-a-1"), b"[blink]x[/blink]\r")
    outputs = [
        cli(redis_server, venue, "events"),
        cli(redis_server, venue, "events", "--json"),
        cli(redis_server, venue, "dlq", "list"),
        cli(redis_server, venue, "status"),
        cli(redis_server, venue, "status", "--json"),
    ]
    for result in outputs:
        assert result.returncode == 0, result.stderr
        assert not any(c in result.stdout for c in "\r\x1b\x9b\u202e\udcff"), result.args
        if "--json" not in result.args:  # JSON is exact (escaped, not cut): a tool reading it gets the real id
            assert max(len(line) for line in result.stdout.splitlines()) < 5000, result.args
    events, as_json, dlq = outputs[0].stdout, outputs[1].stdout, outputs[2].stdout
    assert "evil\\r\\u001b[2J" in events and "bad\\udcffid\\udc9b31m" in events and "more chars" in events
    assert "bad\\xffid\\x9b31m" in dlq and "evil\\x0d\\x1b[2J" in dlq
    assert "[blink]x[/blink]" in outputs[3].stdout  # shown as typed, not read as rich markup
    # --json stays exact: the escapes decode back to what Redis holds.
    decoded = [json.loads(line).get("job_id") for line in as_json.splitlines()]
    assert "evil\r\x1b[2J" in decoded and "L" * 1_000_000 in decoded


async def test_status_shows_a_wide_fleet_whole_and_job_shows_local_times(
    redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    store = Store(redis, venue)
    location = "Hall B, registration desk next to the cloakroom, behind the sponsor wall"
    names = [f"hall-b-registration-desk-{i}" for i in range(3)]
    for name in names:
        health = {"state": "device_down", "location": location, "printed": 0, "reasons": ["print head open"]}
        await store.beat(name, health, 5000, first=True)
    await store.enqueue("J-W", json.dumps({"job_id": "J-W", "attendee_id": "J-W", "name": "N"}), None)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # piped, no terminal: rich would assume 80
    env |= {"BADGE_REDIS_URL": redis_server.url, "BADGE_VENUE": venue}

    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "agent", *args], cwd=ROOT, capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    table = run("status")
    for name in names:
        [row] = [line for line in table.splitlines() if name in line]
        assert location in row and "print head open" in row, table
    job = run("job", "J-W")
    [enqueued] = [line for line in job.splitlines() if line.strip().startswith("enqueued_ms")]
    assert re.search(r"enqueued_ms  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(\d+ s ago\)  \(\d{13}\)$", enqueued), job


async def test_status_at_80_columns_keeps_each_state_whole(redis: Redis, redis_server: RedisServer, venue: str) -> None:
    """A terminal 80 wide: names, locations and job ids wrap; a printer's state is never folded mid-word."""
    store = Store(redis, venue)
    location = "Hall A, main entrance, left desk by the stairs"
    for i, state in enumerate(("device_down", "printing", "ready")):
        health = {"state": state, "location": location, "printed": 120, "reasons": ["out of labels", "print head open"]}
        await store.beat(f"hall-a-entrance-zebra-{i}", health, 5000, first=True)
    shown = cli_80(redis_server, venue, "status")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), shown.stdout
    cells = [cell.strip() for line in lines for cell in line.split("│")]
    for state in ("device_down", "printing", "ready"):
        assert state in cells or any(cell.startswith(f"{state} ") for cell in cells), shown.stdout


def cli_80(server: RedisServer, venue: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BADGE_REDIS_URL": server.url, "BADGE_VENUE": venue, "COLUMNS": "80"}
    return badge_agent(*args, env=env)
