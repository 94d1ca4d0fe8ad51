"""``check-config --connect``: the config's Redis and printer actually answer, each failure named."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from redis.exceptions import AuthenticationError, NoPermissionError, RedisError, ResponseError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from agent.config import AgentConfig
from drivers import DriverError, build_driver
from drivers.base import Driver
from drivers.config import DriverConfig
from protocol.connection import explain, make_redis
from protocol.keys import Keys
from protocol.redis_config import SentinelConfig
from protocol.scripts import LibraryMissing, functions_run, library_loaded, load_library


async def check_redis(config: AgentConfig) -> str | None:
    """None when Redis takes this agent's login and lets it read its queue; else what is wrong."""
    redis = make_redis(config.redis, block_timeout=1.0)
    # Through sentinels, a failure is known only after each was asked and the pool gave up: allow for that.
    within = config.redis.connect_timeout * (3 if config.redis.sentinel else 1) + 2
    try:
        await asyncio.wait_for(redis.ping(), within)
        await redis.exists(Keys(config.venue).queue(config.printer.name))
        if await functions_run(redis) and not await library_loaded(redis):
            await load_library(redis)  # as the agent would, where its user may; else LibraryMissing says who must
    except LibraryMissing as exc:
        return str(exc)
    except AuthenticationError as exc:
        return f"Redis refused the login (wrong user name or password): {exc}"
    except NoPermissionError as exc:
        return f"Redis ACL refused this agent's user its venue keys (see badge-agent acl): {exc}"
    except (RedisConnectionError, RedisTimeoutError, TimeoutError, OSError) as exc:
        tls = config.redis.tls
        text = explain(exc, config.redis.uses_tls, tls is not None and tls.cert_file is not None)
        if config.redis.sentinel is not None and (problem := _sentinel_problem(text, config.redis.sentinel)):
            return problem
        if _wrong_login(text):
            return f"Redis refused the login (wrong user name or password): {text}"
        if _login_wanted(text):
            return LOGIN_WANTED + f" ({text})"
        if _nothing_listens(text):
            text += " — nothing listens there: wrong host or port, or Redis is not running"
        return f"cannot reach Redis: {text}"
    except ResponseError as exc:
        if _login_wanted(str(exc)):
            return LOGIN_WANTED + f" ({exc})"
        return f"Redis refused: {exc}"
    except RedisError as exc:
        return f"Redis refused: {exc}"
    finally:
        await redis.aclose()
    return None


def _sentinel_problem(text: str, sentinel: SentinelConfig) -> str | None:
    """What is wrong when no sentinel named the master: none listens, they want (another) password, or none
    monitors a master of that name. None when the sentinels named it and the error came from the master."""
    if "no sentinel knows a master named" not in text:
        return None
    where = ", ".join(sentinel.nodes)
    low = text.lower()
    if _wrong_login(text):
        return f"the sentinels at {where} refused the login: wrong redis.sentinel.password_file ({text})"
    if "authenticated" in low or "noauth" in low or "authentication required" in low:
        return f"the sentinels at {where} want a password: set redis.sentinel.password_file ({text})"
    if _nothing_listens(text) or "timeout" in low:
        return (
            f"no sentinel answers at {where} (redis.sentinel.nodes) — nothing listens there: wrong host or port, "
            f"or redis-sentinel is not running ({text})"
        )
    return (
        f"the sentinels at {where} monitor no master named {sentinel.master!r}: check redis.sentinel.master against "
        f"'sentinel monitor NAME' in their sentinel.conf ({text})"
    )


#: What a Redis that wants a login answers a client that gave none, in plain words.
LOGIN_WANTED = (
    "Redis wants a login: give the agent's user name and password (redis.username and redis.password_file; "
    "badge-agent acl --printer NAME makes them)"
)


def _login_wanted(text: str) -> bool:
    # "NOAUTH Authentication required", or with RESP3 "HELLO must be called with the client already authenticated".
    low = text.lower()
    return "noauth" in low or "authentication required" in low or "already authenticated" in low


def _wrong_login(text: str) -> bool:
    low = text.lower()
    return "username-password" in low or "wrongpass" in low


def _nothing_listens(text: str) -> bool:
    low = text.lower()
    return "connect call failed" in low or "connection refused" in low


#: What each ``confirmed_by`` means, for the line ``check-config --connect`` and ``setup`` print.
CONFIRMED_BY_WORDS = {
    "device": "the printer's own status",
    "spooler": "the print server's word only: it hands the badge on and cannot read the printer",
}


def confirmed_by_line(confirmed_by: str) -> str:
    return f"prints confirmed by: {confirmed_by} ({CONFIRMED_BY_WORDS.get(confirmed_by, '?')})"


async def check_printer(
    config: AgentConfig, make_driver: Callable[[DriverConfig, str], Driver] = build_driver
) -> tuple[str | None, str]:
    """(None when the printer answers a status request ready, else what it said or that it stayed silent; whose word
    its prints are on, ``device`` or ``spooler``, as the driver learned it from the printer). ``make_driver``: how the
    driver is built (a test's emulated USB device plugs in there)."""
    try:
        driver = make_driver(config.printer.driver, config.printer.name)
        await driver.open()
    except (DriverError, ValueError, OSError) as exc:
        return f"printer unreachable: {exc}", ""
    try:
        status = await driver.probe()
    except DriverError as exc:
        return f"printer unreachable: {exc}", ""
    finally:
        await driver.aclose()
    if status.ready:
        return None, driver.confirmed_by
    return f"printer {status.describe()}", driver.confirmed_by
