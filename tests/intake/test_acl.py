"""The intake's Redis user (``badge-agent acl --intake``): the whole API works under it; claiming a badge does not."""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from redis.asyncio import Redis
from redis.exceptions import NoPermissionError

from cli.redis_server import RedisServer
from intake.app import make_app
from intake.config import load_intake_config
from intake.tokens import TokenFile
from protocol.connection import make_redis
from protocol.store import Store
from tests.support.agents import print_it
from tests.support.intake import write_intake_config
from tests.support.processes import create_user


async def test_the_api_runs_under_the_intake_user(
    tmp_path: Path, redis_server: RedisServer, redis: Redis, venue: str
) -> None:
    pw = tmp_path / "intake.pw"
    user = await create_user(redis, venue, pw, role="intake")
    assert user == f"badge-{venue}-intake"
    url = f"redis://{user}:{pw.read_text().strip()}@127.0.0.1:{redis_server.port}/0"
    config = load_intake_config(write_intake_config(tmp_path, venue, url))
    staff = {"Authorization": f"Bearer {TokenFile(config.tokens).add('s', 'staff')}"}
    as_intake = make_redis(config.redis, block_timeout=20.0)
    async with TestClient(TestServer(make_app(config, as_intake))) as client:
        for aid in ("a1", "a2"):
            resp = await client.post("/v1/jobs", json={"attendee_id": aid, "name": "N", "printer": "p1"}, headers=staff)
            assert resp.status == 201, await resp.text()
        await print_it(Store(redis, venue), "p1", "a1")
        assert (await client.post("/v1/jobs/a1/reprint", json={"reason": "r"}, headers=staff)).status == 200
        assert (await client.delete("/v1/jobs/a2", headers=staff)).status == 200
        assert (await client.get("/v1/jobs/a1?wait=0", headers=staff)).status == 200
        assert (await client.get("/v1/printers", headers=staff)).status == 200
        assert (await client.get("/metrics")).status == 200
        with pytest.raises(NoPermissionError):
            await Store(as_intake, venue).take("p1")
    await as_intake.aclose()
