"""``enqueue --file`` on real registration exports: Excel's encodings, --preset/--map, --dry-run, --json."""

from __future__ import annotations

import json
from pathlib import Path

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from protocol.keys import Keys
from tests.support.attendee_files import EVENTBRITE, PRETIX, xlsx_export
from tests.support.processes import cli


def test_a_pretix_export_saved_by_excel_in_cp1252_imports_with_the_preset(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    path = tmp_path / "pretix.csv"
    # Excel writes ";" where the list separator is ";" (continental Europe): sniffed from the header row.
    path.write_bytes(PRETIX.encode("cp1252"))
    result = cli(redis_server, venue, "enqueue", "--file", str(path), "--preset", "pretix", "--json")
    summary = json.loads(result.stdout)
    assert summary["enqueued"] == 2 and summary["encoding"] == "cp1252"
    # The third row has no attendee name: rejected, named by its row.
    assert summary["rejected_rows"] == [{"row": 4, "reason": "name is required"}]
    assert result.returncode == 1


async def test_pretix_fields_land_on_the_job(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    path = tmp_path / "pretix.csv"
    path.write_bytes(PRETIX.replace(";", ",").encode("cp1252"))  # pretix's own download is ","-separated
    cli(redis_server, venue, "enqueue", "--file", str(path), "--preset", "pretix")
    payload = json.loads(await redis.hget(Keys(venue).job("ABC12-1"), "payload"))
    assert payload == {
        "job_id": "ABC12-1",
        "attendee_id": "s3cr3tqr1",
        "name": "Zoë Ó Briain",
        "company": "Café Müller",
        "role": "Exhibitor",
        "fields": {"ticket_type": "Exhibitor"},  # the order's e-mail is not a badge's: left out
    }


async def test_an_eventbrite_export_in_cp1250_with_encoding_and_first_last_names(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    path = tmp_path / "eventbrite.csv"
    text = EVENTBRITE.replace("José", "Jiří").replace("Núñez", "Dvořák").replace("Señor Café", "Škoda Café")
    path.write_bytes(text.encode("cp1250"))  # Łukasz, Dvořák: a Central European code page, named with --encoding
    result = cli(redis_server, venue, "enqueue", "--file", str(path), "--preset", "eventbrite", "--encoding", "cp1250")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "enqueued 2, duplicate 0, rejected 0" in result.stdout
    first = json.loads(await redis.hget(Keys(venue).job("900100"), "payload"))
    assert first["name"] == "Jiří Dvořák" and first["company"] == "Škoda Café" and first["role"] == "CTO"
    second = json.loads(await redis.hget(Keys(venue).job("900200"), "payload"))
    assert (second["name"] == "Łukasz Ö" and "company" not in second) or second.get("company") == ""


def test_an_eventbrite_export_saved_by_excel_in_cp1252(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    path = tmp_path / "eventbrite.csv"
    path.write_bytes(EVENTBRITE.replace("Łukasz", "Lukas").encode("cp1252"))
    result = cli(redis_server, venue, "enqueue", "--file", str(path), "--preset", "eventbrite")
    assert result.returncode == 0 and "enqueued 2" in result.stdout
    assert "read as cp1252" in result.stderr


def test_utf8_with_bom_and_map(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    path = tmp_path / "people.csv"
    path.write_bytes("\ufeffFirst Name,Last Name,Barcode\r\nAda,Lovelace,B-1\r\n".encode())
    result = cli(
        redis_server, venue, "enqueue", "--file", str(path),
        "--map", "name={First Name} {Last Name}", "--map", "attendee_id=Barcode",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "row 2: enqueued B-1" in result.stdout and "not UTF-8" not in result.stderr


def test_a_mapped_column_missing_from_the_header_is_named(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    path = tmp_path / "people.csv"
    path.write_text("First Name,Surname,Barcode\nAda,Lovelace,B-1\n")
    result = cli(redis_server, venue, "enqueue", "--file", str(path), "--preset", "eventbrite")
    assert result.returncode == 2 and "'Last Name'" in result.stderr and "Traceback" not in result.stderr
    bad = cli(redis_server, venue, "enqueue", "--file", str(path), "--map", "Nick Name=Surname")
    assert bad.returncode == 2 and "expected FIELD=COLUMN" in bad.stderr
    shadow = cli(redis_server, venue, "enqueue", "--file", str(path), "--map", "Nick=Surname")
    assert shadow.returncode == 2 and "neither a job field" in shadow.stderr


def test_an_undecodable_file_names_the_line_never_a_traceback(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    path = tmp_path / "people.csv"
    path.write_bytes(b"attendee_id,name\nA-1,Ada\nA-2,Caf\xe9\n")
    result = cli(redis_server, venue, "enqueue", "--file", str(path), "--encoding", "utf-8")
    assert result.returncode == 2
    assert "line 3: byte 0xe9 is not valid utf-8" in result.stderr and "Traceback" not in result.stderr
    unknown = cli(redis_server, venue, "enqueue", "--file", str(path), "--encoding", "klingon")
    assert unknown.returncode == 2 and "unknown encoding" in unknown.stderr


async def test_dry_run_changes_nothing_and_rejected_rows_come_in_file_order(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    rows = ["attendee_id,name"] + [f"A-{i},Guest {i}" if i % 3 else f"A-{i}," for i in range(1, 500)]
    path = tmp_path / "people.csv"
    path.write_text("\n".join(rows) + "\n")
    result = cli(redis_server, venue, "enqueue", "--file", str(path), "--dry-run")
    numbers = [
        int(line.split(":")[0].removeprefix("row ")) for line in result.stdout.splitlines() if line.startswith("row ")
    ]
    assert numbers == sorted(numbers) and len(numbers) == 499
    assert "row 4: rejected: name: must not be empty" in result.stdout
    assert "row 2: would enqueue A-1: Guest 1" in result.stdout
    assert "would enqueue 333, duplicate 0, rejected 166" in result.stdout
    assert await redis.llen(Keys(venue).pool) == 0


async def test_a_tab_separated_export_and_a_map_into_the_badges_fields(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    path = tmp_path / "people.txt"  # Excel's "Unicode text": UTF-16 with a BOM, tab-separated
    path.write_bytes("Code\tWho\tProduct\tPronouns\r\nQ-1\tRenée Lefèvre\tSpeaker\tshe/her\r\n".encode("utf-16"))
    result = cli(
        redis_server, venue, "enqueue", "--file", str(path), "--format", "csv",
        "--map", "attendee_id=Code", "--map", "name=Who",
        "--map", "ticket_type={Product}", "--map", "pronouns=Pronouns",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    payload = json.loads(await redis.hget(Keys(venue).job("Q-1"), "payload"))
    assert payload["name"] == "Renée Lefèvre"
    assert payload["fields"] == {"ticket_type": "Speaker", "pronouns": "she/her"}


def test_dry_run_shows_what_each_badge_will_say(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    path = tmp_path / "pretix.csv"
    path.write_bytes(PRETIX.encode("cp1252"))
    result = cli(redis_server, venue, "enqueue", "--file", str(path), "--preset", "pretix", "--dry-run")
    # A garbled name (the wrong code page) would be seen here, before anything prints.
    assert "row 2: would enqueue ABC12-1: Zoë Ó Briain | Café Müller | Exhibitor | ticket_type=Exhibitor" in (
        result.stdout
    )


async def test_a_pretix_xlsx_export_reads_the_order_positions_sheet(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    orders = "Event slug;Order code;Status;Email\r\nexpo;ABC12;paid;a@example.org\r\n"
    path = xlsx_export(tmp_path / "pretix.xlsx", {"Orders": orders, "Order positions": PRETIX})
    result = cli(redis_server, venue, "enqueue", "--file", str(path), "--preset", "pretix", "--json")
    summary = json.loads(result.stdout)
    assert summary["enqueued"] == 2 and summary["rejected_rows"] == [{"row": 4, "reason": "name is required"}]
    payload = json.loads(await redis.hget(Keys(venue).job("ABC12-2"), "payload"))  # Position ID 2, a number cell
    assert payload["name"] == "François Gérard" and payload["fields"] == {"ticket_type": "Visitor"}


async def test_an_eventbrite_xlsx_export(tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str) -> None:
    path = xlsx_export(tmp_path / "attendees.xlsx", {"Attendees": EVENTBRITE.replace(",", ";")})
    result = cli(redis_server, venue, "enqueue", "--file", str(path), "--preset", "eventbrite")
    assert result.returncode == 0, result.stdout + result.stderr
    payload = json.loads(await redis.hget(Keys(venue).job("900100"), "payload"))
    assert payload["name"] == "José Núñez"
    assert payload["fields"] == {"ticket_type": "General", "given_name": "José", "family_name": "Núñez"}
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"PK\x03\x04 not really a workbook")
    bad = cli(redis_server, venue, "enqueue", "--file", str(broken))
    assert bad.returncode == 2 and "not a readable XLSX workbook" in bad.stderr and "Traceback" not in bad.stderr


def test_an_unclosed_quote_is_reported_by_its_row(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    path = tmp_path / "people.csv"
    path.write_text('attendee_id;name\nA-1;Ada\nA-2;"Bob\n' + "x" * 70_000 + "\n")
    result = cli(redis_server, venue, "enqueue", "--file", str(path), "--json")
    summary = json.loads(result.stdout)
    assert summary["enqueued"] == 1 and summary["rejected_rows"][0]["row"] == 3
    assert "Traceback" not in result.stderr
