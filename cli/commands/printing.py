"""``badge-agent preview`` and ``test-print``: the badge a config draws, as a picture and on paper."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import click

from agent.config import AgentConfig, load_config
from cli.commands.files import file_options, open_export
from cli.main import EXIT_PRINTER, fail
from core.errors import EXIT_CONFIG, ConfigError, JobError
from core.logs import shown
from drivers.base import Badge, DriverError, Outcome, RenderError
from protocol.codec import dec
from protocol.jobs import parse_job

if TYPE_CHECKING:
    from protocol.store import Store

_DECODERS = {
    "zpl": ("drivers.render.zpl", "decode_zpl_graphics"),
    "brother_ql": ("drivers.render.brother", "decode_brother_raster"),
    "escpos": ("drivers.render.escpos", "decode_escpos_raster"),
}


def _config(path: str) -> AgentConfig:
    try:
        return load_config(path)
    except ConfigError as exc:
        fail(exc.render(), EXIT_CONFIG)
    raise AssertionError("unreachable")


def _driver(config: AgentConfig, path: str) -> Any:
    from drivers import build_driver

    try:
        return build_driver(config.printer.driver, config.printer.name)
    except (DriverError, ValueError) as exc:
        fail(f"config error in {path}: printer.driver: {exc}", EXIT_CONFIG)


def test_badge(config: AgentConfig) -> Badge:
    """Venue, printer, location and time on one badge; its QR code carries the printer's name."""
    when = time.strftime("%H:%M:%S")
    return Badge(
        job_id=f"test-print-{config.printer.name}",
        attendee_id=f"TEST-{config.printer.name}",
        name=f"Test badge {config.printer.name}",
        company=config.venue,
        role=f"{config.printer.location} {when}",
    )


@click.command()
@click.option("-c", "--config", "config_path", required=True, help="The agent's YAML config.")
@click.option("--name", default=None, help="The attendee name to draw.")
@click.option("--company", default="", help="Company line.")
@click.option("--role", default="", help="Role line.")
@click.option(
    "--file", "file", type=click.File("rb"), help="An attendee file (CSV, JSON lines, XLSX) as enqueue reads it."
)
@file_options
@click.option("-o", "--out", default="preview.png", show_default=True, help="PNG to write (one per row: -N).")
def preview(
    config_path: str,
    name: str | None,
    company: str,
    role: str,
    file: BinaryIO | None,
    encoding: str | None,
    delimiter: str | None,
    maps: tuple[str, ...],
    preset: str | None,
    out: str,
) -> None:
    """Write the exact bitmap the agent would send for a badge, read back from the printer bytes."""
    import importlib

    config = _config(config_path)
    driver = _driver(config, config_path)
    if config.printer.driver.language not in _DECODERS:
        fail(f"{config_path}: preview needs a printer language (zpl, brother_ql, escpos), not 'sim'", EXIT_CONFIG)
    module, attr = _DECODERS[config.printer.driver.language]
    decode = getattr(importlib.import_module(module), attr)
    badges: list[tuple[str, Badge]] = []
    if file is not None:
        export = open_export(file, "auto", encoding, delimiter, maps, preset)
        for number, row, error in export.rows:
            try:
                if row is None:
                    raise JobError(error)
                job = parse_job({"attendee_id": f"PREVIEW-{number}", **row})
            except JobError as exc:
                click.echo(f"row {number}: skipped: {shown(str(exc), 300)}", err=True)
                continue
            badges.append((f"row {number}", job.badge()))
    elif name is not None:
        badges.append(
            ("badge", Badge(job_id="preview-1", attendee_id="PREVIEW-1", name=name, company=company, role=role))
        )
    else:
        fail("say what to draw: --name NAME or --file FILE")
    if not badges:
        fail("no row of the file makes a badge")
    stem = Path(out)
    for n, (where, badge) in enumerate(badges, 1):
        try:
            pages = decode(driver.render(badge))
        except RenderError as exc:
            fail(f"{where} ({shown(badge.name, 100)}): {exc}", EXIT_CONFIG)
        target = stem if len(badges) == 1 else stem.with_name(f"{stem.stem}-{n}{stem.suffix}")
        pages[0].save(target)
        click.echo(f"{target}: {pages[0].width}x{pages[0].height} dots")


@click.command("test-print")
@click.option("-c", "--config", "config_path", required=True, help="The agent's YAML config.")
@click.option("--timeout", default=None, type=float, help="Seconds to wait for the outcome (print_timeout).")
def test_print(config_path: str, timeout: float | None) -> None:
    """Print one test badge and report the confirmed outcome: through the printer's agent when it runs, else
    through the real driver."""
    config = _config(config_path)
    driver = _driver(config, config_path)
    outcome, reason = asyncio.run(test_print_badge(config, driver, timeout, click.echo))
    click.echo(f"test badge: {outcome.value} ({reason})")
    if outcome is not Outcome.PRINTED:
        raise SystemExit(EXIT_PRINTER)


async def test_print_badge(
    config: AgentConfig, driver: Any, timeout: float | None, say: Callable[[str], None]
) -> tuple[Outcome, str]:
    """The test badge, by whoever drives the printer: a printer is driven by one program at a time. While its agent
    beats, a second program talking to the printer would read the agent's status replies or have its own read by
    the agent, and the badge in the agent's hands could hang unconfirmed: the test badge goes to the agent as a job
    for that printer alone (``Store.enqueue(only=True)``), and this waits for its final state. With no agent
    beating (or no Redis), the printer is driven here, through the real driver."""
    through = await _through_agent(config, timeout, say)
    if through is not None:
        return through
    return await print_test_badge(config, driver, timeout)


async def _through_agent(
    config: AgentConfig, timeout: float | None, say: Callable[[str], None]
) -> tuple[Outcome, str] | None:
    """The outcome of the test badge printed by the printer's agent, or None when no agent of it beats (or Redis
    cannot be reached with the config's login: then nothing in Redis says an agent drives the printer)."""
    from redis.exceptions import RedisError

    from protocol.connection import make_redis
    from protocol.store import Store

    name = config.printer.name
    redis = make_redis(config.redis, block_timeout=1.0)
    try:
        store = Store(redis, config.venue)
        try:
            within = config.redis.connect_timeout * (3 if config.redis.sentinel else 1) + 2
            health = await asyncio.wait_for(_live_agent(store, name, config.timing.dead_after), within)
        except (RedisError, TimeoutError, OSError) as exc:
            say(f"Redis cannot be asked whether an agent drives {name} ({shown(str(exc), 200)}): printing directly")
            return None
        if health is None:
            say(f"no agent of {name} is running: printing directly")
            return None
        say(f"the agent of {name} is running: the test badge goes through it")
        try:
            return await _agent_prints(store, config, health, timeout, say)
        except (RedisError, OSError) as exc:
            return Outcome.UNKNOWN, f"lost Redis while the agent of {name} had the test badge: {shown(str(exc), 200)}"
    finally:
        await redis.aclose()


async def _live_agent(store: Store, name: str, dead_after: float) -> dict[str, Any] | None:
    """The agent's health when it beats (its ``hb`` entry within ``dead_after`` of Redis time, its ``health:<name>``
    present and not stopped), else None."""
    k = store.keys
    beat = await store.redis.zscore(k.hb, name)
    if beat is None:
        return None
    seconds, micros = await store.redis.time()
    if seconds * 1000 + micros // 1000 - beat >= dead_after * 1000:
        return None
    raw = await store.redis.get(k.health(name))
    try:
        health = json.loads(raw) if raw is not None else None
    except ValueError:
        return None
    if not isinstance(health, dict) or health.get("state") in (None, "stopped", "dead"):
        return None
    return health


async def _agent_prints(
    store: Store, config: AgentConfig, health: dict[str, Any], timeout: float | None, say: Callable[[str], None]
) -> tuple[Outcome, str]:
    name = config.printer.name
    if health.get("state") == "drained":
        return Outcome.FAILED, f"{name} is drained: its agent takes no work (badge-agent drain --resume {name} first)"
    badge = test_badge(config)
    job_id = f"test-print-{name}-{secrets.token_hex(4)}"
    job = parse_job(
        {
            "job_id": job_id,
            "attendee_id": badge.attendee_id,
            "name": badge.name,
            "company": badge.company,
            "role": badge.role,
            "printer": name,
        }
    )
    k = store.keys
    ahead = await store.redis.llen(k.queue(name)) + await store.redis.llen(k.inflight(name))
    await store.enqueue(job.job_id, job.payload(), name, only=True)
    say(f"queued {job_id} for {name}" + (f" behind {ahead} badge(s)" if ahead else ""))
    # Each badge ahead may take up to print_timeout; then this one, and an agent that died is noticed after dead_after.
    per_badge = config.printer.driver.print_timeout
    wait = timeout if timeout is not None else per_badge * (ahead + 1) + config.timing.dead_after + 5
    deadline = time.monotonic() + wait
    while True:
        fields = {dec(key): dec(value) for key, value in (await store.redis.hgetall(k.job(job_id))).items()}
        state = fields.get("state", "")
        why = fields.get("last_error") or fields.get("error") or ""
        if state == "printed":
            return Outcome.PRINTED, f"the agent of {name} printed it; the printer confirmed it"
        if state in ("cancelled", "dead"):
            maybe = fields.get("maybe_printed") == "1"
            return (Outcome.UNKNOWN if maybe else Outcome.FAILED), f"the agent of {name}: {why or state}"
        if time.monotonic() >= deadline:
            break
        await asyncio.sleep(0.1)
    cancelled = await store.cancel(job_id, "test-print")
    if cancelled.kind == "cancelled":
        return Outcome.FAILED, f"the agent of {name} did not take it within {wait:g} s; withdrawn"
    detail = f": {why}" if why else ""
    return (
        Outcome.UNKNOWN,
        f"the agent of {name} has had it for {wait:g} s without an outcome (state {state or '?'}{detail})",
    )


async def print_test_badge(config: AgentConfig, driver: Any, timeout: float | None) -> tuple[Outcome, str]:
    """The test badge through the real driver (this process drives the printer)."""
    badge = test_badge(config)
    try:
        # Opened before the badge is drawn: an IPP printer says at open which format and media it takes, and a
        # badge drawn before that would be refused (drawn for the config's label in PNG).
        await driver.open()
        try:
            data = driver.render(badge)
        except RenderError as exc:
            return Outcome.FAILED, f"cannot draw the badge: {exc}"
        result = await driver.print(data, badge, timeout or config.printer.driver.print_timeout)
    except DriverError as exc:
        return Outcome.FAILED, f"printer unreachable: {exc}"
    finally:
        await driver.aclose()
    return result.outcome, result.reason
