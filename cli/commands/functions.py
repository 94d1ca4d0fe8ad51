"""``badge-agent functions load``: an admin loads the protocol's Redis Functions library (Redis >= 7).

Agents and the desks' users call the library's functions but may not load them (``FUNCTION LOAD`` can run any code
on the server). So, once per Redis and after every upgrade that changes the library, an admin runs this with the
venue's connection settings (an agent's config: single server, Sentinel or Cluster, TLS) and an admin's
credentials. On a Cluster it loads the library on every primary; Sentinel replicas receive it from the master.
Redis keeps it in its AOF and RDB, so a restart does not lose it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import msgspec

from agent.config import load_config
from cli.main import EXIT_UNAVAILABLE, fail, run_async
from core.errors import EXIT_CONFIG, ConfigError
from core.validate import Invalid
from protocol.library import default_library
from protocol.redis_config import RedisConfig
from protocol.scripts import LibraryMissing, library_loaded, load_library

EXIT_NOPERM = 77  # sysexits EX_NOPERM: the user may not load functions


@click.group()
def functions() -> None:
    """The venue protocol's Redis Functions library (Redis >= 7), which an admin loads."""


def _redis_config(
    config_path: str | None, redis_url: str | None, username: str | None, password_file: Path | None
) -> RedisConfig:
    if config_path:
        try:
            config = load_config(config_path).redis
        except ConfigError as exc:
            fail(exc.render(), EXIT_CONFIG)
    elif redis_url:
        try:
            config = RedisConfig.parse({"url": redis_url})
        except Invalid as exc:
            fail("--redis: " + "; ".join(p.removeprefix("url: ") for p in exc.problems), EXIT_CONFIG)
    else:
        fail("say which Redis: -c CONFIG (an agent's config), or --redis URL (or BADGE_REDIS_URL)")
    # The admin's credentials replace the config's on the checked struct itself: a round trip through plain data
    # would have to turn every Path back into text (and re-check a sentinel's or cluster's url).
    changes: dict[str, Any] = {}
    if username is not None:
        changes["username"] = username
    if password_file is not None:
        changes.update(password_file=password_file, password_env=None)
    return msgspec.structs.replace(config, **changes)


@functions.command("load")
@click.option("-c", "--config", "config_path", help="An agent's YAML config: how to reach the venue's Redis.")
@click.option("--redis", "redis_url", envvar="BADGE_REDIS_URL", help="Redis URL instead (or BADGE_REDIS_URL).")
@click.option("--username", help="A Redis admin's user name (instead of the config's).")
@click.option(
    "--password-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The admin's password, in a file (instead of the config's).",
)
def load(config_path: str | None, redis_url: str | None, username: str | None, password_file: Path | None) -> None:
    """Load the protocol's functions library into the venue's Redis (every primary of a Cluster).

    Needs a user allowed FUNCTION LOAD (an admin, not an agent's or a desk's user). A library already loaded is
    left as it is; libraries of other badge-agent versions stay for agents still running them.
    """
    from protocol.connection import make_redis

    config = _redis_config(config_path, redis_url, username, password_file)
    library = default_library()

    others: list[str] = []

    async def main() -> str:
        redis = make_redis(config, block_timeout=5.0, retries=8)
        try:
            added = await load_library(redis, library)
            if not await library_loaded(redis, library):
                return "still missing"
            others.extend(name for name in await _badge_libraries(redis) if name != library.name)
            return "loaded" if added else "already loaded:"
        except LibraryMissing:
            return "denied"
        finally:
            await redis.aclose()

    outcome = run_async(main())
    if outcome == "denied":
        fail("this Redis user may not FUNCTION LOAD: give an admin's --username and --password-file", EXIT_NOPERM)
    if outcome == "still missing":
        fail(f"loaded function library {library.name}, but a server still lacks it", EXIT_UNAVAILABLE)
    click.echo(f"{outcome} function library {library.name} ({len(library.scripts)} functions)")
    if others:
        click.echo(
            f"other versions still loaded: {', '.join(others)} (for agents not yet upgraded; remove one with "
            "`redis-cli FUNCTION DELETE NAME` once no agent runs it)"
        )


async def _badge_libraries(redis: Any) -> list[str]:
    """The names of every badge-agent library on the server (one node of a Cluster)."""
    listed = await redis.execute_command("FUNCTION", "LIST", "LIBRARYNAME", "badge_*")
    names = []
    for entry in listed:
        fields = dict(zip(entry[::2], entry[1::2], strict=True)) if isinstance(entry, list) else entry
        name = fields.get(b"library_name", fields.get("library_name", b""))
        names.append(name.decode() if isinstance(name, bytes) else str(name))
    return sorted(n for n in names if n.startswith("badge_"))
