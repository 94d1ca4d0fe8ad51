"""A pre-printed badge at the door, on a real redis-server and the real intake over HTTP: the kiosk prints nothing
and says where it is, a changed attendee's badge is void and printed at the door once, the desk's hand-over is the
arrival, and a pre-print job's confirm is no arrival."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.exceptions import NoPermissionError

from attendees.importer import Importer
from attendees.store import AttendeeStore, record_for
from cli.redis_server import RedisServer
from eventday.counts import event_day
from preprint.jobs import preprint_job
from preprint.keys import PreprintKeys
from preprint.store import PreprintStore
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.printed import PrintedRecord
from protocol.store import Store
from tests.support.agents import print_it
from tests.support.attendee_files import rows
from tests.support.intake import Desk
from tests.support.processes import cli, create_user

PEOPLE = [
    {"attendee_id": "k1", "name": "Jan Kowalski", "fields": {"ticket_type": "Visitor"}},
    {"attendee_id": "m1", "name": "Anna Müller", "fields": {"ticket_type": "Visitor"}},
    {"attendee_id": "z1", "name": "Zoë Zimmer", "fields": {"ticket_type": "Visitor"}},
]


async def printed_pdf_run(redis: Redis, venue: str, box_size: int = 2) -> PreprintStore:
    """A run planned, its PDF written, its sheets printed (``preprint done``)."""
    attendees = AttendeeStore(redis, venue)
    await Importer(attendees).load(iter(rows(PEOPLE)))
    store = PreprintStore(redis, venue, attendees)
    await store.plan("night", box_size=box_size, pickup="the welcome desk")
    await store.move("night", ["planned"], "planned", "pdf")
    assert await store.done("night") == 3
    return store


async def test_a_kiosk_scan_of_a_pre_printed_attendee_prints_nothing_and_says_the_box(
    desk: Desk, redis: Redis, venue: str
) -> None:
    await printed_pdf_run(redis, venue)
    resp = await desk.client.post("/v1/attendees/m1/badge", headers=desk.auth("kiosk"))
    assert resp.status == 200
    body = await resp.json()
    assert body["printed"] is False
    assert body["preprint"] == {
        "box": 1, "box_label": "Box 1: Kowalski - Müller", "range": "Kowalski - Müller", "pickup": "the welcome desk",
        "state": "preprinted",
    }  # fmt: skip
    assert body["message"] == "Your badge is ready: box 1, Kowalski - Müller, the welcome desk."
    # as any kiosk answer: the badge named by badge_id, never the code, order code or job id
    assert "badge_id" in body and not {"code", "order_code", "job_id", "email"} & set(body)
    m1 = await AttendeeStore(redis, venue).get("m1")
    assert m1 is not None and m1.code not in json.dumps(body) and m1.job_id not in json.dumps(body)
    assert await redis.llen(Keys(venue).pool) == 0
    assert await redis.exists(Keys(venue).job(m1.job_id)) == 0
    # the desk's search shows the box
    found = await desk.client.get("/v1/attendees", params={"q": "zimmer"}, headers=desk.auth("desk"))
    (zoe,) = (await found.json())["attendees"]
    assert zoe["preprint"]["box_label"] == "Box 2: Zimmer" and zoe["preprint"]["run"] == "night"


async def test_a_renamed_attendees_badge_is_void_and_printed_at_the_door_once(
    desk: Desk, redis: Redis, venue: str
) -> None:
    store = await printed_pdf_run(redis, venue)
    # a rename from the source (an import), and a desk's correction of another attendee
    await Importer(store.attendees).load(iter(rows([{**PEOPLE[1], "name": "Anna Schmidt"}])))
    await store.attendees.edit("z1", {"company": "Zimmer GmbH"})
    voids = {v.code: v for v in await store.voids("night")}
    assert set(voids) == {"m1", "z1"}
    assert (voids["m1"].box, voids["m1"].name, voids["m1"].reason, voids["m1"].printed) == (
        1, "Anna Müller", "name changed", True,
    )  # fmt: skip
    assert voids["z1"].reason == "company changed"
    listed = await (await desk.client.get("/v1/preprint/voids", headers=desk.auth("staff"))).json()
    assert [v["code"] for v in listed["runs"][0]["voids"]] == ["m1", "z1"]
    # a desk sees the codes masked (as in its attendee answers), a viewer none of it
    listed = await (await desk.client.get("/v1/preprint/voids", headers=desk.auth("desk"))).json()
    assert [(v["code"], v["name"]) for v in listed["runs"][0]["voids"]] == [("…", "Anna Müller"), ("…", "Zoë Zimmer")]
    assert (await desk.client.get("/v1/preprint/voids", headers=desk.auth("viewer"))).status == 403
    first = await desk.client.post("/v1/attendees/m1/badge", headers=desk.auth("kiosk"))
    assert first.status == 201 and (await first.json())["badge"]["state"] == "queued"
    again = await desk.client.post("/v1/attendees/m1/badge", headers=desk.auth("kiosk"))
    assert again.status == 200 and (await again.json())["duplicate"] is True
    assert await redis.llen(Keys(venue).pool) == 1
    m1 = await store.attendees.get("m1")
    assert m1 is not None
    payload = json.loads(await redis.hget(Keys(venue).job(m1.job_id), "payload"))
    assert payload["name"] == "Anna Schmidt"
    # the hand-over of a void badge is refused: the desk prints theirs
    refused = await desk.client.post("/v1/attendees/z1/handed-over", headers=desk.auth("desk"))
    assert refused.status == 409 and "void" in (await refused.json())["detail"]
    counts = await store.counts(await store.need_run("night"))
    assert (counts["void"], counts["preprinted"], counts["in_boxes"]) == (2, 3, 1)


async def test_the_hand_over_checks_in_counts_and_tells_the_printed_record_in_one_step(
    desk: Desk, redis: Redis, venue: str
) -> None:
    store = await printed_pdf_run(redis, venue)
    record = PrintedRecord(redis, venue)
    await record.join("pretix")
    before = await store.attendees.counts()
    # the desk acts by the attendee's handle, as for its other actions (it sees the code masked)
    found = await desk.client.get("/v1/attendees", params={"q": "kowalski"}, headers=desk.auth("desk"))
    (jan,) = (await found.json())["attendees"]
    assert jan["code"] != "k1"
    resp = await desk.client.post(f"/v1/attendees/{jan['handle']}/handed-over", headers=desk.auth("desk"))
    assert resp.status == 200 and (await resp.json())["handed_over"] is True
    k1 = await store.attendees.get("k1")
    assert k1 is not None and k1.preprint_state == "handed_over"
    after = await store.attendees.counts()
    assert after.checked_in == before.checked_in + 1
    (entry,) = await record.after("pretix", 10)
    assert (entry.kind, entry.job_id, entry.confirmed_by) == ("handed_over", k1.job_id, "desk")
    # on the board it is an arrival (of the desk's zone: none here), not a print
    day = await event_day(redis, venue)
    assert sum(day.handed_over["-"]) == 1 and not day.arrivals
    again = await desk.client.post("/v1/attendees/k1/handed-over", headers=desk.auth("desk"))
    assert (await again.json())["already"] is True
    assert (await store.attendees.counts()).checked_in == after.checked_in and len(await record.after("pretix", 9)) == 1
    kiosk = await (await desk.client.post("/v1/attendees/k1/badge", headers=desk.auth("kiosk"))).json()
    assert kiosk["printed"] is False and "handed to you already" in kiosk["message"]
    assert (await desk.client.post("/v1/attendees/k1/handed-over", headers=desk.auth("kiosk"))).status == 403
    counts = await store.counts(await store.need_run("night"))
    assert (counts["handed_over"], counts["preprinted"], counts["in_boxes"]) == (1, 3, 2)


async def test_a_pre_print_jobs_confirm_is_recorded_as_such_and_a_separator_not_at_all(
    redis: Redis, venue: str
) -> None:
    attendees = AttendeeStore(redis, venue)
    await Importer(attendees).load(iter(rows(PEOPLE)))
    store = PreprintStore(redis, venue, attendees)
    await store.plan("night", box_size=5)
    await store.move("night", ["planned"], "printing", "pool")
    venue_store, record = Store(redis, venue), PrintedRecord(redis, venue)
    await record.join("pretix")
    await venue_store.beat("p1", {"state": "ready"}, 60_000, first=True)
    k1 = await attendees.get("k1")
    assert k1 is not None
    job = preprint_job(k1)
    assert job.hash_fields == {"kind": "preprint", "run": "night", "box": "1", "attendee": "k1"}
    assert job.job.job_id == f"{k1.job_id}:pp" and job.job.name == "Jan Kowalski"
    await venue_store.enqueue(job.job.job_id, job.payload, None)
    await redis.hset(Keys(venue).job(job.job.job_id), mapping=job.hash_fields)
    await venue_store.enqueue("sep-1", json.dumps({"attendee_id": "sep", "name": "Box 1"}), None)
    await redis.hset(Keys(venue).job("sep-1"), "kind", "separator")
    await print_it(venue_store, "p1", job.job.job_id)
    await print_it(venue_store, "p1", "sep-1")
    (entry,) = await record.after("pretix", 10)
    assert (entry.kind, entry.job_id) == ("preprint", job.job.job_id)
    # on the event day both are labels printed at p1, neither an arrival
    day = await event_day(redis, venue)
    assert not day.arrivals and not day.handed_over
    assert {p.printer: p.per_hour for p in day.printers}["p1"] == 2
    # no arrival: not counted, and the door answers with the box
    assert (await attendees.counts()).checked_in == 0
    where = await store.where(k1)
    assert where is not None and where.state == "preprinted"
    assert (await attendees.badge("k1", "kiosk", at_desk=False))[0].kind == "preprinted"
    counts = await store.counts(await store.need_run("night"))
    assert (counts["preprinted"], counts["planned"]) == (1, 2)
    assert await redis.hget(PreprintKeys(venue).run("night"), "mode") == b"pool"


async def test_the_counts_agree_in_status_metrics_and_the_export(
    desk: Desk, redis: Redis, venue: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    store = await printed_pdf_run(redis, venue)
    await Importer(store.attendees).load(iter(rows([{**PEOPLE[1], "name": "Anna Schmidt"}])))  # void
    assert (await desk.client.post("/v1/attendees/m1/badge", headers=desk.auth("kiosk"))).status == 201
    venue_store = Store(redis, venue)
    await venue_store.beat("p1", {"state": "ready"}, 60_000, first=True)
    m1 = await store.attendees.get("m1")
    assert m1 is not None
    await print_it(venue_store, "p1", m1.job_id)  # printed at the door
    assert (await desk.client.post("/v1/attendees/k1/handed-over", headers=desk.auth("desk"))).status == 200
    want = {"planned": 0, "preprinted": 3, "in_boxes": 1, "handed_over": 1, "void": 1, "printed_at_door": 1}
    assert await store.counts(await store.need_run("night")) == want
    # badge-agent status (and the board: the same section of the venue's view)
    shown = await asyncio.to_thread(cli, redis_server, venue, "status", "--json")
    assert shown.returncode == 0, shown.stderr
    (run,) = json.loads(shown.stdout)["preprint"]["runs"]
    assert run["counts"] == want
    text = (await asyncio.to_thread(cli, redis_server, venue, "status")).stdout
    line = "pre-print night (done): pre-printed 3 (in boxes 1) · handed over 1 · void 1 (printed at the door 1)"
    assert line in text
    # the intake's /metrics
    metrics = await (await desk.client.get("/metrics", headers=desk.auth("viewer"))).text()
    for what, n in want.items():
        assert f'badge_preprint_badges{{run="night",what="{what}"}} {n}.0' in metrics, what
    # the attendee export: the no-shows still in boxes, and who is checked in
    out = tmp_path / "in-boxes.csv"
    await asyncio.to_thread(cli, redis_server, venue, "attendees", "export", "-o", str(out), "--in-boxes")
    boxed = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [(r["code"], r["preprint_run"], r["preprint_box"], r["preprint_state"]) for r in boxed] == [
        ("z1", "night", "2", "preprinted")
    ]
    out = tmp_path / "checked-in.csv"
    await asyncio.to_thread(cli, redis_server, venue, "attendees", "export", "-o", str(out), "--checked-in")
    checked = {r["code"]: r for r in csv.DictReader(out.open(encoding="utf-8"))}
    assert set(checked) == {"k1", "m1"} and checked["k1"]["preprint_state"] == "handed_over"
    assert (await store.attendees.counts()).checked_in == len(checked)


async def test_the_intake_users_hand_over_counts_the_arrival_on_the_board(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    """The desk's hand-over runs under the intake's generated Redis user: its entry, counters and the board's arrival
    count (the event day's minutes) are all its to write."""
    store = await printed_pdf_run(redis, venue)
    user = await create_user(redis, venue, tmp_path / "intake.pw", role="intake")
    intake = Redis(port=redis_server.port, username=user, password=(tmp_path / "intake.pw").read_text().strip())
    try:
        as_intake = PreprintStore(intake, venue, AttendeeStore(intake, venue))
        assert (await as_intake.handover("k1", "desk-1", "hall-a"))[0] == "handed_over"
        assert sum((await event_day(redis, venue)).handed_over["hall-a"]) == 1
        k1 = await store.attendees.get("k1")
        assert k1 is not None and k1.preprint_state == "handed_over"
    finally:
        await intake.aclose()
        await redis.execute_command("ACL", "DELUSER", user)


async def test_a_pretix_syncs_rename_voids_a_pre_printed_badge_under_its_user(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    """A rename from pretix reaches an attendee of a run under the pretix sync's generated Redis user: the step names
    the pre-print job's completion gate, which that user only reads."""
    store = await printed_pdf_run(redis, venue)
    user = await create_user(redis, venue, tmp_path / "sync.pw", role="pretix-sync")
    sync = Redis(port=redis_server.port, username=user, password=(tmp_path / "sync.pw").read_text().strip())
    try:
        m1 = await store.attendees.get("m1")
        assert m1 is not None
        # As the sync writes a changed pretix position (pretix_sync/listing.py): the record with its badge's job id.
        renamed = parse_job({"job_id": m1.job_id, "attendee_id": "m1", "name": "Anna Schmidt", "fields": m1.fields})
        row = record_for(renamed, m1.order_code, m1.email, m1.source, m1.status)
        (put,) = await AttendeeStore(sync, venue).put_many([("m1", row)])
        assert put.kind == "updated"
        assert [v.code for v in await store.voids("night")] == ["m1"]
        with pytest.raises(NoPermissionError):  # the gate is the agents' to write
            await sync.set(Keys(venue).done("m1:pp"), "x")
    finally:
        await sync.aclose()
        await redis.execute_command("ACL", "DELUSER", user)
