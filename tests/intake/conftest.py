"""An intake app on a real redis-server, served over real HTTP by aiohttp's test server, with a token per role."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.redis_server import RedisServer
from tests.support.intake import Desk, start_desk


@pytest.fixture
async def desk(tmp_path: Path, redis_server: RedisServer, venue: str) -> AsyncIterator[Desk]:
    d, redis = await start_desk(tmp_path, venue, redis_server.url)
    try:
        yield d
    finally:
        await d.client.close()
        await redis.aclose()
