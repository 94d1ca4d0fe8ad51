"""What a kiosk may print when names are typed on it (no list, or ``kiosk.allow_unlisted``): a name and company and
the venue's walk-in type, never a badge type of its choosing; over real HTTP on a real redis-server."""

from __future__ import annotations

import json
from pathlib import Path

from cli.redis_server import RedisServer
from protocol.keys import Keys
from tests.support.attendee_files import listed
from tests.support.intake import start_desk, write_intake_config
from tests.support.processes import run_cli


async def test_a_kiosk_with_allow_unlisted_cannot_choose_the_badge_type(
    tmp_path: Path, redis_server: RedisServer, venue: str
) -> None:
    config = "kiosk: {allow_unlisted: true, walk_in_type: Visitor}\n"
    desk, redis = await start_desk(tmp_path, venue, redis_server.url, config)
    try:
        await listed(redis, venue)  # Renée is listed as a Speaker
        kiosk = desk.auth("kiosk")
        asks = [
            ("fields.ticket_type", {"fields": {"ticket_type": "Speaker"}}),
            ("layout", {"layout": "speaker"}),
            ("role", {"role": "STAFF"}),
            ("fields.access", {"fields": {"access": "all-areas"}}),
        ]
        for n, (field, extra) in enumerate(asks):
            job = {"attendee_id": f"typed-{n}", "name": "Typed Name", **extra}
            refused = await desk.client.post("/v1/jobs", json=job, headers=kiosk)
            assert refused.status == 403, (field, await refused.text())
            problem = await refused.json()
            assert problem["field"] == field and "walk_in_type" in problem["detail"]
        assert await redis.llen(Keys(venue).pool) == 0
        # A name typed there prints as the walk-in type (also when it names that type itself).
        for n, extra in enumerate([{}, {"fields": {"ticket_type": "Visitor"}}]):
            made = await desk.client.post(
                "/v1/jobs", json={"attendee_id": f"walk-{n}", "name": "Typed Name", **extra}, headers=kiosk
            )
            assert made.status == 201, await made.text()
            payload = json.loads(await redis.hget(Keys(venue).job((await made.json())["job_id"]), "payload"))
            assert payload["fields"] == {"ticket_type": "Visitor"} and payload["role"] == ""
        # A listed code prints what the list says, whatever the kiosk sent with it: refused when it asks for more.
        speaker = {"attendee_id": "secret-renee", "name": "Renée", "fields": {"ticket_type": "Speaker"}}
        assert (await desk.client.post("/v1/jobs", json=speaker, headers=kiosk)).status == 403
        plain = await desk.client.post("/v1/jobs", json={"attendee_id": "secret-renee", "name": "X"}, headers=kiosk)
        assert plain.status == 201
        payload = json.loads(await redis.hget(Keys(venue).job("ORD1-1"), "payload"))
        assert payload["fields"] == {"ticket_type": "Speaker"} and payload["name"] == "Renée Lefèvre"
        # A desk still sets what it needs.
        desk_job = {"attendee_id": "vip-1", "name": "Guest", "role": "STAFF", "fields": {"ticket_type": "Speaker"}}
        assert (await desk.client.post("/v1/jobs", json=desk_job, headers=desk.auth("desk"))).status == 201
    finally:
        await desk.client.close()
        await redis.aclose()


def test_a_walk_in_type_a_badge_cannot_carry_is_refused_at_start(tmp_path: Path, redis_server: RedisServer) -> None:
    path = write_intake_config(tmp_path, "v", redis_server.url, 'kiosk: {walk_in_type: "Visitor\\u202e"}\n')
    result = run_cli("intake", "-c", str(path))
    assert result.returncode == 78 and "Traceback" not in result.stderr
    assert "kiosk.walk_in_type: contains a bidi override or isolate (U+202E)" in result.stderr
