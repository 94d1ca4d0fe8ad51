"""`badge-agent layout` against a real Redis: versions, variants per stock, rules, refusals that change nothing, and
previews of the exact bitmap for a job or every row of a file."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
import zxingcpp
from PIL import Image
from redis import Redis as SyncRedis

from cli.redis_server import RedisServer
from protocol.keys import Keys
from tests.support.layouts import band_layout, write_logo
from tests.support.processes import cli


def write(tmp_path: Path, name: str, data: object) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, allow_unicode=True))
    return path


def live_printer(server: RedisServer, venue: str, printer: str, stock: str) -> None:
    """A printer of the venue as its heartbeat shows it (the registry and its health with the loaded stock)."""
    k = Keys(venue)
    with SyncRedis.from_url(server.url) as redis:
        redis.hset(k.printers, printer, "1")
        redis.set(k.health(printer), json.dumps({"state": "ready", "stock": stock}), px=60_000)


def test_set_list_show_rm_with_versions(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    write_logo(tmp_path / "logo.png")
    first = write(tmp_path, "speaker.yaml", band_layout())
    done = cli(redis_server, venue, "layout", "set", str(first))
    assert done.returncode == 0, done.stderr
    assert "layout speaker v1 set (101.6x152.4 mm)" in done.stdout
    again = cli(redis_server, venue, "layout", "set", str(first), "--name", "speaker")
    assert "layout speaker v2 set" in again.stdout
    listed = cli(redis_server, venue, "layout", "list")
    assert "speaker  v2  stocks 101.6x152.4  set by cli" in listed.stdout
    shown = json.loads(cli(redis_server, venue, "layout", "show", "speaker").stdout)
    assert shown["version"] == 2 and shown["variants"]["101.6x152.4"]["files"] == ["logo.png"]
    assert shown["variants"]["101.6x152.4"]["document"]["elements"][1]["text"] == "{name}"
    with SyncRedis.from_url(redis_server.url) as redis:
        events = [e for _, e in redis.xrange(Keys(venue).events)]
    assert [(e[b"event"], e[b"layout_version"]) for e in events if e[b"event"] == b"layout_set"] == [
        (b"layout_set", b"1"),
        (b"layout_set", b"2"),
    ]
    gone = cli(redis_server, venue, "layout", "rm", "speaker")
    assert gone.stdout.strip() == "layout speaker removed"
    assert "no layouts: badges get the built-in design" in cli(redis_server, venue, "layout", "list").stdout
    assert cli(redis_server, venue, "layout", "rm", "speaker").returncode == 2


def test_a_bad_layout_is_refused_and_the_venue_keeps_its_version(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    write_logo(tmp_path / "logo.png")
    assert (
        cli(redis_server, venue, "layout", "set", str(write(tmp_path, "speaker.yaml", band_layout()))).returncode == 0
    )
    bad = band_layout()
    bad["elements"][2]["font_size"] = 0  # type: ignore[index]
    bad["elements"].append({"type": "star", "x": 1, "y": 1, "w": 1, "h": 1})  # type: ignore[attr-defined]
    path = write(tmp_path, "speaker2.yaml", bad)
    refused = cli(redis_server, venue, "layout", "set", str(path), "--name", "speaker")
    assert refused.returncode == 2
    assert f"{path}: elements[2] (text '{{pronouns}}'): font_size: must be > 0" in refused.stderr
    assert f"{path}: elements[6] (star): unknown element type 'star'" in refused.stderr
    assert "speaker  v1" in cli(redis_server, venue, "layout", "list").stdout


def test_set_refuses_a_layout_a_printer_of_the_venue_cannot_print(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    write_logo(tmp_path / "logo.png")
    live_printer(redis_server, venue, "hall-a-1", "101.6x152.4")
    live_printer(redis_server, venue, "desk-ql", "62x100")
    zebra = write(tmp_path, "zebra.yaml", band_layout())
    refused = cli(redis_server, venue, "layout", "set", str(zebra), "--name", "default")
    assert refused.returncode == 2
    assert "layout default refused, nothing changed: it has no variant for the stock of desk-ql has 62x100 mm" in (
        refused.stderr.replace("\n", " ")
    )
    assert "hall-a-1" not in refused.stderr
    assert "no layouts" in cli(redis_server, venue, "layout", "list").stdout
    brother = write(tmp_path, "ql.yaml", band_layout(62, 100, inset_mm=2))
    done = cli(redis_server, venue, "layout", "set", str(zebra), str(brother), "--name", "default")
    assert done.returncode == 0, done.stderr
    assert "layout default v1 set (101.6x152.4, 62x100 mm)" in done.stdout


def test_rules_pick_layouts_and_go_with_them(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    write_logo(tmp_path / "logo.png")
    cli(redis_server, venue, "layout", "set", str(write(tmp_path, "speaker.yaml", band_layout())))
    missing = cli(redis_server, venue, "layout", "rules", "--add", "ticket_type=Staff:staff")
    assert missing.returncode == 2 and "no layout 'staff' in the venue" in missing.stderr
    added = cli(redis_server, venue, "layout", "rules", "--add", "ticket_type=Speaker:speaker")
    assert added.stdout.strip() == "ticket_type=Speaker -> speaker"
    assert "with its rules: ticket_type=Speaker" in cli(redis_server, venue, "layout", "rm", "speaker").stdout
    assert "no rules" in cli(redis_server, venue, "layout", "rules").stdout


def test_preview_draws_the_exact_bitmap_for_a_job_and_for_every_row(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    write_logo(tmp_path / "logo.png")
    layout = write(tmp_path, "speaker.yaml", band_layout())
    one = cli(
        redis_server, venue, "layout", "preview", str(layout), "-o", str(tmp_path / "one.png"), "--dpi", "203",
        "--job", json.dumps({"attendee_id": "A-1", "name": "Ana", "fields": {"seat": "S-1", "ticket_type": "Staff"}}),
    )  # fmt: skip
    assert one.returncode == 0, one.stderr
    image = Image.open(tmp_path / "one.png")
    assert image.size == (808, 1216) and image.mode == "1"
    assert [r.text for r in zxingcpp.read_barcodes(image.convert("L"))] == ["S-1"]
    assert "(empty: pronouns)" in one.stdout
    rows = tmp_path / "attendees.csv"
    rows.write_text("attendee_id,name\nA-1,Ana\nA-2,\nA-3,Renée\n")
    many = cli(
        redis_server, venue, "layout", "preview", str(layout), "-o", str(tmp_path / "sheet.png"), "-f", str(rows)
    )
    assert many.returncode == 1
    assert (tmp_path / "sheet-2.png").exists() and (tmp_path / "sheet-4.png").exists()
    assert not (tmp_path / "sheet-3.png").exists()
    assert "row 3: name: must not be empty" in many.stderr
    assert "drew 2, could not draw 1" in many.stdout
    # A stored layout by name, from the venue.
    cli(redis_server, venue, "layout", "set", str(layout))
    stored = cli(
        redis_server, venue, "layout", "preview", "speaker", "-o", str(tmp_path / "stored.png"), "--dpi", "203",
        "--job", json.dumps({"attendee_id": "A-1", "name": "Ana", "fields": {"seat": "S-1", "ticket_type": "Staff"}}),
    )  # fmt: skip
    assert stored.returncode == 0, stored.stderr
    assert Image.open(tmp_path / "stored.png").tobytes() == image.tobytes()


def test_enqueue_carries_fields_and_layout_from_flags(redis_server: RedisServer, venue: str) -> None:
    done = cli(
        redis_server, venue, "enqueue", "--attendee-id", "F-1", "--name", "Renée", "--field", "ticket_type=Speaker",
        "--field", "pronouns=she/her", "--layout", "speaker",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    with SyncRedis.from_url(redis_server.url) as redis:
        payload = json.loads(redis.hget(Keys(venue).job("F-1"), "payload") or b"{}")
    assert payload["fields"] == {"ticket_type": "Speaker", "pronouns": "she/her"} and payload["layout"] == "speaker"
    bad = cli(redis_server, venue, "enqueue", "--attendee-id", "F-2", "--name", "Ana", "--field", "Seat No=4")
    assert bad.returncode == 1 and "'Seat No' is not a field name" in bad.stdout
    malformed = cli(redis_server, venue, "enqueue", "--attendee-id", "F-3", "--name", "Ana", "--field", "seat")
    assert malformed.returncode == 2 and "--field 'seat': expected KEY=VALUE" in malformed.stderr


def test_set_says_which_jobs_get_the_layout(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    write_logo(tmp_path / "logo.png")
    path = write(tmp_path, "speaker.yaml", band_layout())
    lonely = cli(redis_server, venue, "layout", "set", str(path))
    said = " ".join(lonely.stdout.split())
    assert "agents draw it" not in said, said
    assert "no rule picks it: only jobs naming it in their `layout` field (enqueue --layout speaker) get it" in said
    assert "`badge-agent layout rules --add FIELD=VALUE:speaker`" in said
    cli(redis_server, venue, "layout", "rules", "--add", "ticket_type=Speaker:speaker", "--add", "role=Host:speaker")
    picked = " ".join(cli(redis_server, venue, "layout", "set", str(path)).stdout.split())
    assert "from their next badge for jobs with role=Host or ticket_type=Speaker, and jobs naming it" in picked, picked
    default = " ".join(cli(redis_server, venue, "layout", "set", str(path), "--name", "default").stdout.split())
    assert "for every job no rule and no `layout` field sends elsewhere" in default, default


def test_set_refuses_the_reserved_name_built_in(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    """``built-in`` names the design box separators are drawn in: a layout of that name would never be drawn."""
    write_logo(tmp_path / "logo.png")
    path = write(tmp_path, "built-in.yaml", band_layout())
    for args in ((str(path),), (str(path), "--name", "built-in")):
        refused = cli(redis_server, venue, "layout", "set", *args)
        assert refused.returncode == 2, refused.stdout
        assert "layout refused, nothing changed: the layout name 'built-in' is reserved" in refused.stderr
        assert "Traceback" not in refused.stderr
    assert "no layouts" in cli(redis_server, venue, "layout", "list").stdout
