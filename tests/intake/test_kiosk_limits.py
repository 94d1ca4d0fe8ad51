"""What one kiosk token may do to the venue: its outstanding jobs, batches, printers, and the job ids it may take.

Against a real redis-server over real HTTP (tests/intake/conftest.py).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from intake.outstanding import PRUNE_EVERY
from protocol.keys import Keys
from protocol.store import Store
from tests.support.agents import print_it
from tests.support.intake import Desk, start_desk
from tests.support.processes import run_cli

PROBLEM = "application/problem+json"


async def test_a_kiosk_may_have_five_jobs_outstanding_and_room_comes_back_as_they_print(
    desk: Desk, redis: Redis, venue: str
) -> None:
    kiosk = desk.auth("kiosk")
    for i in range(5):
        made = await desk.client.post("/v1/jobs", json={"attendee_id": f"k{i}", "name": "K"}, headers=kiosk)
        assert made.status == 201
    over = await desk.client.post("/v1/jobs", json={"attendee_id": "k5", "name": "K"}, headers=kiosk)
    assert over.status == 429 and over.content_type == PROBLEM
    problem = await over.json()
    assert problem["outstanding"] == 5 and problem["max_outstanding"] == 5 and "not yet printed" in problem["detail"]
    assert await redis.llen(Keys(venue).pool) == 5
    # Another kiosk and a desk are not held by this one's cap.
    assert (
        await desk.client.post("/v1/jobs", json={"attendee_id": "o", "name": "O"}, headers=desk.auth("kiosk-2"))
    ).status == 201
    assert (
        await desk.client.post("/v1/jobs", json={"attendee_id": "d", "name": "D"}, headers=desk.auth("desk"))
    ).status == 201
    await print_it(Store(redis, venue), "p1", "kiosk:kiosk-1:k0")  # the oldest in the pool
    await asyncio.sleep(PRUNE_EVERY)  # a full token's set is looked through at most this often
    again = await desk.client.post("/v1/jobs", json={"attendee_id": "k5", "name": "K"}, headers=kiosk)
    assert again.status == 201


async def test_concurrent_creations_cannot_pass_the_cap_together(desk: Desk, redis: Redis, venue: str) -> None:
    posts = [
        desk.client.post("/v1/jobs", json={"attendee_id": f"r{i}", "name": "R"}, headers=desk.auth("kiosk"))
        for i in range(20)
    ]
    statuses = [r.status for r in await asyncio.gather(*posts)]
    assert set(statuses) <= {201, 429} and 1 <= statuses.count(201) <= 5  # never past the cap
    # One after another, the rest of the room is taken (a racing request may be refused near the cap, never let in).
    more = 0
    while (
        await desk.client.post("/v1/jobs", json={"attendee_id": f"s{more}", "name": "S"}, headers=desk.auth("kiosk"))
    ).status == 201:
        more += 1
    assert statuses.count(201) + more == 5
    assert await redis.scard(Keys(venue).owned("kiosk-1")) == 5


async def test_the_cap_is_set_per_token_and_a_desk_gets_200(
    tmp_path: Path, redis: Redis, venue: str, desk: Desk
) -> None:
    secret = desk.tokens.add("desk-small", "desk", max_outstanding=2)
    small = {"Authorization": f"Bearer {secret}"}
    jobs = [{"attendee_id": f"s{i}", "name": "S"} for i in range(3)]
    batch = await desk.client.post("/v1/jobs", json={"jobs": jobs}, headers=small)
    assert batch.status == 429 and (await batch.json())["max_outstanding"] == 2
    assert await redis.llen(Keys(venue).pool) == 0  # all or nothing
    assert (await desk.client.post("/v1/jobs", json={"jobs": jobs[:2]}, headers=small)).status == 201
    listed = {t.name: t for t in desk.tokens.list()}
    assert listed["desk-1"].max_outstanding == 200 and listed["kiosk-1"].max_outstanding == 5
    many = [{"attendee_id": f"m{i}", "name": "M"} for i in range(201)]
    assert (await desk.client.post("/v1/jobs", json={"jobs": many}, headers=desk.auth("desk"))).status == 429
    assert (await desk.client.post("/v1/jobs", json={"jobs": many[:200]}, headers=desk.auth("desk"))).status == 201


async def test_a_kiosk_sends_no_batches_and_pins_only_to_its_printers(desk: Desk, redis: Redis, venue: str) -> None:
    batch = await desk.client.post(
        "/v1/jobs", json={"jobs": [{"attendee_id": "b", "name": "B"}]}, headers=desk.auth("kiosk")
    )
    assert batch.status == 403 and "batch" in (await batch.json())["detail"]
    hall_a = {"Authorization": f"Bearer {desk.tokens.add('kiosk-hall-a', 'kiosk', printers=('hall-a-1', 'hall-a-2'))}"}
    elsewhere = await desk.client.post(
        "/v1/jobs", json={"attendee_id": "x", "name": "X", "printer": "hall-b-1"}, headers=hall_a
    )
    assert elsewhere.status == 403
    problem = await elsewhere.json()
    assert problem["errors"][0]["field"] == "printer" and "hall-a-1, hall-a-2" in problem["detail"]
    here = await desk.client.post(
        "/v1/jobs", json={"attendee_id": "x", "name": "X", "printer": "hall-a-2"}, headers=hall_a
    )
    assert here.status == 201
    assert (await desk.client.post("/v1/jobs", json={"attendee_id": "y", "name": "Y"}, headers=hall_a)).status == 201
    assert await redis.llen(Keys(venue).queue("hall-b-1")) == 0


async def test_staff_cancel_every_queued_job_of_one_token_by_route_and_by_cli(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str, desk: Desk
) -> None:
    ids = []
    for i in range(4):
        made = await desk.client.post(
            "/v1/jobs", json={"attendee_id": f"c{i}", "name": "C"}, headers=desk.auth("kiosk")
        )
        ids.append((await made.json())["job_id"])
    await desk.client.post("/v1/jobs", json={"attendee_id": "keep", "name": "K"}, headers=desk.auth("desk"))
    store = Store(redis, venue)
    assert await store.take("p1") == ("pool", ids[0])  # a printer has the first: it is left alone
    refused = await desk.client.delete("/v1/tokens/kiosk-1/jobs", headers=desk.auth("desk"))
    assert refused.status == 403
    resp = await desk.client.delete("/v1/tokens/kiosk-1/jobs", headers=desk.auth("staff"))
    assert resp.status == 200
    body = await resp.json()
    assert sorted(body["cancelled"]) == sorted(ids[1:]) and body["left"] == [{"job_id": ids[0], "state": "taken"}]
    for job_id in ids[1:]:
        assert await redis.hget(Keys(venue).job(job_id), "state") == b"cancelled"
    assert await redis.hget(Keys(venue).job("keep"), "state") == b"queued"
    # The CLI does the same for another token.
    for i in range(2):
        await desk.client.post("/v1/jobs", json={"attendee_id": f"z{i}", "name": "Z"}, headers=desk.auth("kiosk-2"))
    cli = run_cli("cancel", "--token", "kiosk-2", "--redis", redis_server.url, "--venue", venue)
    assert cli.returncode == 0, cli.stderr
    assert "2 queued job(s) cancelled" in cli.stdout
    assert await redis.hget(Keys(venue).job("kiosk:kiosk-2:z0"), "state") == b"cancelled"
    both = run_cli("cancel", "x", "--token", "kiosk-2", "--redis", redis_server.url, "--venue", venue)
    assert both.returncode == 2 and "not both" in both.stderr


async def test_a_kiosk_cannot_read_or_squat_another_attendees_job(desk: Desk, redis: Redis, venue: str) -> None:
    store = Store(redis, venue)
    await store.beat("p1", {"state": "ready", "location": "Hall A, desk 1"}, 60_000, first=True)
    real = await desk.client.post(
        "/v1/jobs", json={"attendee_id": "A-1", "name": "Ada Real"}, headers=desk.auth("desk")
    )
    assert real.status == 201
    await print_it(store, "p1", "A-1")
    # Posting the desk's job id from a kiosk tells nothing of that job: the kiosk gets a job of its own.
    probe = await desk.client.post(
        "/v1/jobs", json={"attendee_id": "A-1", "name": "Mallory"}, headers=desk.auth("kiosk")
    )
    body = await probe.json()
    assert probe.status == 201 and body["job_id"] == "kiosk:kiosk-1:A-1"
    assert body["state"] == "queued" and body["location"] == "" and body["printer"] == ""
    assert "Hall A" not in await probe.text()
    # A kiosk that goes first cannot take an id of the attendee list: the desk's job is new, with its own name.
    squat = await desk.client.post(
        "/v1/jobs", json={"attendee_id": "A-2", "name": "Mallory"}, headers=desk.auth("kiosk")
    )
    assert squat.status == 201
    later = await desk.client.post(
        "/v1/jobs", json={"attendee_id": "A-2", "name": "Bea Real"}, headers=desk.auth("desk")
    )
    assert later.status == 201 and (await later.json())["duplicate"] is False
    assert json.loads(await redis.hget(Keys(venue).job("A-2"), "payload"))["name"] == "Bea Real"
    # Desks and staff may not use the kiosks' ids.
    forged = await desk.client.post(
        "/v1/jobs", json={"attendee_id": "z", "job_id": "kiosk:kiosk-1:z", "name": "Z"}, headers=desk.auth("staff")
    )
    assert forged.status == 422 and (await forged.json())["errors"][0]["field"] == "job_id"
    # A job under a kiosk's id that the kiosk did not create (written by hand): refused without any detail.
    await store.enqueue("kiosk:kiosk-1:planted", "{}", "p1")
    planted = await desk.client.post(
        "/v1/jobs", json={"attendee_id": "planted", "name": "P"}, headers=desk.auth("kiosk")
    )
    assert planted.status == 409
    problem = await planted.json()
    assert "state" not in problem and "printer" not in problem and "p1" not in problem["detail"]
    # Its own duplicate, it may read.
    mine = await desk.client.post(
        "/v1/jobs", json={"attendee_id": "A-2", "name": "Mallory"}, headers=desk.auth("kiosk")
    )
    assert mine.status == 200 and (await mine.json())["duplicate"] is True


async def test_create_records_its_creator_in_the_enqueue_step(desk: Desk, redis: Redis, venue: str) -> None:
    # One script call: the job, who created it and the token's set of jobs (no HSET after it that a crash could
    # lose, leaving a kiosk job its creator cannot read).
    seen: list[dict[str, Any]] = []
    async with redis.monitor() as monitor:

        async def collect() -> None:
            while True:
                seen.append(await monitor.next_command())

        collector = asyncio.create_task(collect())
        await asyncio.sleep(0.2)
        made = await desk.client.post("/v1/jobs", json={"attendee_id": "c1", "name": "C"}, headers=desk.auth("kiosk"))
        await asyncio.sleep(0.3)
        collector.cancel()
    job_id = (await made.json())["job_id"]
    assert await redis.hget(Keys(venue).job(job_id), "created_by") == b"kiosk-1"
    assert await redis.sismember(Keys(venue).owned("kiosk-1"), job_id)
    writes = [c["command"] for c in seen if c.get("client_type") != "lua" and c["command"].split()[0].upper() == "HSET"]
    assert writes == []
    assert any(c.get("client_type") == "lua" and "created_by" in c["command"] for c in seen)
    # The CLI's enqueue (no creator) still works and records none.
    added = await Store(redis, venue).enqueue("cli-1", "{}", None)
    assert added.added and await redis.hget(Keys(venue).job("cli-1"), "created_by") is None


async def test_limits_are_read_from_the_config(tmp_path: Path, redis_server: RedisServer, venue: str) -> None:
    limits = "limits: {watch_per_token: 3, watch_total: 7, keepalive: 0.5, max_connections: 64}\n"
    desk, redis = await start_desk(tmp_path, venue, redis_server.url, limits)
    try:
        app = desk.client.server.app
        assert app is not None
        from intake.context import INTAKE

        intake = app[INTAKE]
        assert (intake.watches.per_token, intake.watches.total) == (3, 7)
        assert intake.config.limits.max_connections == 64
    finally:
        await desk.client.close()
        await redis.aclose()
