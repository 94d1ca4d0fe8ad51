"""The desk and the kiosk at a busy door: a desk reprints a lost badge at its own printer, a cancelled ticket is
undone, a kiosk says when no printer can print, an order code typed at a kiosk is sent to the ticket's code, and the
intake's address answers with where to go."""

from __future__ import annotations

import json
from pathlib import Path

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from intake.attendee_routes import UNKNOWN
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import add, print_it
from tests.support.attendee_files import listed
from tests.support.intake import Desk, start_desk
from tests.support.venue import assert_each_unfinished_job_in_one_list, assert_pinned_index_exact

ZONES = "zones:\n  hall-a: {printers: [hall-a-1, hall-a-2]}\n  hall-b: {printers: [hall-b-1]}\n"


async def beating(redis: Redis, venue: str, name: str, state: str = "ready", location: str = "") -> None:
    """A printer as its agent's heartbeat leaves it in Redis (printers, hb, health), beating now, in ``state``."""
    k = Keys(venue)
    sec, usec = await redis.time()
    now = int(sec) * 1000 + int(usec) // 1000
    await redis.hset(k.printers, name, location)
    await redis.zadd(k.hb, {name: now})
    await redis.set(k.health(name), json.dumps({"state": state, "location": location, "beat_ms": now}))


async def printed_job(redis: Redis, venue: str, attendee: str, printer: str) -> str:
    store = Store(redis, venue)
    job_id = await add(store, attendee)
    assert await print_it(store, printer, job_id) == ("printed", "")
    return job_id


def _auth(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


async def test_a_desk_reprints_a_lost_badge_at_its_own_printer_within_the_cap(
    desk: Desk, redis: Redis, venue: str
) -> None:
    for name in ("hall-a-1", "hall-b-1"):
        await beating(redis, venue, name)
    job_id = await printed_job(redis, venue, "lost1", "hall-b-1")
    own = _auth(desk.tokens.add("desk-a", "desk", printers=("hall-a-1",)))
    store, k = Store(redis, venue), Keys(venue)

    no_reason = await desk.client.post(f"/v1/jobs/{job_id}/reprint", json={}, headers=own)
    assert no_reason.status == 422
    resp = await desk.client.post(f"/v1/jobs/{job_id}/reprint", json={"reason": "lost it"}, headers=own)
    assert resp.status == 200, await resp.text()
    assert (await resp.json())["reprints"] == 1
    # At the desk's own printer, at the front of its queue, indexed as any pinned job: not at whichever is free.
    assert await redis.hget(k.job(job_id), "pinned") == b"hall-a-1"
    assert await redis.lrange(k.queue("hall-a-1"), -1, -1) == [job_id.encode()]
    assert await redis.llen(k.pool) == 0
    await assert_pinned_index_exact(redis, venue)
    await assert_each_unfinished_job_in_one_list(redis, venue, [job_id])
    # A second click while it waits is no second copy.
    again = await desk.client.post(f"/v1/jobs/{job_id}/reprint", json={"reason": "lost it"}, headers=own)
    assert again.status == 409 and (await again.json())["state"] == "queued"
    assert await store.take("hall-b-1") is None
    assert await print_it(store, "hall-a-1", job_id) == ("printed", "")
    assert (await redis.hgetall(k.stats))[b"reprint"] == b"1"
    reprint = [f for _, f in await redis.xrange(k.events) if f[b"event"] == b"reprint"]
    assert reprint[0][b"by"] == b"token:desk-a" and reprint[0][b"printer"] == b"hall-a-1"

    # Capped as staff's are (limits.reprint_cap, 2); past it only staff may force.
    assert (await desk.client.post(f"/v1/jobs/{job_id}/reprint", json={"reason": "x"}, headers=own)).status == 200
    assert await print_it(store, "hall-a-1", job_id) == ("printed", "")
    over = await desk.client.post(f"/v1/jobs/{job_id}/reprint", json={"reason": "x"}, headers=own)
    assert over.status == 409 and (await over.json())["reprints"] == 2
    forced = await desk.client.post(f"/v1/jobs/{job_id}/reprint", json={"reason": "x", "force": True}, headers=own)
    assert forced.status == 403
    staff = await desk.client.post(
        f"/v1/jobs/{job_id}/reprint", json={"reason": "x", "force": True}, headers=desk.auth("staff")
    )
    assert staff.status == 200
    # A staff token of no printer and no zone: the front of the pool, as before.
    assert await redis.hget(k.job(job_id), "pinned") == b""
    assert await redis.lrange(k.pool, -1, -1) == [job_id.encode()]
    await assert_pinned_index_exact(redis, venue)


async def test_a_zone_desks_reprint_waits_at_its_zones_printer_that_can_print(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    zoned, client = await start_desk(tmp_path, venue, redis_server.url, ZONES)
    try:
        await beating(redis, venue, "hall-a-1", state="paused")  # out of labels
        await beating(redis, venue, "hall-a-2")
        await beating(redis, venue, "hall-b-1")
        job_id = await printed_job(redis, venue, "lost2", "hall-b-1")
        staff = _auth(zoned.tokens.add("staff-a", "staff", zone="hall-a"))
        resp = await zoned.client.post(f"/v1/jobs/{job_id}/reprint", json={"reason": "lost"}, headers=staff)
        assert resp.status == 200, await resp.text()
        k = Keys(venue)
        job = await redis.hgetall(k.job(job_id))
        assert job[b"pinned"] == b"hall-a-2" and job[b"zone"] == b"hall-a"
        assert job[b"zone_printers"] == b"hall-a-1 hall-a-2"
        await assert_pinned_index_exact(redis, venue)
        # A pin outside the token's printers is refused; a desk with no printer of its zone able goes to the pool.
        desk_b = _auth(zoned.tokens.add("desk-b", "desk", zone="hall-b", printers=("hall-b-1",)))
        other = await printed_job(redis, venue, "lost3", "hall-b-1")
        refused = await zoned.client.post(
            f"/v1/jobs/{other}/reprint", json={"reason": "x", "printer": "hall-a-2"}, headers=desk_b
        )
        assert refused.status == 403
        await beating(redis, venue, "hall-b-1", state="device_down")
        resp = await zoned.client.post(f"/v1/jobs/{other}/reprint", json={"reason": "x"}, headers=desk_b)
        assert resp.status == 200
        assert await redis.hget(k.job(other), "pinned") == b"" and await redis.lrange(k.pool, -1, -1) == [
            other.encode()
        ]
        await assert_pinned_index_exact(redis, venue)
    finally:
        await zoned.client.close()
        await client.aclose()


async def test_the_desk_page_learns_what_its_token_may_do(desk: Desk) -> None:
    may = {}
    for role in ("desk", "staff"):
        resp = await desk.client.get("/desk/settings.json", headers=desk.auth(role))
        assert resp.status == 200
        body = await resp.json()
        assert body["role"] == role and body["reprint_cap"] == 2
        may[role] = body["may"]
    assert may["desk"]["reprint"] and may["desk"]["print"] and not may["desk"]["cancel"] and not may["desk"]["force"]
    assert may["staff"]["reprint"] and may["staff"]["cancel"] and may["staff"]["restore"] and may["staff"]["force"]
    # A viewer sees no attendee: not the desk page's settings either.
    assert (await desk.client.get("/desk/settings.json", headers=desk.auth("viewer"))).status == 403
    assert (await desk.client.get("/desk/settings.json")).status == 401
    assert (await desk.client.get("/desk/settings.json", headers=desk.auth("kiosk"))).status == 403


async def test_a_cancelled_ticket_is_undone_and_its_withdrawn_badge_prints_again(
    desk: Desk, redis: Redis, venue: str
) -> None:
    await listed(redis, venue)
    code, staff = "secret-renee", desk.auth("staff")
    assert (await desk.client.post(f"/v1/attendees/{code}/badge", headers=desk.auth("desk"))).status == 201
    cancelled = await desk.client.patch(f"/v1/attendees/{code}", json={"status": "cancelled"}, headers=staff)
    body = await cancelled.json()
    assert cancelled.status == 200 and body["status"] == "cancelled" and body["badge"]["state"] == "cancelled"
    undone = await desk.client.patch(f"/v1/attendees/{code}", json={"status": "valid"}, headers=staff)
    body = await undone.json()
    assert undone.status == 200 and body["status"] == "valid" and body["badge"]["state"] == "none"
    again = await desk.client.post(f"/v1/attendees/{code}/badge", headers=desk.auth("desk"))
    assert again.status == 201 and (await again.json())["badge"]["state"] == "queued"
    counts = await (await desk.client.get("/metrics")).text()
    assert 'badge_attendees{what="cancelled"} 0.0' in counts and 'badge_attendees{what="expected"} 3.0' in counts
    # Only staff cancel and undo.
    refused = await desk.client.patch(f"/v1/attendees/{code}", json={"status": "valid"}, headers=desk.auth("desk"))
    assert refused.status == 403


async def test_a_kiosk_is_told_when_no_printer_can_print_its_badge(desk: Desk, redis: Redis, venue: str) -> None:
    await listed(redis, venue)
    await beating(redis, venue, "hall-a-1", state="paused")  # out of labels
    await beating(redis, venue, "hall-b-1", state="paused")
    resp = await desk.client.post("/v1/attendees/secret-renee/badge", headers=desk.auth("kiosk"))
    assert resp.status == 201 and (await resp.json())["badge"]["no_printer"] is True
    looked = await (await desk.client.get("/v1/attendees/secret-renee", headers=desk.auth("kiosk"))).json()
    assert looked["badge"]["no_printer"] is True
    await beating(redis, venue, "hall-b-1")  # labels loaded again
    looked = await (await desk.client.get("/v1/attendees/secret-renee", headers=desk.auth("kiosk"))).json()
    assert looked["badge"]["no_printer"] is False


async def test_a_kiosk_typing_a_jobs_name_is_told_when_no_printer_can_print(
    desk: Desk, redis: Redis, venue: str
) -> None:
    await beating(redis, venue, "hall-a-1", state="drained")
    made = await desk.client.post("/v1/jobs", json={"attendee_id": "k1", "name": "Kim"}, headers=desk.auth("kiosk"))
    body = await made.json()
    assert made.status == 201 and body["no_printer"] is True
    await beating(redis, venue, "hall-a-1")
    read = await (await desk.client.get(f"/v1/jobs/{body['job_id']}", headers=desk.auth("kiosk"))).json()
    assert read["no_printer"] is False


async def test_an_order_code_at_a_kiosk_is_sent_to_the_tickets_code_and_found_at_the_desk(
    desk: Desk, redis: Redis, venue: str
) -> None:
    await listed(redis, venue)
    kiosk = desk.auth("kiosk")
    order = await desk.client.get("/v1/attendees/ORD1", headers=kiosk)
    unknown = await desk.client.get("/v1/attendees/NOPE9", headers=kiosk)
    # The same answer as for any unknown code: a kiosk never learns that an order code is someone's.
    assert order.status == unknown.status == 404
    assert (await order.json())["detail"] == (await unknown.json())["detail"] == UNKNOWN
    assert "scan the code on your ticket" in UNKNOWN
    badge = await desk.client.post("/v1/attendees/ORD1/badge", headers=kiosk)
    assert badge.status == 404 and (await badge.json())["detail"] == UNKNOWN
    for query in ("ORD1", "ord1"):
        found = await (await desk.client.get("/v1/attendees", params={"q": query}, headers=desk.auth("staff"))).json()
        assert [a["code"] for a in found["attendees"]] == ["secret-renee"]
        at_desk = await (await desk.client.get("/v1/attendees", params={"q": query}, headers=desk.auth("desk"))).json()
        assert [a["name"] for a in at_desk["attendees"]] == ["Renée Lefèvre"]


async def test_the_intakes_address_says_where_to_go(desk: Desk) -> None:
    page = await desk.client.get("/")
    assert page.status == 200 and page.content_type == "text/html"
    text = await page.text()
    assert all(f'href="{path}"' in text for path in ("/kiosk", "/desk", "/openapi.json"))
    as_json = await desk.client.get("/", headers={"Accept": "application/json"})
    assert as_json.status == 200 and as_json.content_type == "application/json"
    assert (await as_json.json())["links"] == {"kiosk": "/kiosk", "desk": "/desk", "openapi": "/openapi.json"}
