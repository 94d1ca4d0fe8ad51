"""The attendee files a venue has, as ``attendees import`` and ``layout preview`` meet them: Eventbrite's attendee
report, a file whose columns map to nothing, a file saved by Excel without its names' letters, a ``;`` file with a
wrong ``--map``. pretix's own files, made by the real pretix, are in tests/pretix/test_export_files.py."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from redis.asyncio import Redis

from attendees.store import AttendeeStore
from cli.redis_server import RedisServer
from tests.support.attendee_files import PRETIX
from tests.support.layouts import band_layout, write_logo
from tests.support.processes import badge_agent, cli

# Eventbrite's "Attendee Summary" report (Reports > Attendee summary, exported as CSV): the columns in the order
# Eventbrite's help centre lists them for the report, "Company" and "Job Title" being the event's own questions. No
# Eventbrite server exists to make one, so this is that header with two attendees under it.
EVENTBRITE_REPORT = (
    "Order #,Order Date,First Name,Last Name,Email,Quantity,Ticket Type,Order Type,Total Paid,Eventbrite Fees,"
    "Eventbrite Payment Processing,Attendee Status,Attendee #,Barcode #,Buyer Last Name,Buyer First Name,"
    "Buyer Email,Company,Job Title\r\n"
    "1001,2026-05-01 10:00:00,José,Núñez,j@example.org,1,General,Eventbrite Completed,50.00,2.50,1.50,Attending,"
    "5001,900100123,Núñez,José,j@example.org,Señor Café,CTO\r\n"
    "1002,2026-05-01 10:05:00,Łukasz,Wójcik,l@example.org,1,Speaker,Free Order,0.00,0.00,0.00,Not Attending,"
    "5002,900200456,Wójcik,Łukasz,l@example.org,,\r\n"
)


async def test_eventbrite_attendee_report_keeps_name_parts_company_email_and_status(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    path = tmp_path / "attendees.csv"
    path.write_bytes(EVENTBRITE_REPORT.encode("utf-8-sig"))  # Eventbrite's CSV opens in Excel: with a BOM
    result = cli(redis_server, venue, "attendees", "import", str(path), "--preset", "eventbrite", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(result.stdout)
    assert summary["added"] == 2 and summary["export"] == 'Eventbrite "Attendee Summary" report'
    store = AttendeeStore(redis, venue)
    jose, lukasz = await store.get_many(["900100123", "900200456"])
    assert jose is not None and lukasz is not None
    assert (jose.name, jose.company, jose.role, jose.email, jose.order_code, jose.status) == (
        "José Núñez", "Señor Café", "CTO", "j@example.org", "1001", "valid",
    )  # fmt: skip
    assert jose.fields == {"given_name": "José", "family_name": "Núñez", "ticket_type": "General"}
    assert lukasz.status == "cancelled"  # "Not Attending": the ticket admits no one


async def test_unmapped_columns_are_said_once_with_the_columns_and_the_preset_that_fits(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    path = tmp_path / "eventbrite.csv"
    body = EVENTBRITE_REPORT.splitlines(keepends=True)[1]
    path.write_text(EVENTBRITE_REPORT + body * 200, encoding="utf-8")
    result = cli(redis_server, venue, "attendees", "import", str(path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "row " not in result.stdout and len(result.stderr.splitlines()) == 1  # one message, not one a row
    assert "no attendee_id and no name column" in result.stderr
    assert "'Barcode #'" in result.stderr and "'First Name'" in result.stderr  # the file's columns, named
    assert "--preset eventbrite" in result.stderr and "Traceback" not in result.stderr
    assert not await AttendeeStore.exists(redis, venue)

    pretix = tmp_path / "pretix.csv"
    pretix.write_text(PRETIX, encoding="utf-8")
    also = cli(redis_server, venue, "enqueue", "--file", str(pretix), "--dry-run")
    assert also.returncode == 2 and "row " not in also.stdout
    assert 'pretix "Order data", order positions' in also.stderr and "--preset pretix" in also.stderr

    other = tmp_path / "people.csv"
    other.write_text("Vorname,Nachname,Code\nAda,Lovelace,A1\n", encoding="utf-8")
    none = cli(redis_server, venue, "attendees", "import", str(other))
    assert none.returncode == 2 and "no preset fits it" in none.stderr and "'Vorname'" in none.stderr


#: An export Excel saved as plain "CSV" on a Western European Windows: cp1252 has no Japanese, Greek or Hebrew
#: letters, so Excel wrote "?" for each (the file holds the marks, not the letters).
LOSSY = (
    "attendee_id;name;company\r\n"
    "T1;Zoë Ó Briain;Café Müller\r\n"
    "T2;山田 太郎;株式会社テスト\r\n"
    "T3;Δημήτρης Παπαδόπουλος;\r\n"
    "T4;Who? Me;\r\n"
)


def _lossy_file(tmp_path: Path) -> Path:
    path = tmp_path / "excel.csv"
    path.write_bytes(LOSSY.encode("cp1252", errors="replace"))
    assert b"?? ??;" in path.read_bytes()  # what Excel leaves of the names
    return path


async def test_names_lost_to_question_marks_are_refused_then_accepted_on_request(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    path = _lossy_file(tmp_path)
    refused = cli(redis_server, venue, "attendees", "import", str(path))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "2 row(s) have names of question marks" in refused.stderr and "row 3: '?? ??'" in refused.stderr
    assert '"CSV UTF-8' in refused.stderr and "Unicode (UTF-8)" in refused.stderr and "--accept-lossy" in refused.stderr
    assert not await AttendeeStore.exists(redis, venue)  # nothing loaded

    dry = cli(redis_server, venue, "attendees", "import", str(path), "--dry-run")
    assert dry.returncode == 1, dry.stdout + dry.stderr  # it would be refused
    assert "row 3: letters lost: '?? ??'" in dry.stdout and "row 4: letters lost: '????????" in dry.stdout
    assert "row 2: would load att-" in dry.stdout and ": Zoë Ó Briain | Café Müller" in dry.stdout  # sample rows
    assert "would load: added 4" in dry.stdout and "--accept-lossy" in dry.stderr
    assert not await AttendeeStore.exists(redis, venue)

    loaded = cli(redis_server, venue, "attendees", "import", str(path), "--accept-lossy")
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    assert "added 4" in loaded.stdout and "note: " in loaded.stderr  # still said, once
    (yamada,) = await AttendeeStore(redis, venue).get_many(["T2"])
    assert yamada is not None and yamada.name == "?? ??"


def test_layout_preview_reads_a_semicolon_file_and_names_a_wrong_map_column(tmp_path: Path) -> None:
    write_logo(tmp_path / "logo.png")
    (tmp_path / "band.yaml").write_text(yaml.safe_dump(band_layout()))
    export = tmp_path / "pretix.csv"
    export.write_bytes(PRETIX.encode("cp1252"))  # Excel in Europe: cp1252 and ";"
    layout, out = str(tmp_path / "band.yaml"), str(tmp_path / "b.png")
    drawn = badge_agent(
        "layout", "preview", layout, "-f", str(export), "--map", "attendee_id=Ticket secret",
        "--map", "name=Attendee name", "--map", "ticket_type=Product", "-o", out, "--dpi", "203",
    )  # fmt: skip
    assert drawn.returncode == 1 and "Traceback" not in drawn.stderr, drawn.stderr  # row 4 has no name
    assert "drew 2, could not draw 1" in drawn.stdout and (tmp_path / "b-2.png").exists()

    wrong = badge_agent(
        "layout", "preview", layout, "-f", str(export), "--map", "attendee_id=Ticket secret",
        "--map", "name=Atendee name", "-o", out,
    )  # fmt: skip
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr, wrong.stderr
    assert "'Atendee name' not in the file's header" in wrong.stderr and "'Attendee name'" in wrong.stderr
    assert wrong.stderr.count("badge-agent:") == 1
