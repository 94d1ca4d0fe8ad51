"""The ``badge-agent`` command line. User mistakes end in one clear line and a non-zero exit, never a traceback."""

from __future__ import annotations

import asyncio
import functools
import signal
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import click
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from agent import __version__
from agent.config import AgentConfig, load_config, secret_warnings
from cli.commands import LazyGroup
from core.errors import EXIT_CONFIG, ConfigError, UserError
from core.logs import masked
from core.validate import Invalid
from protocol.redis_config import RedisConfig

T = TypeVar("T")

EXIT_UNAVAILABLE = 69  # sysexits EX_UNAVAILABLE: Redis could not be reached
EXIT_SERVICE = 71  # sysexits EX_OSERR: the systemd service could not be started (or its unit is not installed)
EXIT_PRINTER = 74  # sysexits EX_IOERR: the printer did not answer ready, or a test badge was not confirmed printed


def fail(message: str, code: int = 2) -> None:
    click.echo(f"badge-agent: {masked(message)}", err=True)  # a URL's password never reaches the terminal
    sys.exit(code)


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    try:
        return asyncio.run(coro)
    except ConfigError as exc:
        fail(exc.render(), EXIT_CONFIG)
    except UserError as exc:
        fail(str(exc))
    except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
        fail(f"cannot reach Redis: {exc}", EXIT_UNAVAILABLE)
    except RedisError as exc:
        fail(f"Redis refused: {exc}", EXIT_UNAVAILABLE)
    raise AssertionError("unreachable")


class Target:
    """Which venue's Redis a fleet command talks to: from an agent config, or from --redis/--venue."""

    def __init__(self, redis_config: RedisConfig, venue: str, dead_after: float = 3.0) -> None:
        self.redis_config = redis_config
        self.venue = venue
        self.dead_after = dead_after  # the venue's heartbeat window, known when a config was given

    def client(self) -> Redis:
        from protocol.connection import make_redis

        return make_redis(self.redis_config, block_timeout=5.0, retries=8)  # a failover is a pause, not an error


def fleet_options(func: Callable[..., Any]) -> Callable[..., Any]:
    @click.option("-c", "--config", "config_path", help="An agent's YAML config.")
    @click.option("--redis", "redis_url", envvar="BADGE_REDIS_URL", help="Redis URL (or BADGE_REDIS_URL).")
    @click.option("--venue", envvar="BADGE_VENUE", help="Venue name (or BADGE_VENUE).")
    @functools.wraps(func)
    def wrapper(config_path: str | None, redis_url: str | None, venue: str | None, **kwargs: Any) -> Any:
        if config_path:
            try:
                config = load_config(config_path)
            except ConfigError as exc:
                fail(exc.render(), EXIT_CONFIG)
            target = Target(config.redis, venue or config.venue, config.timing.dead_after)
        elif redis_url and venue:
            try:
                # parse, not the constructor: a URL typed on the command line gets the config file's checks.
                target = Target(RedisConfig.parse({"url": redis_url}), venue)
            except Invalid as exc:
                fail("--redis: " + "; ".join(p.removeprefix("url: ") for p in exc.problems))
        else:
            fail("say which venue: -c CONFIG, or --redis URL --venue NAME (or BADGE_REDIS_URL and BADGE_VENUE)")
        return func(target, **kwargs)

    return wrapper


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="badge-agent")
def main() -> None:
    """Keeps an event's badge printers printing: one agent per printer, one shared Redis."""


@main.command()
@click.option("-c", "--config", "config_path", required=True, help="Agent config.")
def run(config_path: str) -> None:
    """Run the agent for one printer (the daemon; systemd runs this)."""
    from agent.runtime import Agent
    from core.logs import setup_logging
    from drivers import DriverError, build_driver

    try:
        config = load_config(config_path)
    except ConfigError as exc:
        fail(exc.render(), EXIT_CONFIG)
    setup_logging(config.log.level, config.log.format)
    try:
        driver = build_driver(config.printer.driver, config.printer.name)
    except (DriverError, ValueError) as exc:
        fail(f"config error in {config_path}: printer.driver: {exc}", EXIT_CONFIG)

    async def main_task() -> None:
        agent = Agent(config, driver)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, agent.stop)
        await agent.run()

    run_async(main_task())


@main.command("check-config")
@click.argument("path")
@click.option("--connect", is_flag=True, help="Also check that Redis (login, ACL, TLS) and the printer answer.")
def check_config(path: str, connect: bool) -> None:
    """Validate an agent config (with --connect, also reach its Redis and printer)."""
    try:
        config = load_config(path)
    except ConfigError as exc:
        fail(exc.render(), EXIT_CONFIG)
    click.echo(summary(config))
    for warning in secret_warnings(Path(path), config):
        click.echo(f"warning: {warning}", err=True)
    if config.journal is None:
        click.echo("warning: no journal file set: a crash mid-print leaves that badge 'maybe printed'", err=True)
    if connect:
        from cli.commands.connect import check_printer, check_redis, confirmed_by_line

        redis_failure = asyncio.run(check_redis(config))
        printer_failure, confirmed_by = asyncio.run(check_printer(config))
        if confirmed_by:
            click.echo(confirmed_by_line(confirmed_by))
        for failure in (redis_failure, printer_failure):
            if failure:
                click.echo(f"{path}: {failure}", err=True)
        if redis_failure:
            sys.exit(EXIT_UNAVAILABLE)
        if printer_failure:
            sys.exit(EXIT_PRINTER)
        click.echo("redis and printer answer")
    click.echo(f"{path}: OK")


def summary(config: AgentConfig) -> str:
    d = config.printer.driver
    link = {
        "tcp": f"tcp {d.host}:{d.port}",
        "usb": f"usb {d.vendor_id or 0:04x}:{d.product_id or 0:04x}"
        + (f" serial {d.serial_number}" if d.serial_number else ""),
        "serial": f"serial {d.device} @ {d.baudrate}",
        "sim": f"simulated ({d.print_time:g} s a badge)",
    }.get(d.transport or "", d.uri or "")
    t = config.timing
    rows = [
        ("venue", config.venue),
        ("printer", f"{config.printer.name} — {config.printer.location or '(no location)'}"),
        ("driver", f"{d.language} over {link}"),
        (
            "redis",
            config.redis.safe_url()
            + (" (password from file/env)" if config.redis.password_file or config.redis.password_env else ""),
        ),
        ("heartbeat", f"every {t.heartbeat_interval:g} s, dead after {t.dead_after:g} s"),
        ("probe", f"every {t.probe_interval:g} s; down after {t.down_after_failures}, up after {t.up_after_successes}"),
        ("affinity", f"pinned jobs wait {t.affinity_wait:g} s for this printer"),
        ("attempts", str(config.jobs.max_attempts)),
        ("http", config.http.listen or "off"),
        ("journal", str(config.journal) if config.journal else "(memory only)"),
    ]
    return "\n".join(f"{k:>10}  {v}" for k, v in rows)
