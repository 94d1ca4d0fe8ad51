"""The intake API over real HTTP against a real redis-server: each route, and every error status case by case."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families
from redis.asyncio import Redis

from cli.redis_server import RedisServer
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import print_it
from tests.support.intake import Desk, start_desk
from tests.support.metrics import samples

PROBLEM = "application/problem+json"


async def test_create_then_duplicate_is_idempotent(desk: Desk, redis: Redis, venue: str) -> None:
    job = {"attendee_id": "A-1", "name": "Zoë Ağaoğlu", "company": "ACME"}
    first = await desk.client.post("/v1/jobs", json=job, headers=desk.auth("desk"))
    assert first.status == 201
    body = await first.json()
    assert body["job_id"] == "A-1" and body["state"] == "queued" and body["duplicate"] is False
    again = await desk.client.post("/v1/jobs", json={**job, "name": "Someone Else"}, headers=desk.auth("desk"))
    assert again.status == 200 and (await again.json())["duplicate"] is True
    payload = json.loads(await redis.hget(Keys(venue).job("A-1"), "payload"))
    assert payload["name"] == "Zoë Ağaoğlu"
    assert await redis.llen(Keys(venue).pool) == 1


async def test_batch_creates_each_and_reports_duplicates(desk: Desk, redis: Redis, venue: str) -> None:
    jobs = [{"attendee_id": f"b{i}", "name": f"Guest {i}"} for i in range(3)]
    first = await desk.client.post("/v1/jobs", json={"jobs": jobs}, headers=desk.auth("staff"))
    assert first.status == 201 and [j["duplicate"] for j in (await first.json())["jobs"]] == [False] * 3
    again = await desk.client.post("/v1/jobs", json={"jobs": jobs[:1]}, headers=desk.auth("staff"))
    assert again.status == 200 and (await again.json())["jobs"][0]["duplicate"] is True
    assert await redis.llen(Keys(venue).pool) == 3


async def test_422_names_the_field_and_enqueues_nothing_of_the_batch(desk: Desk, redis: Redis, venue: str) -> None:
    bad = await desk.client.post("/v1/jobs", json={"name": "No Id"}, headers=desk.auth("desk"))
    assert bad.status == 422 and bad.content_type == PROBLEM
    problem = await bad.json()
    assert problem["status"] == 422 and problem["errors"][0]["field"] == "attendee_id"
    jobs = [{"attendee_id": "ok", "name": "Fine"}, {"attendee_id": "x", "name": "^XA^FDinjected^FS^XZ\x1b"}]
    batch = await desk.client.post("/v1/jobs", json={"jobs": jobs}, headers=desk.auth("desk"))
    assert batch.status == 422
    assert [e["field"] for e in (await batch.json())["errors"]] == ["jobs[1].name"]
    assert await redis.llen(Keys(venue).pool) == 0
    not_json = await desk.client.post("/v1/jobs", data=b"{nope", headers=desk.auth("desk"))
    assert not_json.status == 422 and "not valid JSON" in (await not_json.json())["detail"]


async def test_401_without_a_token_or_with_a_bad_one(desk: Desk) -> None:
    none = await desk.client.get("/v1/printers")
    assert none.status == 401 and none.content_type == PROBLEM and none.headers["WWW-Authenticate"].startswith("Bearer")
    bad = await desk.client.get("/v1/printers", headers={"Authorization": "Bearer bdg_wrong"})
    assert bad.status == 401
    assert "bdg_wrong" not in await bad.text()


async def test_revoke_takes_effect_without_a_restart(desk: Desk) -> None:
    assert (await desk.client.get("/v1/printers", headers=desk.auth("viewer"))).status == 200
    assert desk.tokens.revoke("viewer-1")
    assert (await desk.client.get("/v1/printers", headers=desk.auth("viewer"))).status == 401


async def test_403_for_the_wrong_role(desk: Desk, redis: Redis, venue: str) -> None:
    job = {"attendee_id": "r1", "name": "Rita"}
    viewer = await desk.client.post("/v1/jobs", json=job, headers=desk.auth("viewer"))
    assert viewer.status == 403 and (await viewer.json())["role"] == "viewer"
    made = await desk.client.post("/v1/jobs", json=job, headers=desk.auth("kiosk"))
    assert made.status == 201
    path = f"/v1/jobs/{(await made.json())['job_id']}"  # a kiosk's job has an id of its own: kiosk:<token>:r1
    for role in ("kiosk", "desk", "viewer"):
        assert (await desk.client.delete(path, headers=desk.auth(role))).status == 403
        resp = await desk.client.post(f"{path}/reprint", json={"reason": "x"}, headers=desk.auth(role))
        # A desk reprints a lost badge (not this one: it is not printed yet); kiosks and viewers never.
        assert resp.status == (409 if role == "desk" else 403)
    # A kiosk reads the jobs it created, not another kiosk's.
    assert (await desk.client.get(path, headers=desk.auth("kiosk"))).status == 200
    assert (await desk.client.get(path, headers=desk.auth("kiosk-2"))).status == 403
    assert (await desk.client.get(path, headers=desk.auth("viewer"))).status == 200


async def test_404_for_an_unknown_job_or_route(desk: Desk) -> None:
    for method, path in (("GET", "/v1/jobs/nope"), ("DELETE", "/v1/jobs/nope"), ("GET", "/v1/jobs/nope/events")):
        resp = await desk.client.request(method, path, headers=desk.auth("staff"))
        assert resp.status == 404 and resp.content_type == PROBLEM, (method, path)
    resp = await desk.client.post("/v1/jobs/nope/reprint", json={"reason": "x"}, headers=desk.auth("staff"))
    assert resp.status == 404
    assert (await desk.client.get("/v2/nothing")).status == 404


async def test_413_for_a_large_body_or_batch(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    desk, redis = await start_desk(tmp_path, venue, redis_server.url, "limits: {max_body_bytes: 2048, max_batch: 2}\n")
    try:
        big = await desk.client.post("/v1/jobs", data=b"x" * 4096, headers=desk.auth("desk"))
        assert big.status == 413 and big.content_type == PROBLEM
        jobs = [{"attendee_id": f"b{i}", "name": "G"} for i in range(3)]
        many = await desk.client.post("/v1/jobs", json={"jobs": jobs}, headers=desk.auth("desk"))
        assert many.status == 413 and "at most 2" in (await many.json())["detail"]
    finally:
        await desk.client.close()
        await redis.aclose()


async def test_429_with_retry_after_per_token(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    desk, redis = await start_desk(tmp_path, venue, redis_server.url, "limits: {rate: 0.5, burst: 3}\n")
    try:
        statuses = [(await desk.client.get("/v1/printers", headers=desk.auth("viewer"))).status for _ in range(3)]
        assert statuses == [200, 200, 200]
        over = await desk.client.get("/v1/printers", headers=desk.auth("viewer"))
        assert over.status == 429 and int(over.headers["Retry-After"]) >= 1 and over.content_type == PROBLEM
        # Another token has its own bucket.
        assert (await desk.client.get("/v1/printers", headers=desk.auth("desk"))).status == 200
    finally:
        await desk.client.close()
        await redis.aclose()


async def test_reprint_and_cancel_through_the_api(desk: Desk, redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    for aid in ("p1", "q1"):
        await desk.client.post("/v1/jobs", json={"attendee_id": aid, "name": "N"}, headers=desk.auth("desk"))
    await print_it(store, "desk-1", "p1")
    no_reason = await desk.client.post("/v1/jobs/p1/reprint", json={}, headers=desk.auth("staff"))
    assert no_reason.status == 422 and (await no_reason.json())["errors"][0]["field"] == "reason"
    ok = await desk.client.post("/v1/jobs/p1/reprint", json={"reason": "coffee"}, headers=desk.auth("staff"))
    assert ok.status == 200 and (await ok.json())["reprints"] == 1 and (await ok.json())["state"] == "queued"
    again = await desk.client.post("/v1/jobs/p1/reprint", json={"reason": "coffee"}, headers=desk.auth("staff"))
    assert again.status == 409 and (await again.json())["state"] == "queued"
    assert (await desk.client.delete("/v1/jobs/q1", headers=desk.auth("staff"))).status == 200
    gone = await desk.client.delete("/v1/jobs/q1", headers=desk.auth("staff"))
    assert gone.status == 409 and (await gone.json())["state"] == "cancelled"
    await store.take("desk-1")
    taken = await desk.client.delete("/v1/jobs/p1", headers=desk.auth("staff"))
    assert taken.status == 409 and (await taken.json())["state"] == "printing"
    stream = await redis.xrange(Keys(venue).events)
    reprint = [f for _, f in stream if f[b"event"] == b"reprint"]
    assert reprint[0][b"by"] == b"token:staff-1" and reprint[0][b"reason"] == b"coffee"
    metrics = await (await desk.client.get("/metrics")).text()
    m = samples(metrics)  # prometheus_client's parser: each TYPE line matches its samples, or it refuses the text
    assert (
        m[("badge_venue_jobs", (("what", "reprint"),))] == 1 and m[("badge_venue_jobs", (("what", "cancelled"),))] == 1
    )
    # The staff words and counts (protocol/vocabulary.py): an intended reprint is no duplicate.
    assert m[("badge_venue_staff", (("what", "reprints"),))] == 1
    assert m[("badge_venue_dlq_length", ())] == 0 and m[("badge_redis_master_changes_total", ())] == 0
    assert m[("badge_venue_staff", (("what", "cancelled"),))] == 1
    assert m[("badge_venue_staff", (("what", "may_exist_twice"),))] == 0 and "reprints = reprints (intended)" in metrics
    # A counter whose TYPE line and _total samples agree: a scraper reads it as one counter family.
    types = {f.name: f.type for f in text_string_to_metric_families(metrics)}
    assert types["badge_intake_requests"] == "counter" and types["badge_venue_staff"] == "gauge"
    assert m[("badge_intake_requests_total", (("route", "/v1/jobs/{id}/reprint"), ("status", "200")))] == 1
    for secret in desk.secrets.values():
        assert secret not in metrics


async def test_wait_long_polls_until_the_state_changes(desk: Desk, redis: Redis, venue: str) -> None:
    await desk.client.post("/v1/jobs", json={"attendee_id": "w1", "name": "W"}, headers=desk.auth("desk"))
    store = Store(redis, venue)
    await store.beat("desk-1", {"state": "ready", "location": "Hall A, desk 1"}, 60_000, first=True)

    async def later() -> None:
        await asyncio.sleep(0.3)
        await store.take("desk-1")
        await store.begin("desk-1", "Hall A, desk 1", "w1")

    task = asyncio.create_task(later())
    resp = await desk.client.get("/v1/jobs/w1?wait=10", headers=desk.auth("desk"))
    await task
    body = await resp.json()
    assert body["state"] == "printing" and body["printer"] == "desk-1" and body["location"] == "Hall A, desk 1"
    for bad in ("31", "-1", "soon"):
        resp = await desk.client.get(f"/v1/jobs/w1?wait={bad}", headers=desk.auth("desk"))
        assert resp.status == 422 and (await resp.json())["errors"][0]["field"] == "wait"


async def test_events_stream_sends_the_jobs_transitions(desk: Desk, redis: Redis, venue: str) -> None:
    await desk.client.post("/v1/jobs", json={"attendee_id": "e1", "name": "E"}, headers=desk.auth("desk"))
    await desk.client.post("/v1/jobs", json={"attendee_id": "other", "name": "O"}, headers=desk.auth("desk"))
    store = Store(redis, venue)
    resp = await desk.client.get("/v1/jobs/e1/events", headers=desk.auth("desk"))
    assert resp.status == 200 and resp.content_type == "text/event-stream"
    await store.cancel("e1", "staff")
    seen: list[str] = []
    async with asyncio.timeout(10):
        while "cancelled" not in seen:
            line = (await resp.content.readline()).decode()
            if line.startswith("event: "):
                seen.append(line.removeprefix("event: ").strip())
    assert seen == ["enqueued", "cancelled"]
    resp.close()


async def test_printers_lists_name_location_state(desk: Desk, redis: Redis, venue: str) -> None:
    await Store(redis, venue).beat("desk-1", {"state": "ready", "location": "Hall A, desk 1"}, 60_000, first=True)
    body = await (await desk.client.get("/v1/printers", headers=desk.auth("viewer"))).json()
    assert body["printers"] == [
        {"name": "desk-1", "location": "Hall A, desk 1", "state": "ready", "depth": 0, "inflight": ""}
    ]


async def test_503_with_retry_after_when_redis_is_unreachable(tmp_path: Path, venue: str) -> None:
    from cli.redis_server import free_port

    desk, redis = await start_desk(tmp_path, venue, f"redis://127.0.0.1:{free_port()}/0")
    try:
        resp = await desk.client.post("/v1/jobs", json={"attendee_id": "a", "name": "A"}, headers=desk.auth("desk"))
        assert resp.status == 503 and resp.content_type == PROBLEM and resp.headers["Retry-After"] == "1"
        assert "Traceback" not in await resp.text()
    finally:
        await desk.client.close()
        await redis.aclose()


async def test_a_job_carries_the_events_fields_and_layout_checked_like_name(
    desk: Desk, redis: Redis, venue: str
) -> None:
    job = {
        "attendee_id": "F-1",
        "name": "Renée Laurent",
        "fields": {"ticket_type": "Speaker", "pronouns": "she/her", "first_name": "Renée"},
        "layout": "speaker",
    }
    made = await desk.client.post("/v1/jobs", json=job, headers=desk.auth("desk"))
    assert made.status == 201, await made.text()
    payload = json.loads(await redis.hget(Keys(venue).job("F-1"), "payload"))
    assert payload["fields"] == job["fields"] and payload["layout"] == "speaker"
    bad = {"attendee_id": "F-2", "name": "Ana", "fields": {"Ticket Type": "VIP", "pronouns": "x\x1by", "name": "A"}}
    refused = await desk.client.post("/v1/jobs", json=bad, headers=desk.auth("desk"))
    assert refused.status == 422
    detail = (await refused.json())["detail"]
    assert "'Ticket Type' is not a field name" in detail and "'name' is a job's own field" in detail
    assert "control character" in detail
    assert not await redis.exists(Keys(venue).job("F-2"))
