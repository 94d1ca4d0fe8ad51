"""``badge-agent intake -c FILE``: the HTTP service for desks and kiosks; ``intake token add|list|revoke``."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys

import click

from cli.main import fail
from core.errors import EXIT_CONFIG, ConfigError, UserError
from intake.config import IntakeConfig, load_intake_config
from intake.tokens import MAX_OUTSTANDING, ROLES, TokenFile

CONFIG = click.option("-c", "--config", "config_path", required=True, help="The intake's YAML config.")


def _config(path: str) -> IntakeConfig:
    try:
        return load_intake_config(path)
    except ConfigError as exc:
        fail(exc.render(), EXIT_CONFIG)
        raise AssertionError("unreachable") from None


@click.group(invoke_without_command=True)
@click.option("-c", "--config", "config_path", help="The intake's YAML config.")
@click.pass_context
def intake(ctx: click.Context, config_path: str | None) -> None:
    """Serve the intake (HTTP API and kiosk page) for a venue's desks and kiosks (docs/intake.md)."""
    if ctx.invoked_subcommand is not None:
        return
    if config_path is None:
        fail("give -c FILE (the intake's YAML config)")
        return
    config = _config(config_path)
    from core.logs import setup_logging

    setup_logging()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(config))


async def serve(config: IntakeConfig) -> None:
    from core.settings import split_host_port
    from intake.app import make_app
    from intake.context import INTAKE
    from intake.guard import serve_app
    from protocol.connection import make_redis

    redis = make_redis(config.redis, block_timeout=20.0, retries=8)
    app = make_app(config, redis)
    host, port = split_host_port(config.listen)
    limits = config.limits
    serving = await serve_app(
        app,
        app[INTAKE].activity,
        host,
        port,
        header_timeout=limits.header_timeout,
        max_connections=limits.max_connections,
    )
    bound = serving.address
    click.echo(f"intake for venue {config.venue} on http://{bound[0]}:{bound[1]}", nl=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await serving.close()
        await redis.aclose()


@intake.group()
def token() -> None:
    """The intake's bearer tokens (stored hashed in the config's tokens file)."""


@token.command("add")
@click.argument("name")
@click.option("--role", required=True, type=click.Choice(ROLES), help="kiosk, desk, staff or viewer.")
@click.option(
    "--max-outstanding",
    type=int,
    help="Jobs it may have not yet printed (or dead or cancelled) at once; default "
    + ", ".join(f"{n} for a {r}" for r, n in MAX_OUTSTANDING.items() if n)
    + ".",
)
@click.option(
    "--printer",
    "printers",
    multiple=True,
    metavar="NAME",
    help="A printer it may pin jobs to (repeatable); without any, it may pin to every printer.",
)
@click.option(
    "--zone",
    default="",
    metavar="NAME",
    help="The zone (the config's zones:) whose printers print its attendee badges.",
)
@CONFIG
def token_add(
    name: str, role: str, max_outstanding: int | None, printers: tuple[str, ...], zone: str, config_path: str
) -> None:
    """Create a token for NAME; it is printed once, here, and stored only as a hash."""
    config = _config(config_path)
    if zone and zone not in config.zones:
        defined = ", ".join(sorted(config.zones)) or "none"
        fail(f"zone: {config_path} defines no zone {zone!r} (zones: {defined})")
        return
    tokens = TokenFile(config.tokens)
    try:
        secret = tokens.add(name, role, max_outstanding, printers, zone)
    except UserError as exc:
        fail(str(exc))
        return
    click.echo(secret)
    click.echo(f"token {name!r} ({role}) added to {tokens.path}; it is shown only now", err=True)
    if role in PAGES:
        # The token rides in the fragment, which a browser never sends. It goes into the address only when the
        # person already sees it on the terminal; stdout captured by a script (TOKEN=$(...)) keeps it off stderr.
        shown = secret if sys.stdout.isatty() else "<the token above>"
        page, device = PAGES[role]
        click.echo(
            f"its page: {page_url(config.listen, page)}#token={shown} — open it once on {device} (the page keeps "
            "the token; behind a reverse proxy, use the proxy's address)",
            err=True,
        )


#: The page each role opens, and the device it is opened on.
PAGES = {
    "kiosk": ("/kiosk", "the kiosk's tablet"),
    "desk": ("/desk", "the help desk's browser"),
    "staff": ("/desk", "a staff member's browser"),
}


def page_url(listen: str, path: str) -> str:
    """The intake's page at ``path`` as a browser on another machine reaches it: ``listen`` (the config's) with a
    wildcard address replaced by this machine's name."""
    from core.settings import split_host_port

    host, port = split_host_port(listen)
    if host in ("", "0.0.0.0", "::"):  # noqa: S104 - reading the wildcard, not binding it
        import socket

        host = socket.gethostname()
    elif ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}{path}"


@token.command("list")
@CONFIG
def token_list(config_path: str) -> None:
    """Each token's name, role and creation time (never the token)."""
    try:
        rows = TokenFile(_config(config_path).tokens).list()
    except UserError as exc:
        fail(str(exc))
        return
    for t in rows:
        pins = f"  printers {','.join(t.printers)}" if t.printers else ""
        pins += f"  zone {t.zone}" if t.zone else ""
        click.echo(f"{t.name:<24} {t.role:<8} {t.created}  at most {t.max_outstanding} outstanding{pins}")
    click.echo(f"{len(rows)} token(s)")


@token.command("revoke")
@click.argument("name")
@CONFIG
def token_revoke(name: str, config_path: str) -> None:
    """Remove NAME's token; a running intake refuses it from its next request."""
    try:
        removed = TokenFile(_config(config_path).tokens).revoke(name)
    except UserError as exc:
        fail(str(exc))
        return
    if not removed:
        fail(f"no token named {name!r}", 1)
    click.echo(f"token {name!r} revoked")
