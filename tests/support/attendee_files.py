"""Attendee files and lists for tests: the header rows exporters write, a few attendees, a loaded list."""

from __future__ import annotations

from pathlib import Path

from redis.asyncio import Redis

from attendees.importer import Importer
from attendees.store import AttendeeStore

# The header rows as pretix ("Order data", order positions) and Eventbrite ("Attendee Summary") write them.
PRETIX = (
    "Event slug;Order code;Position ID;Status;Email;Phone number;Order date;Order time;Product;Variation;Price;"
    "Tax rate;Tax rule;Tax value;Attendee name;Attendee email;Attendee company;Address;ZIP code;City;Country;State;"
    "Voucher;Pseudonymization ID;Ticket secret\r\n"
    "expo;ABC12;1;paid;a@example.org;;2026-05-01;10:00:00;Exhibitor;;0.00;0;;0;Zoë Ó Briain;;Café Müller;;;;;;;"
    "X1;s3cr3tqr1\r\n"
    "expo;ABC12;2;paid;a@example.org;;2026-05-01;10:00:00;Visitor;;0.00;0;;0;François Gérard;;;;;;;;;X2;s3cr3tqr2\r\n"
    "expo;ABC13;1;paid;b@example.org;;2026-05-01;10:00:00;Visitor;;0.00;0;;0;;;;;;;;;;X3;s3cr3tqr3\r\n"
)


EVENTBRITE = (
    "Order #,Order Date,First Name,Last Name,Email,Quantity,Ticket Type,Attendee #,Barcode #,Buyer Last Name,"
    "Buyer First Name,Buyer Email,Company,Job Title\r\n"
    "1001,2026-05-01,José,Núñez,j@example.org,1,General,5001,900100,Núñez,José,j@example.org,Señor Café,CTO\r\n"
    "1002,2026-05-01,Łukasz,Ö,l@example.org,1,General,5002,900200,Ö,Łukasz,l@example.org,,\r\n"
)


PEOPLE = [
    {"attendee_id": "secret-renee", "job_id": "ORD1-1", "name": "Renée Lefèvre", "company": "Café Müller",
     "fields": {"ticket_type": "Speaker"}, "order_code": "ORD1", "email": "renee@example.org"},
    {"attendee_id": "secret-dimitris", "job_id": "ORD2-1", "name": "Δημήτρης Παπαδόπουλος",
     "fields": {"ticket_type": "Visitor"}, "order_code": "ORD2"},
    {"attendee_id": "secret-lee", "name": "李小龍", "company": "Golden Harvest", "fields": {"ticket_type": "Visitor"}},
]  # fmt: skip


def rows(people: list[dict[str, object]]) -> list[tuple[int, dict[str, object], str]]:
    return [(n, dict(p), "") for n, p in enumerate(people, start=2)]


async def listed(redis: Redis, venue: str) -> AttendeeStore:
    store = AttendeeStore(redis, venue)
    await Importer(store).load(iter(rows(PEOPLE)))
    return store


def xlsx_export(path: Path, sheets: dict[str, str]) -> Path:
    """A workbook as pretix or Eventbrite offer it for download: each sheet from ``;``-separated text (numbers stored
    as numbers, as those exports do)."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for title, text in sheets.items():
        sheet = book.create_sheet(title)
        for line in text.strip().split("\r\n"):
            sheet.append([int(c) if c.isdigit() and not c.startswith("0") else (c or None) for c in line.split(";")])
    book.save(path)
    return path
