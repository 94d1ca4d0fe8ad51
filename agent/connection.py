"""Connecting to the venue's Redis, and waiting for it to come back."""

from __future__ import annotations

import asyncio
import logging

from redis.asyncio import Redis
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.retry import Retry
from tenacity import AsyncRetrying, retry_if_exception_type, wait_exponential

from agent.config import RedisConfig
from agent.logs import kv

log = logging.getLogger(__name__)


def make_redis(config: RedisConfig, block_timeout: float) -> Redis:
    """A client whose socket timeout outlasts one blocking pop.

    redis-py's own retries are off: re-sending a script whose reply was lost could run it twice (two ``begin``s
    count two attempts). The agent instead recovers from its in-flight list and journal after any error.
    """
    return Redis.from_url(
        config.url,
        username=config.username,
        password=config.password(),
        decode_responses=False,
        socket_connect_timeout=config.connect_timeout,
        socket_timeout=block_timeout + 5,
        retry=Retry(NoBackoff(), 0),
    )


async def wait_for_redis(redis: Redis, max_wait: float, stop: asyncio.Event | None = None) -> bool:
    """Ping until Redis answers, retrying at least every ``max_wait`` seconds. False if ``stop`` was set first."""
    attempt = 0
    async for retry in AsyncRetrying(
        retry=retry_if_exception_type((RedisError, OSError)),
        wait=wait_exponential(multiplier=0.1, max=max_wait),
        reraise=True,
    ):
        with retry:
            if stop is not None and stop.is_set():
                return False
            attempt += 1
            try:
                await redis.ping()
            except (RedisError, OSError) as exc:
                if attempt == 1 or attempt % 10 == 0:
                    log.warning("waiting for redis", extra=kv(attempt=attempt, error=exc))
                raise
    if attempt > 1:
        log.info("redis is back", extra=kv(attempts=attempt))
    return True
