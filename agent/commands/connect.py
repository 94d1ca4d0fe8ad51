"""``check-config --connect``: the config's Redis and printer actually answer, each failure named."""

from __future__ import annotations

import asyncio

from redis.exceptions import AuthenticationError, NoPermissionError, RedisError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from agent.config import AgentConfig
from agent.connection import explain, make_redis
from agent.protocol.keys import Keys
from drivers import DriverError, build_driver


async def check_redis(config: AgentConfig) -> str | None:
    """None when Redis takes this agent's login and lets it read its queue; else what is wrong."""
    redis = make_redis(config.redis, block_timeout=1.0)
    try:
        await asyncio.wait_for(redis.ping(), config.redis.connect_timeout + 2)
        await redis.exists(Keys(config.venue).queue(config.printer.name))
    except AuthenticationError as exc:
        return f"Redis refused the login (wrong user name or password): {exc}"
    except NoPermissionError as exc:
        return f"Redis ACL refused this agent's user its venue keys (see badge-agent acl): {exc}"
    except (RedisConnectionError, RedisTimeoutError, TimeoutError, OSError) as exc:
        text = explain(exc, config.redis.uses_tls)
        if "username-password" in text or "wrongpass" in text.lower():
            return f"Redis refused the login (wrong user name or password): {text}"
        if "connect call failed" in text.lower() or "connection refused" in text.lower():
            text += " — nothing listens there: wrong host or port, or Redis is not running"
        return f"cannot reach Redis: {text}"
    except ResponseError as exc:
        if "NOAUTH" in str(exc) or "WRONGPASS" in str(exc):
            return f"Redis wants a password (redis.password_file): {exc}"
        return f"Redis refused: {exc}"
    except RedisError as exc:
        return f"Redis refused: {exc}"
    finally:
        await redis.aclose()
    return None


async def check_printer(config: AgentConfig) -> str | None:
    """None when the printer answers a status request ready; else what it said (or that it stayed silent)."""
    try:
        driver = build_driver(config.printer.driver, config.printer.name)
        await driver.open()
    except (DriverError, ValueError, OSError) as exc:
        return f"printer unreachable: {exc}"
    try:
        status = await driver.probe()
    except DriverError as exc:
        return f"printer unreachable: {exc}"
    finally:
        await driver.aclose()
    if status.ready:
        return None
    return f"printer {status.describe()}"
