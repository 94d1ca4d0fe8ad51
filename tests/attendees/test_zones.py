"""Binding a kiosk or desk token to a zone where it is added (``intake token add NAME --zone NAME``): the binding is
stored with the token, checked against the intake config's zones, and routes the token's attendee badges to the
zone's printers, as a zone's ``tokens:`` list does."""

from __future__ import annotations

import json
from pathlib import Path

from redis.asyncio import Redis

from cli.redis_server import RedisServer
from intake.config import load_intake_config
from protocol.keys import Keys
from tests.support.agents import eq, running_agent
from tests.support.attendee_files import listed
from tests.support.intake import start_desk, write_intake_config
from tests.support.processes import run_cli
from tests.support.waiting import wait_until

ZONES = "zones:\n  hall-a: {printers: [hall-a-1]}\n  hall-b: {printers: [hall-b-1], tokens: [kiosk-b]}\n"


def test_token_add_binds_a_zone_the_config_defines(tmp_path: Path, redis_server: RedisServer) -> None:
    config = write_intake_config(tmp_path, "v", redis_server.url, ZONES)
    added = run_cli("intake", "token", "add", "kiosk-a", "--role", "kiosk", "--zone", "hall-a", "-c", str(config))
    assert added.returncode == 0, added.stderr
    stored = json.loads((tmp_path / "tokens.json").read_text())["tokens"]["kiosk-a"]
    assert stored["zone"] == "hall-a"
    listed = run_cli("intake", "token", "list", "-c", str(config))
    assert "kiosk-a" in listed.stdout and "zone hall-a" in listed.stdout

    unknown = run_cli("intake", "token", "add", "kiosk-c", "--role", "kiosk", "--zone", "hall-c", "-c", str(config))
    assert unknown.returncode == 2
    assert "zone: " in unknown.stderr and "'hall-c'" in unknown.stderr and "hall-a, hall-b" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    viewer = run_cli("intake", "token", "add", "board", "--role", "viewer", "--zone", "hall-a", "-c", str(config))
    assert viewer.returncode == 2 and "viewer token prints nothing" in viewer.stderr
    assert set(json.loads((tmp_path / "tokens.json").read_text())["tokens"]) == {"kiosk-a"}  # nothing half-added


def test_a_bound_zone_wins_over_the_configs_lists_and_a_zone_no_longer_defined_is_none(tmp_path: Path) -> None:
    config = load_intake_config(write_intake_config(tmp_path, "v", "redis://127.0.0.1:1", ZONES))
    a, b = config.zones["hall-a"], config.zones["hall-b"]
    assert config.zone_of("kiosk-b") is b  # by the config's list
    assert config.zone_of("kiosk-b", "hall-a") is a  # bound where it was added
    assert config.zone_of("kiosk-x", "hall-gone") is None
    assert config.zone_of("kiosk-x") is None


async def test_a_token_added_with_a_zone_prints_its_attendee_badges_there(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    await listed(redis, venue)
    zoned, client = await start_desk(tmp_path, venue, redis_server.url, ZONES)
    secret = zoned.tokens.add("kiosk-a", "kiosk", zone="hall-a")
    auth = {"Authorization": f"Bearer {secret}"}
    k = Keys(venue)

    async def printed_by(job_id: str) -> bytes:
        async def printed() -> bool:
            return await redis.hget(k.job(job_id), "state") == b"printed"

        await wait_until(printed)
        return bytes(await redis.hget(k.job(job_id), "printer"))

    try:
        async with (
            running_agent(tmp_path, venue, redis_server.url, "hall-a-1", printer__location="Hall A, desk 1"),
            running_agent(tmp_path, venue, redis_server.url, "hall-b-1", printer__location="Hall B, desk 1"),
        ):
            await wait_until(lambda: eq(redis.zcard(k.hb), 2), timeout=10)
            for code, job_id in (("secret-renee", "ORD1-1"), ("secret-dimitris", "ORD2-1")):
                resp = await zoned.client.post(f"/v1/attendees/{code}/badge", headers=auth)
                assert resp.status == 201, await resp.text()
                assert await redis.hget(k.job(job_id), "pinned") == b"hall-a-1"  # pinned when created
                # its zone's printer, each time, though hall-b-1 is as idle
                assert await printed_by(job_id) == b"hall-a-1"
    finally:
        await zoned.client.close()
        await client.aclose()


async def test_a_zone_badge_stays_in_its_zone_when_its_printer_dies_and_the_kiosk_names_where_it_prints(
    tmp_path: Path, redis: Redis, redis_server: RedisServer, venue: str
) -> None:
    """The badge carries its zone: when the printer it was pinned to dies, reclaim hands it to the zone's other
    printer (not the pool, where an idle printer of another hall would take it), and the kiosk's answer follows the
    printer that prints it."""
    from protocol.store import Store

    await listed(redis, venue)
    zones = "zones:\n  hall-a: {printers: [hall-a-1, hall-a-2], tokens: [kiosk-1]}\n"
    zoned, client = await start_desk(tmp_path, venue, redis_server.url, zones)
    store = Store(redis, venue)
    k = Keys(venue)
    for printer, where in (("hall-a-1", "Hall A, desk 1"), ("hall-a-2", "Hall A, desk 2"), ("hall-b-1", "Hall B")):
        await store.beat(printer, {"state": "ready", "location": where}, 60_000, first=True)
    try:
        resp = await zoned.client.post("/v1/attendees/secret-renee/badge", headers=zoned.auth("kiosk"))
        assert resp.status == 201, await resp.text()
        assert await redis.hmget(k.job("ORD1-1"), "pinned", "zone", "zone_printers") == [
            b"hall-a-1", b"hall-a", b"hall-a-1 hall-a-2"
        ]  # fmt: skip
        payload = json.loads(await redis.hget(k.job("ORD1-1"), "payload"))
        assert (payload["zone"], payload["zone_printers"]) == ("hall-a", ["hall-a-1", "hall-a-2"])
        await redis.zadd(k.hb, {"hall-a-1": await store.server_ms() - 10_000})  # its agent went silent
        assert (await store.reclaim("hall-a-1", "hall-b-1", 3000)).to_zone == 1
        assert await store.steal("hall-b-1", 0) is None  # hall-a-2 can print it: Hall B leaves it
        assert await store.take("hall-a-2") == ("q", "ORD1-1")
        begun = await store.begin("hall-a-2", "Hall A, desk 2", "ORD1-1")

        async def badge() -> dict[str, object]:
            resp = await zoned.client.get("/v1/attendees/secret-renee", headers=zoned.auth("kiosk"))
            assert resp.status == 200
            return dict((await resp.json())["badge"])

        assert (await badge())["location"] == "Hall A, desk 2"  # "Printing at Hall A, desk 2"
        await store.confirm("hall-a-2", "Hall A, desk 2", "ORD1-1", begun.epoch)
        assert {key: value for key, value in (await badge()).items() if key in ("state", "location")} == {
            "state": "printed", "location": "Hall A, desk 2"
        }  # fmt: skip
    finally:
        await zoned.client.close()
        await client.aclose()
