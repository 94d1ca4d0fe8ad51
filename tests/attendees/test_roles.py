"""Attendee data per role over real HTTP on a real redis-server: a viewer sees none, a desk sees codes masked and
acts by handle, staff see all, a kiosk follows its badge by an id that carries no order code."""

from __future__ import annotations

import json

from redis.asyncio import Redis

from attendees.store import AttendeeStore
from protocol.keys import Keys
from tests.support.attendee_files import listed
from tests.support.intake import Desk


async def test_a_viewer_is_refused_every_attendee_route(desk: Desk, redis: Redis, venue: str) -> None:
    await listed(redis, venue)
    viewer = desk.auth("viewer")
    client = desk.client
    answers = [
        await client.get("/v1/attendees", params={"q": "renee"}, headers=viewer),
        await client.post("/v1/attendees", json={"name": "Walk In"}, headers=viewer),
        await client.get("/v1/attendees/secret-renee", headers=viewer),
        await client.patch("/v1/attendees/secret-renee", json={"name": "X"}, headers=viewer),
        await client.post("/v1/attendees/secret-renee/badge", headers=viewer),
        await client.get("/desk/settings.json", headers=viewer),
    ]
    for answer in answers:
        assert answer.status == 403, (answer.url, answer.status)
        assert (await answer.json())["role"] == "viewer"
        assert "secret-renee" not in await answer.text() and "renee@" not in await answer.text()
    assert await redis.llen(Keys(venue).pool) == 0
    renee = await AttendeeStore(redis, venue).get("secret-renee")
    assert renee is not None and renee.name == "Renée Lefèvre" and not renee.edits


async def test_a_desk_sees_the_code_masked_and_acts_by_handle(desk: Desk, redis: Redis, venue: str) -> None:
    await listed(redis, venue)
    found = await desk.client.get("/v1/attendees", params={"q": "renee"}, headers=desk.auth("desk"))
    assert found.status == 200
    (renee,) = (await found.json())["attendees"]
    text = json.dumps(renee)
    assert "secret-renee" not in text and "renee@example.org" not in text
    assert renee["code"] == "…" and renee["email"] == "r…@example.org" and renee["order_code"] == "ORD1"
    handle = renee["handle"]
    assert "secret" not in handle
    # The handle names the attendee on every route the desk uses: look up, print (and a second print is the same
    # badge).
    looked = await desk.client.get(f"/v1/attendees/{handle}", headers=desk.auth("desk"))
    assert looked.status == 200 and (await looked.json())["name"] == "Renée Lefèvre"
    printed = await desk.client.post(f"/v1/attendees/{handle}/badge", headers=desk.auth("desk"))
    assert printed.status == 201, await printed.text()
    body = await printed.json()
    assert body["badge"]["state"] == "queued" and body["code"] == "…" and body["handle"] == handle
    again = await desk.client.post(f"/v1/attendees/{handle}/badge", headers=desk.auth("desk"))
    assert again.status == 200 and (await again.json())["duplicate"] is True
    # Stable: the next search names the attendee by the same handle.
    again_found = await desk.client.get("/v1/attendees", params={"q": "renee"}, headers=desk.auth("desk"))
    assert (await again_found.json())["attendees"][0]["handle"] == handle
    # Staff see the code, and correct and cancel by the handle too.
    staff = await desk.client.get("/v1/attendees", params={"q": "renee"}, headers=desk.auth("staff"))
    (full,) = (await staff.json())["attendees"]
    assert full["code"] == "secret-renee" and full["email"] == "renee@example.org" and full["handle"] == handle
    patched = await desk.client.patch(f"/v1/attendees/{handle}", json={"name": "Renée L."}, headers=desk.auth("staff"))
    assert patched.status == 200 and (await patched.json())["name"] == "Renée L."
    # A handle whose MAC is not the venue's names no one (and is no ticket code either).
    ref, _, mac = handle.partition(".")
    forged = f"{ref}.{'0' * len(mac) if mac != '0' * len(mac) else '1' * len(mac)}"
    assert (await desk.client.get(f"/v1/attendees/{forged}", headers=desk.auth("desk"))).status == 404
    other = f"{'2' if ref != '2' else '3'}.{mac}"
    assert (await desk.client.get(f"/v1/attendees/{other}", headers=desk.auth("desk"))).status == 404


async def test_a_kiosk_follows_its_badge_by_an_id_without_the_order_code(desk: Desk, redis: Redis, venue: str) -> None:
    await listed(redis, venue)  # Renée's badge job id is ORD1-1: her order code and position, as pretix's are
    made = await desk.client.post("/v1/attendees/secret-renee/badge", headers=desk.auth("kiosk"))
    assert made.status == 201
    body = await made.json()
    assert "job_id" not in body and "ORD1" not in await made.text() and "secret-renee" not in await made.text()
    badge_id = body["badge_id"]
    followed = await desk.client.get(f"/v1/attendees/{badge_id}", headers=desk.auth("kiosk"))
    assert followed.status == 200
    seen = await followed.json()
    assert seen["badge"]["state"] == "queued" and seen["badge_id"] == badge_id and "ORD1" not in json.dumps(seen)
    # A second scan (another kiosk) names the same badge by the same id.
    second = await desk.client.post("/v1/attendees/secret-renee/badge", headers=desk.auth("kiosk-2"))
    assert (await second.json())["badge_id"] == badge_id
