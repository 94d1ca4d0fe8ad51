"""``badge-agent webhooks``: the venue's webhooks (add, list, test, rm) and their one sender (``run``).

The webhooks live in the venue's Redis (webhooks/hooks.py); the signing secret stays in a file on the sender's
machine, never in Redis. ``run -c FILE`` takes the ``venue`` and ``redis`` sections of an agent's or the intake's
config (or a file with just those two, and an ``alerts`` section: webhooks/alerts.py) and sends until SIGTERM or
Ctrl-C (webhooks/sender.py).

Exit codes: 0 done; 2 a mistake in the command (a name, a URL, an event); 69 Redis (or, for ``test``, the receiver)
could not be reached or did not answer 2xx; 78 the config file of ``run`` is wrong.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import click
from redis.asyncio import Redis

from cli.main import EXIT_UNAVAILABLE, Target, fail, fleet_options, run_async
from core.errors import EXIT_CONFIG, ConfigError, UserError
from core.logs import masked, shown
from core.settings import read_config_mapping
from core.validate import Invalid, parse
from eventday.counts import zone_waits
from protocol.connection import make_redis
from protocol.redis_config import RedisConfig, venue_name
from webhooks.alerts import Alerts, AlertsConfig
from webhooks.delivery import body_of, iso_ms, post, read_secret, session
from webhooks.hooks import EVENTS, FORMATS, Hooks, Webhook, check_name, check_url, parse_events, parse_when
from webhooks.sender import LEASE_MS, Sender, webhooks_status


def _say(text: str) -> None:
    click.echo(shown(text, 2000), err=True)


@click.group()
def webhooks() -> None:
    """Tell other systems about confirmed prints and dead letters: signed POSTs, retried for hours."""


def _secret_file(path: Path) -> str:
    """The secret file's absolute path; created with a random secret (mode 0600) when it does not exist yet."""
    path = path.expanduser().absolute()
    if not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(secrets.token_urlsafe(32) + "\n")
        _say(f"created {path} with a new secret: give it to the receiver, and put the file on the sender's machine")
    read_secret(str(path))
    return str(path)


@webhooks.command("add")
@fleet_options
@click.argument("name")
@click.argument("url")
@click.option("--events", "events", required=True, help=f"What to send, comma-separated: {', '.join(EVENTS)}.")
@click.option(
    "--when",
    "when",
    multiple=True,
    metavar="FIELD=VALUE",
    help="Only deliveries whose field (arrival, reprint, kind, or the job's: ticket_type, ...) has this value "
    "(repeatable).",
)
@click.option(
    "--secret-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The signing secret (created, random, mode 0600, when missing); the same path on the sender's machine.",
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="json", show_default=True)
def add(
    target: Target, name: str, url: str, events: str, when: tuple[str, ...], secret_file: Path | None, fmt: str
) -> None:
    """Add (or replace) the webhook NAME posting to URL."""
    try:
        told = parse_events(events)
        hook = Webhook(
            name=check_name(name),
            url=check_url(url),
            events=told,
            when=parse_when(when, told),
            format=fmt,
            secret_file=_secret_file(secret_file) if secret_file is not None else "",
        )
    except UserError as exc:
        fail(str(exc))
        return

    async def store() -> bool:
        redis = target.client()
        try:
            return await Hooks(redis, target.venue).add(hook)
        finally:
            await redis.aclose()

    new = run_async(store())
    signed = f"signed with {hook.secret_file}" if hook.secret_file else "unsigned (no --secret-file)"
    click.echo(f"webhook {name} {'added' if new else 'replaced'}: {', '.join(hook.events)} to {masked(url)}, {signed}")
    if not hook.secret_file:
        _say("without --secret-file the receiver cannot tell a delivery is the venue's: only for chat hooks")


@webhooks.command("list")
@fleet_options
@click.option("--json", "as_json", is_flag=True, help="One JSON document.")
def list_(target: Target, as_json: bool) -> None:
    """The venue's webhooks, with the deliveries waiting for each."""

    async def read() -> tuple[list[Webhook], dict[str, Any] | None]:
        redis = target.client()
        try:
            return await Hooks(redis, target.venue).all(), await webhooks_status(redis, target.venue)
        finally:
            await redis.aclose()

    hooks, status = run_async(read())
    waiting = (status or {}).get("hooks", {})
    if as_json:
        out = [
            {
                "name": h.name,
                "url": masked(h.url),
                "events": list(h.events),
                "when": dict(h.when),
                "format": h.format,
                "secret_file": h.secret_file or None,
                "waiting": waiting.get(h.name, 0),
            }
            for h in hooks
        ]
        click.echo(json.dumps({"webhooks": out, "sender": (status or {}).get("sender")}, indent=2))
        return
    if not hooks:
        click.echo("no webhooks (add one: badge-agent webhooks add NAME URL --events printed)")
        return
    for h in hooks:
        when = " when " + " and ".join(f"{k}={v}" for k, v in h.when) if h.when else ""
        signed = f"signed ({h.secret_file})" if h.secret_file else "unsigned"
        line = f"{h.name}: {masked(h.url)} [{','.join(h.events)}]{when} {h.format}, {signed}"
        click.echo(shown(f"{line}, {waiting.get(h.name, 0)} waiting", 2000))
    sender = (status or {}).get("sender")
    click.echo(f"sender: {sender}" if sender else "sender: none running (badge-agent webhooks run -c FILE)")


@webhooks.command("rm")
@fleet_options
@click.argument("name")
def rm(target: Target, name: str) -> None:
    """Remove the webhook NAME and the deliveries waiting for it."""

    async def remove() -> bool:
        redis = target.client()
        try:
            return await Hooks(redis, target.venue).remove(name)
        finally:
            await redis.aclose()

    if not run_async(remove()):
        fail(f"no webhook {name!r} (badge-agent webhooks list)")
    click.echo(f"webhook {name} removed")


@webhooks.command("test")
@fleet_options
@click.argument("name")
def test(target: Target, name: str) -> None:
    """Send the webhook NAME one ``test`` event now, from this machine (its secret file read here), and show the
    receiver's answer. Exits 69 unless it answered 2xx."""

    async def send() -> str | None:
        redis = target.client()
        try:
            hook = await Hooks(redis, target.venue).get(name)
        finally:
            await redis.aclose()
        if hook is None:
            raise UserError(f"no webhook {name!r} (badge-agent webhooks list)")
        secret = read_secret(hook.secret_file) if hook.secret_file else None
        delivery = f"test-{uuid.uuid4()}"
        data = {"id": delivery, "event": "test", "time": iso_ms(int(time.time() * 1000)), "venue": target.venue}
        async with session() as http:
            outcome = await post(http, hook, delivery, body_of(hook, data), secret)
        click.echo(f"webhook {name}: {outcome.line()}")
        return None if outcome.ok else outcome.line()

    if run_async(send()) is not None:
        raise SystemExit(EXIT_UNAVAILABLE)


def load_run_config(path: str) -> tuple[RedisConfig, str, AlertsConfig]:
    """The ``redis`` section and ``venue`` of an agent's, the intake's or a webhooks-only config, and the ``alerts``
    section (its defaults where the file has none)."""
    data = read_config_mapping(Path(path), "venue:, redis:")
    problems: list[str] = []
    alerts = AlertsConfig()
    try:
        alerts = parse(AlertsConfig, data.get("alerts") or {})
    except Invalid as exc:
        problems += [f"alerts.{p}" for p in exc.problems]
    venue = data.get("venue")
    if not isinstance(venue, str):
        problems.append("venue: missing (the venue's name)")
    else:
        try:
            venue_name(venue)
        except ValueError as exc:
            problems.append(f"venue: {exc}")
    redis_config = None
    try:
        redis_config = parse(RedisConfig, data.get("redis") or {})
    except Invalid as exc:
        problems += [f"redis.{p}" for p in exc.problems]
    password_file = redis_config.password_file if redis_config is not None else None
    if password_file is not None and not password_file.is_file():
        problems.append(f"redis.password_file: {password_file} does not exist or is not a file")
    if problems or redis_config is None or not isinstance(venue, str):
        raise ConfigError(path, problems)
    return redis_config, venue, alerts


async def _zone_wait_seconds(redis: Redis, venue: str) -> dict[str, float]:
    """Each zone's expected wait in seconds, as the board and /metrics compute it (eventday/counts.py); a zone
    without a printing rate yet has none."""
    return {z.zone: z.wait_minutes * 60 for z in await zone_waits(redis, venue) if z.wait_minutes is not None}


async def _run(redis_config: RedisConfig, venue: str, lease_ms: int, alerts: AlertsConfig) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    redis = make_redis(redis_config, block_timeout=5.0, retries=8)
    try:
        rules = Alerts(redis, venue, alerts, zone_waits=_zone_wait_seconds)
        sender = Sender(redis, venue, report=_say, lease_ms=lease_ms, alerts=rules)
        _say(f"webhooks: sender {sender.me} for venue {venue}")
        await sender.run(stop)
    finally:
        await redis.aclose()


@webhooks.command("run")
@click.option("-c", "--config", "config_path", required=True, help="A config with venue: and redis: (an agent's).")
@click.option(
    "--lease",
    "lease_seconds",
    type=click.FloatRange(min=2, max=600),
    default=LEASE_MS / 1000,
    show_default=True,
    help="Seconds a dead sender keeps the lease before another takes over.",
)
def run(config_path: str, lease_seconds: float) -> None:
    """Send the venue's webhooks until stopped (SIGTERM or Ctrl-C): one sender per venue at a time."""
    try:
        redis_config, venue, alerts = load_run_config(config_path)
    except ConfigError as exc:
        fail(exc.render(), EXIT_CONFIG)
        return
    run_async(_run(redis_config, venue, int(lease_seconds * 1000), alerts))
