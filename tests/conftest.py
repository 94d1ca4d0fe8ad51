"""Shared fixtures: a real redis-server per test session (never a mock), a fresh venue per test."""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from cli.redis_server import RedisServer
from tests.support.intake import Desk, start_desk
from tests.support.netns import inside_netns, run_in_netns

#: Fixtures shared by test modules in different folders (a conftest reaches only its own folder).
pytest_plugins = ["tests.support.ipp_fixtures"]

_venues = itertools.count()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "netns(addresses=[...]): the test runs in a network namespace of its own, a venue network on 10.99.0.0/24"
        " (with these addresses of it on lo)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """A ``netns`` test is run again by a pytest inside a fresh network namespace (tests/support/netns.py), where its
    default paths (the machine's own /24, mDNS on every interface) see only what the test made; its outcome is
    this test's outcome."""
    marker = pyfuncitem.get_closest_marker("netns")
    if marker is None or inside_netns():
        return None
    node = pyfuncitem.nodeid
    inner = run_in_netns(
        f'exec python -m pytest -q -p no:cacheprovider "{node}"',
        addresses=marker.kwargs.get("addresses", ()),
        timeout=110,
    )
    if inner.returncode != 0:
        pytest.fail(f"{node} failed in its network namespace:\n{inner.stdout}{inner.stderr}", pytrace=False)
    return True


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis"), appendonly=True)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def venue() -> str:
    return f"t{os.getpid()}-{next(_venues)}"


@pytest.fixture
async def redis(redis_server: RedisServer) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_server.url, decode_responses=False)
    yield client
    await client.aclose()


@pytest.fixture
async def desk(tmp_path: Path, redis_server: RedisServer, venue: str) -> AsyncIterator[Desk]:
    d, redis = await start_desk(tmp_path, venue, redis_server.url)
    try:
        yield d
    finally:
        await d.client.close()
        await redis.aclose()
