"""Every attendee file a venue can download from pretix, made by the real pretix's own exporters (through its REST
API), loaded with ``--preset pretix``: "Order data" (the XLSX of several sheets, and its order positions as each of
pretix's CSV variants) and the "Check-in list" with the ticket secrets (XLSX and CSV). The event's names are in
pretix's default scheme (given and family name)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from redis.asyncio import Redis

from attendees.store import AttendeeStore
from cli.redis_server import RedisServer
from protocol.keys import Keys
from tests.support.pretix_exports import pretix_export
from tests.support.pretix_server import Pretix
from tests.support.processes import cli

#: (exporter, pretix's ``_format``, whether the file has the order positions' status column): the attendee files.
EXPORTS = [
    ("orderlist", "xlsx", True),  # "Order data": Orders, Order positions, Order fees
    ("orderlist", "positions:default", True),  # CSV (with commas), every cell quoted
    ("orderlist", "positions:excel", True),  # CSV (Excel-style)
    ("orderlist", "positions:semicolon", True),
    ("checkinlist", "xlsx", False),
    ("checkinlist", "default", False),
    ("checkinlist", "csv-excel", False),
    ("checkinlist", "semicolon", False),
]


@pytest.fixture
def files_event(pretix: Pretix) -> dict[str, Any]:
    """The event of names in parts (made once in the session's pretix; the command is idempotent)."""
    return dict(pretix.data("files_event"))


def _download(pretix: Pretix, event: dict[str, Any], tmp_path: Path, exporter: str, fmt: str, **options: Any) -> Path:
    if exporter.startswith("checkinlist"):
        options.setdefault("list", event["checkin_list"])
    name, content = pretix_export(pretix.url, pretix.token, pretix.organizer, event["event"], exporter, fmt, **options)
    path = tmp_path / name
    path.write_bytes(content)
    return path


@pytest.mark.parametrize(("exporter", "fmt", "has_status"), EXPORTS)
async def test_pretix_attendee_files_load_with_the_preset(
    pretix: Pretix,
    files_event: dict[str, Any],
    tmp_path: Path,
    redis: Redis,
    redis_server: RedisServer,
    venue: str,
    exporter: str,
    fmt: str,
    has_status: bool,
) -> None:
    options = {"secrets": True} if exporter == "checkinlist" else {}
    path = _download(pretix, files_event, tmp_path, exporter, fmt, **options)
    result = cli(redis_server, venue, "attendees", "import", str(path), "--preset", "pretix", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(result.stdout)
    # The order positions have the cancelled one too (loaded as cancelled); the check-in list leaves it out.
    assert (summary["added"], summary["cancelled"], summary["rejected"]) == (4 if has_status else 3, 0, 0), summary
    assert summary["export"].startswith('pretix "Order data"' if exporter == "orderlist" else 'pretix "Check-in')

    zoe_p, taro_p, invoice_p, jan_p = files_event["positions"]
    store = AttendeeStore(redis, venue)
    zoe, taro, invoice, jan = await store.get_many([p["secret"] for p in (zoe_p, taro_p, invoice_p, jan_p)])
    assert zoe is not None and taro is not None and invoice is not None
    assert (zoe.name, zoe.company, zoe.email, zoe.order_code, zoe.role, zoe.ticket_type) == (
        "Zoë Ó Briain", "Café Müller", "zoe@example.invalid", zoe_p["order"], "Regular", "Regular",
    )  # fmt: skip
    assert zoe.fields == {"given_name": "Zoë", "family_name": "Ó Briain", "ticket_type": "Regular"}
    assert (taro.name, taro.company, taro.ticket_type) == ("太郎 山田", "株式会社テスト", "Speaker")
    assert taro.fields["given_name"] == "太郎" and taro.fields["family_name"] == "山田"
    assert taro.email == "buyer@example.invalid"  # no attendee e-mail: the order's, as pretix's check-in list has it
    # No attendee name: the invoice address's stands in (as pretix's own check-in list does), with its company.
    assert (invoice.name, invoice.company, invoice.fields["given_name"]) == ("Ines Invoice", "Invoice Co", "Ines")
    if has_status:
        assert jan is not None and jan.status == "cancelled"
    else:
        assert jan is None
    for attendee in (zoe, taro, invoice):
        assert attendee.status == "valid"


async def test_pretix_order_data_enqueues_badges_from_its_positions_sheet(
    pretix: Pretix, files_event: dict[str, Any], tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    path = _download(pretix, files_event, tmp_path, "orderlist", "xlsx")
    result = cli(redis_server, venue, "enqueue", "--file", str(path), "--preset", "pretix")
    assert result.returncode == 0, result.stdout + result.stderr
    zoe = files_event["positions"][0]
    payload = json.loads(await redis.hget(Keys(venue).job(f"{zoe['order']}-1"), "payload"))
    assert payload["attendee_id"] == zoe["secret"] and payload["name"] == "Zoë Ó Briain"
    assert payload["company"] == "Café Müller" and payload["fields"]["given_name"] == "Zoë"
    assert "email" not in payload  # the e-mail is for the attendee list, never on a badge job


async def test_pretix_files_without_the_preset_or_without_secrets_are_named(
    pretix: Pretix, files_event: dict[str, Any], tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    order_data = _download(pretix, files_event, tmp_path, "orderlist", "xlsx")
    plain = cli(redis_server, venue, "attendees", "import", str(order_data))
    assert plain.returncode == 2 and "row " not in plain.stdout, plain.stdout + plain.stderr
    assert 'it is pretix "Order data", order positions' in plain.stderr and "--preset pretix" in plain.stderr
    assert "'Ticket secret'" in plain.stderr  # the positions sheet's columns, not the first sheet's

    no_secrets = _download(pretix, files_event, tmp_path, "checkinlist", "default")
    refused = cli(redis_server, venue, "attendees", "import", str(no_secrets), "--preset", "pretix")
    assert refused.returncode == 2 and "Include QR-code secret" in refused.stderr, refused.stderr
    assert "'Secret'" in refused.stderr  # what the file lacks

    codes = _download(pretix, files_event, tmp_path, "checkinlistcodes", "default")
    nameless = cli(redis_server, venue, "attendees", "import", str(codes), "--preset", "pretix")
    assert nameless.returncode == 2 and '"Valid check-in codes", which has no names' in nameless.stderr
    assert not await AttendeeStore.exists(redis, venue)
