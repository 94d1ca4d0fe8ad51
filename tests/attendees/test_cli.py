"""``badge-agent attendees`` as a user runs it, on a pretix export saved by Excel (cp1252, ";")."""

from __future__ import annotations

import csv
import datetime
import json
import secrets
import time
from pathlib import Path

from redis.asyncio import Redis

from attendees.store import AttendeeStore
from cli.redis_server import RedisServer
from protocol.keys import Keys
from protocol.store import Store
from tests.support.attendee_files import EVENTBRITE, PRETIX, listed
from tests.support.processes import cli


def pretix_file(tmp_path: Path, text: str = PRETIX) -> str:
    path = tmp_path / "pretix.csv"
    path.write_bytes(text.encode("cp1252"))
    return str(path)


async def test_import_a_pretix_export_then_show_search_and_export(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    path = pretix_file(tmp_path)
    result = cli(redis_server, venue, "attendees", "import", path, "--preset", "pretix")
    assert result.returncode == 1, result.stderr  # row 4 has no name: rejected, named
    assert "row 4: rejected: name is required" in result.stdout
    assert "CSV (semicolon-separated, cp1252): added 2, updated 0, unchanged 0, cancelled 0, rejected 1" in (
        result.stdout
    )
    assert await redis.llen(Keys(venue).pool) == 0  # nothing prints
    shown = cli(redis_server, venue, "attendees", "show", "s3cr3tqr1", "--json")
    data = json.loads(shown.stdout)
    assert (data["name"], data["company"], data["job_id"]) == ("Zoë Ó Briain", "Café Müller", "ABC12-1")
    assert (data["ticket_type"], data["order_code"], data["badge"]["state"]) == ("Exhibitor", "ABC12", "none")
    found = cli(redis_server, venue, "attendees", "search", "zoe", "o")
    assert "s3cr3tqr1  Zoë Ó Briain · Café Müller  badge: none" in found.stdout and "1 found" in found.stdout
    by_order = json.loads(cli(redis_server, venue, "attendees", "search", "abc12", "--json").stdout)
    assert sorted(a["code"] for a in by_order) == ["s3cr3tqr1", "s3cr3tqr2"]
    unknown = cli(redis_server, venue, "attendees", "show", "nope")
    assert unknown.returncode == 1 and "no attendee with that code" in unknown.stderr
    again = cli(redis_server, venue, "attendees", "import", path, "--preset", "pretix")
    assert "added 0, updated 0, unchanged 2, cancelled 0, rejected 1" in again.stdout
    out = tmp_path / "out.csv"
    exported = cli(redis_server, venue, "attendees", "export", "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    table = list(csv.DictReader(out.open(encoding="utf-8")))
    assert sorted(r["name"] for r in table) == ["François Gérard", "Zoë Ó Briain"]
    cli(redis_server, venue, "attendees", "export", "--checked-in", "-o", str(out))
    assert list(csv.DictReader(out.open(encoding="utf-8"))) == []


async def test_export_writes_when_a_badge_printed_with_its_date_and_offset(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    # A registration system reads the export days later: a time of day alone cannot say which day of the event.
    store = await listed(redis, venue)
    await store.badge("secret-renee", "kiosk")
    venue_store = Store(redis, venue)
    taken = await venue_store.take("hall-a-1")
    assert taken is not None
    begun = await venue_store.begin("hall-a-1", "Hall A", taken.job_id)
    before = time.time()
    await venue_store.confirm("hall-a-1", "Hall A", taken.job_id, begun.epoch)
    out = tmp_path / "checked-in.csv"
    exported = cli(redis_server, venue, "attendees", "export", "--checked-in", "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    [row] = list(csv.DictReader(out.open(encoding="utf-8")))
    assert row["name"] == "Renée Lefèvre" and row["printed_at"] == "Hall A"
    when = datetime.datetime.fromisoformat(row["printed_utc"])
    assert when.utcoffset() == datetime.timedelta(0), row["printed_utc"]
    assert abs(when.timestamp() - before) < 60, row["printed_utc"]


async def test_prune_and_dry_run(tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str) -> None:
    path = pretix_file(tmp_path)
    dry = cli(redis_server, venue, "attendees", "import", path, "--preset", "pretix", "--dry-run")
    assert "would load: added 2" in dry.stdout and await AttendeeStore(redis, venue).get("s3cr3tqr1") is None
    cli(redis_server, venue, "attendees", "import", path, "--preset", "pretix")
    fewer = PRETIX.replace(PRETIX.splitlines(keepends=True)[2], "")  # François's refund: gone from the export
    path2 = pretix_file(tmp_path, fewer)
    kept = cli(redis_server, venue, "attendees", "import", path2, "--preset", "pretix")
    assert "cancelled 0" in kept.stdout  # without --prune nothing is cancelled
    pruned = cli(redis_server, venue, "attendees", "import", path2, "--preset", "pretix", "--prune", "--json")
    assert json.loads(pruned.stdout)["cancelled"] == 1
    assert json.loads(cli(redis_server, venue, "attendees", "show", "s3cr3tqr2", "--json").stdout)["status"] == (
        "cancelled"
    )


async def test_the_pretix_export_then_a_kiosk_scan_make_one_badge(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    path = pretix_file(tmp_path)
    cli(redis_server, venue, "attendees", "import", path, "--preset", "pretix")
    store = AttendeeStore(redis, venue)
    reply, _ = await store.badge("s3cr3tqr1", "token:kiosk-1")  # the kiosk scans the ticket first
    assert reply.kind == "queued"
    result = cli(redis_server, venue, "enqueue", "--file", path, "--preset", "pretix")
    assert "row 2: duplicate ABC12-1: this ticket's badge exists (state queued)" in result.stdout
    assert "row 3: enqueued ABC12-2 (the attendee list's badge for this ticket)" in result.stdout
    assert sorted(await redis.lrange(Keys(venue).pool, 0, -1)) == [b"ABC12-1", b"ABC12-2"]
    reply, _ = await store.badge("s3cr3tqr2", "token:kiosk-1")  # and the scan after the import: the same badge
    assert (reply.kind, reply.state) == ("exists", "queued")


async def test_an_eventbrite_list_enqueued_by_its_barcode_resolves_to_the_listed_badge(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    path = tmp_path / "eventbrite.csv"
    path.write_bytes(EVENTBRITE.encode("utf-8"))
    result = cli(redis_server, venue, "attendees", "import", str(path), "--preset", "eventbrite")
    assert "added 2" in result.stdout, result.stdout + result.stderr
    listed = await AttendeeStore(redis, venue).get("900100")
    assert listed is not None and listed.job_id.startswith("att-")  # the barcode is the ticket: never a job id
    cli(redis_server, venue, "enqueue", "--file", str(path), "--preset", "eventbrite")
    assert sorted(await redis.lrange(Keys(venue).pool, 0, -1)) == sorted(
        [listed.job_id.encode(), (await AttendeeStore(redis, venue).get("900200")).job_id.encode()]  # type: ignore[union-attr]
    )


def test_purge_asks_and_a_waiting_badge_refuses_it(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    path = pretix_file(tmp_path)
    cli(redis_server, venue, "attendees", "import", path, "--preset", "pretix")
    cli(redis_server, venue, "enqueue", "--file", path, "--preset", "pretix")
    refused = cli(redis_server, venue, "attendees", "purge", "--yes")
    assert refused.returncode == 1 and "still waiting or printing" in refused.stderr


async def test_import_a_pretix_xlsx_export(tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str) -> None:
    from tests.support.attendee_files import xlsx_export

    path = xlsx_export(tmp_path / "pretix.xlsx", {"Order positions": PRETIX})
    result = cli(redis_server, venue, "attendees", "import", str(path), "--preset", "pretix", "--json")
    summary = json.loads(result.stdout)
    assert (summary["added"], summary["rejected"], summary["read_as"]) == (2, 1, "XLSX")
    listed = await AttendeeStore(redis, venue).get("s3cr3tqr2")
    assert listed is not None and listed.name == "François Gérard" and listed.job_id == "ABC12-2"


def test_import_warns_when_ticket_codes_are_sequential(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    numbered = tmp_path / "numbered.csv"
    lines = ["attendee_id,name"] + [f"TKT-{100200 + n},Person {n}" for n in range(40)]
    numbered.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli(redis_server, venue, "attendees", "import", str(numbered))
    # Loaded all the same (the venue may have no other codes), exit 0; one warning a line on stderr, no code named.
    assert result.returncode == 0, result.stderr
    assert "added 40" in result.stdout
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert any("sequential: 40 of 40" in w and "1 time in 1" in w for w in warnings), result.stderr
    assert any("guessable: 40 of 40 carry under 64 bits" in w and "rows 2, 3, 4, 5, 6, ..." in w for w in warnings)
    assert "TKT-" not in result.stderr
    as_json = json.loads(cli(redis_server, venue, "attendees", "import", str(numbered), "--json").stdout)
    assert len(as_json["code_warnings"]) == 2
    # Codes of 32 random characters (as pretix's secrets): no warning.
    random_codes = tmp_path / "random.csv"
    lines = ["attendee_id,name"] + [f"{secrets.token_hex(16)},Person {n}" for n in range(40)]
    random_codes.write_text("\n".join(lines) + "\n", encoding="utf-8")
    quiet = cli(redis_server, venue, "attendees", "import", str(random_codes))
    assert quiet.returncode == 0 and "warning" not in quiet.stderr, quiet.stderr
