"""The intake's attendee routes over real HTTP on a real redis-server: roles, privacy, one badge per ticket."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest
from redis.asyncio import Redis

from attendees.store import AttendeeStore
from cli.redis_server import RedisServer
from intake.attendee_routes import UNKNOWN
from protocol.keys import Keys
from tests.support.attendee_files import listed
from tests.support.intake import Desk, start_desk


async def test_a_kiosk_looks_up_one_full_code_and_never_searches(desk: Desk, redis: Redis, venue: str) -> None:
    await listed(redis, venue)
    resp = await desk.client.get("/v1/attendees/secret-renee", headers=desk.auth("kiosk"))
    assert resp.status == 200
    body = await resp.json()
    assert body["name"] == "Renée Lefèvre" and body["first_name"] == "Renée" and body["badge"]["state"] == "none"
    assert "email" not in body and "order_code" not in body and "company" not in body
    searched = await desk.client.get("/v1/attendees", params={"q": "renee"}, headers=desk.auth("kiosk"))
    assert searched.status == 403
    unknown = await desk.client.get("/v1/attendees/no-such-code", headers=desk.auth("kiosk"))
    assert unknown.status == 404
    assert (await unknown.json())["detail"] == UNKNOWN


async def test_a_desk_searches_in_any_script_and_sees_badge_states(desk: Desk, redis: Redis, venue: str) -> None:
    await listed(redis, venue)
    store = AttendeeStore(redis, venue)
    for query, code in (("renee lef", "secret-renee"), ("δημ", "secret-dimitris"), ("李", "secret-lee")):
        resp = await desk.client.get("/v1/attendees", params={"q": query}, headers=desk.auth("desk"))
        assert resp.status == 200
        found = (await resp.json())["attendees"]
        # A desk names them by handle (the code is masked): the handle of the one attendee with that code.
        assert [await store.code_of(a["handle"]) for a in found] == [code], query
        assert found[0]["badge"]["state"] == "none"
    junk = await desk.client.get("/v1/attendees", params={"q": "\x00*[\\"}, headers=desk.auth("desk"))
    assert junk.status == 200 and (await junk.json())["attendees"] == []
    long = await desk.client.get("/v1/attendees", params={"q": "a" * 201}, headers=desk.auth("desk"))
    assert long.status == 422


async def test_two_kiosks_scanning_one_ticket_at_once_print_one_badge(desk: Desk, redis: Redis, venue: str) -> None:
    await listed(redis, venue)
    one, two = await asyncio.gather(
        desk.client.post("/v1/attendees/secret-renee/badge", headers=desk.auth("kiosk")),
        desk.client.post("/v1/attendees/secret-renee/badge", headers=desk.auth("kiosk-2")),
    )
    assert sorted([one.status, two.status]) == [200, 201]
    bodies = [await one.json(), await two.json()]
    assert sorted(b["duplicate"] for b in bodies) == [False, True]
    assert bodies[0]["badge_id"] == bodies[1]["badge_id"] and all(b["badge"]["state"] == "queued" for b in bodies)
    assert await redis.lrange(Keys(venue).pool, 0, -1) == [b"ORD1-1"]


async def test_a_cancelled_ticket_never_prints(desk: Desk, redis: Redis, venue: str) -> None:
    store = await listed(redis, venue)
    await store.set_status("secret-lee", "cancelled", "test")
    resp = await desk.client.post("/v1/attendees/secret-lee/badge", headers=desk.auth("desk"))
    assert resp.status == 409 and "cancelled" in (await resp.json())["detail"]
    looked = await (await desk.client.get("/v1/attendees/secret-lee", headers=desk.auth("kiosk"))).json()
    assert looked["status"] == "cancelled" and "help desk" in looked["message"]
    assert await redis.llen(Keys(venue).pool) == 0


async def test_with_a_list_a_kiosk_does_not_print_typed_names(
    tmp_path: Path, desk: Desk, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    job = {"attendee_id": "secret-renee", "name": "Someone Else"}
    before = await desk.client.post("/v1/jobs", json=job, headers=desk.auth("kiosk"))
    assert before.status == 201  # no list loaded: the kiosk types names as before
    await listed(redis, venue)
    refused = await desk.client.post("/v1/jobs", json={**job, "job_id": "x-2"}, headers=desk.auth("kiosk"))
    assert refused.status == 403 and "scan the ticket" in (await refused.json())["detail"]
    assert (await desk.client.post("/v1/jobs", json={**job, "job_id": "x-3"}, headers=desk.auth("desk"))).status == 201
    (tmp_path / "b").mkdir()
    allowing, client = await start_desk(tmp_path / "b", venue, redis_server.url, "kiosk: {allow_unlisted: true}\n")
    try:
        unlisted = {"attendee_id": "not-on-the-list", "name": "Typed Name"}
        ok = await allowing.client.post("/v1/jobs", json=unlisted, headers=allowing.auth("kiosk"))
        assert ok.status == 201
        # A listed code typed there is still that attendee's one badge (the desk's above), not a second.
        listed_again = await allowing.client.post("/v1/jobs", json=job, headers=allowing.auth("kiosk"))
        assert listed_again.status == 200 and (await listed_again.json())["duplicate"] is True
    finally:
        await allowing.client.close()
        await client.aclose()


async def test_lookups_are_rate_limited_per_token(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    await listed(redis, venue)
    limited, client = await start_desk(
        tmp_path, venue, redis_server.url, "limits: {lookup_rate: 0.1, lookup_burst: 3}\n"
    )
    try:
        statuses = [
            (await limited.client.get(f"/v1/attendees/guess-{i}", headers=limited.auth("kiosk"))).status
            for i in range(5)
        ]
        assert statuses == [404, 404, 404, 429, 429]
        other = await limited.client.get("/v1/attendees/secret-renee", headers=limited.auth("kiosk-2"))
        assert other.status == 200  # per token
    finally:
        await limited.client.close()
        await client.aclose()


async def test_staff_correct_a_name_and_the_badge_job_follows(desk: Desk, redis: Redis, venue: str) -> None:
    await listed(redis, venue)
    await desk.client.post("/v1/attendees/secret-renee/badge", headers=desk.auth("desk"))
    change = {"name": "Renée Lefèvre-Martin"}
    denied = await desk.client.patch("/v1/attendees/secret-renee", json=change, headers=desk.auth("desk"))
    assert denied.status == 403
    resp = await desk.client.patch("/v1/attendees/secret-renee", json=change, headers=desk.auth("staff"))
    assert resp.status == 200, await resp.text()
    body = await resp.json()
    assert body["name"] == "Renée Lefèvre-Martin" and body["source_says"] == {"name": "Renée Lefèvre"}
    payload = json.loads(await redis.hget(Keys(venue).job("ORD1-1"), "payload"))
    assert payload["name"] == "Renée Lefèvre-Martin"
    bad = await desk.client.patch("/v1/attendees/secret-renee", json={"name": "\x07"}, headers=desk.auth("staff"))
    assert bad.status == 422
    cancel = await desk.client.patch(
        "/v1/attendees/secret-renee", json={"status": "cancelled"}, headers=desk.auth("staff")
    )
    assert cancel.status == 200 and (await cancel.json())["badge"]["state"] == "cancelled"


async def test_a_walk_in_is_added_then_printed(desk: Desk, redis: Redis, venue: str) -> None:
    resp = await desk.client.post(
        "/v1/attendees", json={"name": "Walk In", "company": "Door"}, headers=desk.auth("desk")
    )
    assert resp.status == 201, await resp.text()
    body = await resp.json()
    assert body["source"] == "walk-in" and body["badge"]["state"] == "queued"
    # A made code is a credential like any: the desk that added the walk-in sees it masked, staff whole.
    assert body["job_id"].startswith("att-") and body["code"].startswith("…") and len(body["code"]) == 5
    found = await (await desk.client.get("/v1/attendees", params={"q": "walk"}, headers=desk.auth("desk"))).json()
    assert [a["handle"] for a in found["attendees"]] == [body["handle"]]
    code = await AttendeeStore(redis, venue).code_of(body["handle"])
    assert code is not None and code.startswith("walkin-") and code.endswith(body["code"][1:])
    again = await desk.client.post("/v1/attendees", json={"name": "X", "code": code}, headers=desk.auth("desk"))
    assert again.status == 409
    kiosk = await desk.client.post("/v1/attendees", json={"name": "X"}, headers=desk.auth("kiosk"))
    assert kiosk.status == 403


async def test_a_walk_in_with_an_e_mail_that_is_not_an_address_is_refused_naming_the_field(
    desk: Desk, redis: Redis, venue: str
) -> None:
    """As ``attendees import`` leaves such an e-mail out, the desk's walk-in route refuses it (422 naming ``email``),
    and adds nobody; an address is kept."""
    for bad in ("not an address", "renee@", "@example.org", "a@b", f"{'x' * 250}@example.org"):
        resp = await desk.client.post(
            "/v1/attendees", json={"name": "Walk In", "email": bad, "print": False}, headers=desk.auth("desk")
        )
        assert resp.status == 422, (bad, await resp.text())
        problem = await resp.json()
        assert [e["field"] for e in problem["errors"]] == ["email"] and "Traceback" not in problem["detail"]
        assert problem["detail"] == "email: is not an e-mail address"
    found = await (await desk.client.get("/v1/attendees", params={"q": "walk"}, headers=desk.auth("desk"))).json()
    assert found["attendees"] == []
    good = await desk.client.post(
        "/v1/attendees",
        json={"name": "Walk In", "email": " walk.in@example.org ", "print": False},
        headers=desk.auth("staff"),
    )
    assert good.status == 201, await good.text()
    assert (await good.json())["email"] == "walk.in@example.org"


async def test_no_ticket_code_is_logged(desk: Desk, redis: Redis, venue: str, caplog: pytest.LogCaptureFixture) -> None:
    await listed(redis, venue)
    with caplog.at_level(logging.DEBUG):
        await desk.client.get("/v1/attendees/secret-renee", headers=desk.auth("kiosk"))
        await desk.client.post("/v1/attendees/secret-renee/badge", headers=desk.auth("kiosk"))
        await desk.client.get("/v1/attendees/secret-unknown", headers=desk.auth("kiosk"))
        await desk.client.patch("/v1/attendees/secret-renee", json={"company": "X"}, headers=desk.auth("staff"))
        await desk.client.get("/v1/jobs/secret-jobid", headers=desk.auth("desk"))
    # The intake's own log (``badge-agent intake`` runs aiohttp without its access log; the test server has one).
    text = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("badge_agent"))
    assert "GET /v1/attendees/{code} 200" in text
    assert "secret" not in text


async def test_the_attendee_routes_run_under_the_intake_user(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    import shlex

    from aiohttp.test_utils import TestClient, TestServer

    from intake.app import make_app
    from intake.config import load_intake_config
    from intake.tokens import TokenFile
    from protocol.connection import make_redis
    from tests.support.intake import write_intake_config
    from tests.support.processes import badge_agent

    await listed(redis, venue)
    pw = tmp_path / "intake.pw"
    words = shlex.split(badge_agent("acl", "--venue", venue, "--intake", "--password-file", str(pw)).stdout.strip())
    await redis.execute_command(*words)
    url = f"redis://{words[2]}:{pw.read_text().strip()}@127.0.0.1:{redis_server.port}/0"
    config = load_intake_config(write_intake_config(tmp_path, venue, url))
    staff = {"Authorization": f"Bearer {TokenFile(config.tokens).add('s', 'staff')}"}
    as_intake = make_redis(config.redis, block_timeout=20.0)
    try:
        async with TestClient(TestServer(make_app(config, as_intake))) as client:
            assert (await client.get("/v1/attendees/secret-renee", headers=staff)).status == 200
            assert (await client.get("/v1/attendees", params={"q": "δημ"}, headers=staff)).status == 200
            assert (await client.post("/v1/attendees/secret-renee/badge", headers=staff)).status == 201
            walk_in = await client.post("/v1/attendees", json={"name": "Walk In"}, headers=staff)
            assert walk_in.status == 201, await walk_in.text()
            patched = await client.patch("/v1/attendees/secret-lee", json={"name": "Bruce Lee"}, headers=staff)
            assert patched.status == 200, await patched.text()
            assert "badge_attendees" in await (await client.get("/metrics")).text()
    finally:
        await as_intake.aclose()


async def test_a_desk_posting_a_job_for_a_listed_ticket_gets_the_attendees_one_badge(
    desk: Desk, redis: Redis, venue: str
) -> None:
    await listed(redis, venue)
    job = {"attendee_id": "secret-renee", "name": "Renee L", "job_id": "desk-made-1"}
    first = await desk.client.post("/v1/jobs", json=job, headers=desk.auth("desk"))
    assert first.status == 201
    body = await first.json()
    assert (body["job_id"], body["duplicate"]) == ("ORD1-1", False)  # the list's job, with the list's name
    again = await desk.client.post("/v1/attendees/secret-renee/badge", headers=desk.auth("kiosk"))
    assert again.status == 200 and (await again.json())["duplicate"] is True
    assert await redis.lrange(Keys(venue).pool, 0, -1) == [b"ORD1-1"]
    payload = json.loads(await redis.hget(Keys(venue).job("ORD1-1"), "payload"))
    assert payload["name"] == "Renée Lefèvre"
    unlisted = await desk.client.post(
        "/v1/jobs", json={"attendee_id": "not-listed", "name": "X"}, headers=desk.auth("desk")
    )
    assert unlisted.status == 201 and (await unlisted.json())["job_id"] == "not-listed"
    store = AttendeeStore(redis, venue)
    await store.set_status("secret-lee", "cancelled", "test")
    cancelled = await desk.client.post(
        "/v1/jobs", json={"attendee_id": "secret-lee", "name": "X"}, headers=desk.auth("desk")
    )
    assert cancelled.status == 409


async def test_a_zone_tokens_badges_print_in_its_zone_and_elsewhere_only_when_it_cannot(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    from protocol.store import Store
    from tests.support.agents import eq, running_agent
    from tests.support.waiting import wait_until

    await listed(redis, venue)
    zones = "zones:\n  hall-a: {printers: [hall-a-1], tokens: [kiosk-1]}\n"
    zoned, client = await start_desk(tmp_path, venue, redis_server.url, zones)
    k = Keys(venue)

    async def printer_of(job_id: str) -> bytes:
        await wait_until(lambda: _printed(job_id))
        return bytes(await redis.hget(k.job(job_id), "printer"))

    async def _printed(job_id: str) -> bool:
        return await redis.hget(k.job(job_id), "state") == b"printed"

    try:
        async with (
            running_agent(tmp_path, venue, redis_server.url, "hall-a-1", printer__location="Hall A, desk 1"),
            running_agent(tmp_path, venue, redis_server.url, "hall-b-1", printer__location="Hall B, desk 1"),
        ):
            await wait_until(lambda: eq(redis.zcard(k.hb), 2), timeout=10)
            resp = await zoned.client.post("/v1/attendees/secret-renee/badge", headers=zoned.auth("kiosk"))
            assert resp.status == 201
            assert await printer_of("ORD1-1") == b"hall-a-1"  # its zone's printer, though hall-b-1 is idle too
            # A token of no zone: the pool, any printer.
            other = await zoned.client.post("/v1/attendees/secret-dimitris/badge", headers=zoned.auth("kiosk-2"))
            assert other.status == 201
            await printer_of("ORD2-1")
            # The zone's printer out of service: its zone's badges print elsewhere.
            await Store(redis, venue).drain("hall-a-1", "drain", "test")
            await wait_until(lambda: _health_state(redis, k, "hall-a-1", b"drained"), timeout=10)
            lee = await (await zoned.client.get("/v1/attendees/secret-lee", headers=zoned.auth("desk"))).json()
            resp = await zoned.client.post("/v1/attendees/secret-lee/badge", headers=zoned.auth("kiosk"))
            assert resp.status == 201
            assert await printer_of(lee["job_id"]) == b"hall-b-1"
    finally:
        await zoned.client.close()
        await client.aclose()


async def _health_state(redis: Redis, k: Keys, printer: str, state: bytes) -> bool:
    raw = await redis.get(k.health(printer))
    return raw is not None and json.loads(raw).get("state", "").encode() == state
