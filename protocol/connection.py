"""Connecting to the venue's Redis (one server, a Sentinel-managed master, or a Cluster), and waiting for it.

Sentinel (docs/redis.md): redis-py's own Sentinel client notices a new master only on a ``READONLY`` error, keeps
writing to a demoted master for seconds after a manual failover (those acknowledged writes are thrown away when it
resyncs), and reads ``SENTINEL MASTERS``, which names the new master only at the very end of a failover. So here:

* a watcher asks every sentinel ``GET-MASTER-ADDR-BY-NAME`` every ``poll_interval`` (0.25 s) and, when the master
  moved, closes every connection, idle *and in use*, so the next command goes to the new master;
* replies that mean "this is no longer the master" (``READONLY``, ``UNBLOCKED``, ``NOREPLICAS``, ``MASTERDOWN``,
  ``LOADING``) are turned into :class:`MasterChangedError` (a ``ConnectionError``): the agent then recovers exactly as
  after a lost connection (in-flight list + journal), and the CLI retries with backoff;
* where sentinels disagree during a failover, the newer master is the one whose ``master_replid2`` is the other's
  ``master_replid`` (a promoted replica keeps its old master's replication id as its second one).

TLS is verified (CA and host name) in every mode; there is no switch to turn that off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from typing import Any, cast

from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import Connection, ConnectionPool, SSLConnection, UnixDomainSocketConnection, parse_url
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import (
    MasterNotFoundError,
    Sentinel,
    SentinelConnectionPool,
    SentinelManagedConnection,
)
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from core.logs import kv, masked
from protocol.redis_config import RedisConfig, TlsConfig

log = logging.getLogger(__name__)

#: Error replies that mean "you are not talking to the writable master any more": find the master again.
REDISCOVER = ("READONLY", "UNBLOCKED", "NOREPLICAS", "MASTERDOWN", "LOADING")


class MasterChangedError(RedisConnectionError):
    """The server answered as a demoted or not-yet-ready master: reconnect to the current master."""


def stop_if_cancelled() -> None:
    """Raise CancelledError when the running task has been asked to stop. Call it where a Redis error is caught.

    A cancellation that lands inside redis-py's socket read can come out as a ConnectionError or TimeoutError; a loop
    that retries Redis errors would then swallow the cancel and never stop (a server's shutdown would wait on it).
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def explain(exc: BaseException, tls: bool, client_cert: bool = True) -> str:
    """A connection error in words an installer can act on (never with a password: redis-py puts none there).

    ``client_cert``: whether a TLS connection presented a client certificate. Without one, a server that wants one
    may only hang up: under TLS 1.3 it checks the certificate after the client's handshake ended, and its alert can
    lose the race with the client's first command (the client then reads a reset, not "certificate required")."""
    text = str(exc)
    low = text.lower()
    if "certificate_verify_failed" in low or "certificate verify failed" in low:
        if "hostname mismatch" in low or "ip address mismatch" in low:
            return (
                f"{text} — the Redis server's certificate does not name the host connected to "
                "(add it to the certificate's subjectAltName, see docs/redis.md)"
            )
        return f"{text} — the Redis server's certificate is not signed by redis.tls.ca_file (the venue CA)"
    if "certificate required" in low or "certificate_required" in low or "handshake failure" in low:
        return f"{text} — the Redis server wants a client certificate: set redis.tls.cert_file and key_file"
    if tls and not client_cert and ("closed by server" in low or "connection reset" in low):
        return (
            f"{text} — the server hung up after the TLS handshake, as a Redis server that wants a client certificate "
            "does: set redis.tls.cert_file and key_file"
        )
    if not tls and ("closed by server" in low or "connection reset" in low):
        return f"{text} — the server hung up at once: if that port speaks TLS, use rediss:// and redis.tls"
    if tls and ("wrong version number" in low or "record layer failure" in low or "packet length" in low):
        return f"{text} — that port does not speak TLS: use redis:// or the server's tls-port"
    return text


class _Explained:
    """Mixin: connect errors carry an explanation (wrong CA, missing client certificate, TLS port without TLS)."""

    async def connect(self) -> None:
        try:
            await super().connect()  # type: ignore[misc]
        except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
            if isinstance(exc, MasterChangedError):
                raise
            tls = isinstance(self, SSLConnection)
            client_cert = tls and bool(getattr(self, "certfile", None))
            raise RedisConnectionError(masked(explain(exc, tls, client_cert))) from exc


class _TcpConnection(_Explained, Connection):
    pass


class _TlsConnection(_Explained, SSLConnection):
    pass


class _UnixConnection(_Explained, UnixDomainSocketConnection):
    pass


def _check_reply(exc: ResponseError) -> None:
    code = str(exc).split(" ", 1)[0]
    if code in REDISCOVER:
        raise MasterChangedError(f"redis master changed ({exc}); finding the master again") from exc


class _MasterConnection(_Explained, SentinelManagedConnection):
    async def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().read_response(*args, **kwargs)
        except RedisConnectionError as exc:
            if "now a slave" in str(exc):  # redis-py's own translation of READONLY
                cast("_SentinelPool", self.connection_pool).forget_master()
                raise MasterChangedError(f"redis master changed ({exc}); finding the master again") from exc
            raise
        except ResponseError as exc:
            try:
                _check_reply(exc)
            except MasterChangedError:
                await self.disconnect()
                cast("_SentinelPool", self.connection_pool).forget_master()
                raise
            raise


class _MasterTlsConnection(_MasterConnection, SSLConnection):
    pass


class _Sentinels(Sentinel):
    """Asks every sentinel for the master's address (not ``SENTINEL MASTERS``, which lags a whole failover).

    During a failover the sentinels disagree for a moment. The agent moves to an address only when (a) all answering
    sentinels name it, (b) a majority of the configured sentinels name it, or (c) it answers as a master whose
    ``master_replid2`` is the current master's replication id, i.e. it is a replica of our master just promoted. It
    never moves back to a demoted master that a lagging sentinel still names.
    """

    def __init__(self, *args: Any, node_kwargs: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]
        self._node_kwargs = node_kwargs
        self.current: tuple[str, int] | None = None
        self._current_replid: str | None = None

    async def discover_master(self, service_name: str) -> tuple[str, int]:
        async def ask(sentinel: Redis) -> tuple[str, int] | None:
            reply = await sentinel.execute_command(  # type: ignore[no-untyped-call]
                "SENTINEL", "GET-MASTER-ADDR-BY-NAME", service_name
            )
            if not reply:
                return None
            host, port = reply
            return (host.decode() if isinstance(host, bytes) else str(host), int(port))

        answers = await asyncio.gather(*(ask(s) for s in self.sentinels), return_exceptions=True)
        found = [a for a in answers if isinstance(a, tuple)]
        if not found:
            errors = "; ".join(str(a) for a in answers if isinstance(a, BaseException))
            why = f"no sentinel knows a master named {service_name!r}"
            raise MasterNotFoundError(why + (f": {errors}" if errors else ""))
        votes = Counter(found)
        top, top_votes = votes.most_common(1)[0]
        chosen = self.current
        if len(votes) == 1 or self.current is None or top_votes * 2 > len(self.sentinels):
            chosen = top
        else:
            for candidate in votes:
                if candidate != self.current and await self._promoted_from_current(candidate):
                    chosen = candidate
                    break
        if chosen is None:
            chosen = top
        if chosen != self.current:
            self.current = chosen
            info = await self._info(chosen)
            self._current_replid = None if info is None else str(info.get("master_replid", "")) or None
        return chosen

    async def _info(self, address: tuple[str, int]) -> dict[str, Any] | None:
        client = Redis(host=address[0], port=address[1], **self._node_kwargs)
        try:
            info: dict[str, Any] = await client.info("replication")
            return info
        except (RedisError, OSError):
            return None
        finally:
            await client.aclose()

    async def _promoted_from_current(self, address: tuple[str, int]) -> bool:
        if self._current_replid is None:
            return False
        info = await self._info(address)
        return info is not None and info.get("role") == "master" and info.get("master_replid2") == self._current_replid


class _SentinelPool(SentinelConnectionPool):
    """Follows the master: a watcher polls the sentinels and closes every connection when the master moves."""

    def __init__(self, service_name: str, sentinel_manager: _Sentinels, poll_interval: float, **kwargs: Any) -> None:
        super().__init__(service_name, sentinel_manager, **kwargs)  # type: ignore[no-untyped-call]
        self.poll_interval = poll_interval
        self.changes = 0
        self._watch: asyncio.Task[None] | None = None

    def forget_master(self) -> None:
        self.master_address = None

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        if self._watch is None or self._watch.done():
            self._watch = asyncio.get_running_loop().create_task(self._follow(), name="sentinel-watch")
        return await super().get_connection(*args, **kwargs)  # type: ignore[no-untyped-call]

    async def get_master_address(self) -> tuple[str, int]:
        address: tuple[str, int] = await self.sentinel_manager.discover_master(self.service_name)
        if self.master_address is not None and address != self.master_address:
            await self._moved(address)
        self.master_address = address
        return address

    async def _moved(self, address: tuple[str, int]) -> None:
        old = self.master_address
        self.master_address = address
        self.changes += 1
        log.warning("redis master changed", extra=kv(master=f"{address[0]}:{address[1]}", was=_addr(old)))
        # In-use connections too: a BLMOVE blocked on the old master must not go on feeding from it.
        await ConnectionPool.disconnect(self, inuse_connections=True)

    async def _follow(self) -> None:
        while True:
            await asyncio.sleep(self.poll_interval)
            try:
                address = await self.sentinel_manager.discover_master(self.service_name)
            except (RedisError, OSError):
                continue  # no master right now (failover under way): connections fail and retry on their own
            if address != self.master_address:
                if self.master_address is None:
                    self.master_address = address
                else:
                    await self._moved(address)

    async def disconnect(self, inuse_connections: bool = True) -> None:
        if inuse_connections and self._watch is not None and self._watch is not asyncio.current_task():
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._watch
            self._watch = None
        await super().disconnect(inuse_connections=inuse_connections)


def master_changes(redis: Redis) -> int:
    """How often this client has followed the master to another server (0 without Sentinel)."""
    return int(getattr(getattr(redis, "connection_pool", None), "changes", 0))


def _addr(address: tuple[str, int] | None) -> str:
    return "-" if address is None else f"{address[0]}:{address[1]}"


def tls_kwargs(tls: TlsConfig | None) -> dict[str, Any]:
    """redis-py TLS arguments: certificate and host name always checked."""
    kwargs: dict[str, Any] = {"ssl_cert_reqs": "required", "ssl_check_hostname": True}
    if tls is not None:
        if tls.ca_file is not None:
            kwargs["ssl_ca_certs"] = str(tls.ca_file)
        if tls.cert_file is not None and tls.key_file is not None:
            kwargs["ssl_certfile"] = str(tls.cert_file)
            kwargs["ssl_keyfile"] = str(tls.key_file)
    return kwargs


def make_redis(config: RedisConfig, block_timeout: float, *, retries: int = 0) -> Redis:
    """A client for the venue's Redis whose socket timeout outlasts one blocking pop.

    Args:
        config: the ``redis:`` section.
        block_timeout: the longest BLMOVE block the caller sends.
        retries: how often a command is re-sent after a connection error, with backoff (0.1 s doubling to 1 s).
            The agent passes 0: re-sending a script whose reply was lost could run it twice (two ``begin``s count
            two attempts); it recovers from its in-flight list and journal instead. CLI commands retry, so that a
            failover under them is a pause, not an error.
    """
    retry = Retry(ExponentialBackoff(cap=1.0, base=0.1), retries) if retries else Retry(NoBackoff(), 0)
    common: dict[str, Any] = {
        "username": config.username,
        "password": config.password(),
        "decode_responses": False,
        "socket_connect_timeout": config.connect_timeout,
        "socket_timeout": block_timeout + 5,
        "retry": retry,
        # No CLIENT SETINFO: Redis 7.0 does not know it, and a least-privilege ACL user need not be granted it.
        "driver_info": None,
    }
    tls = tls_kwargs(config.tls) if config.uses_tls else {}
    if config.sentinel is not None:
        return _sentinel_client(config, common, tls)
    if config.cluster is not None:
        nodes = [ClusterNode(host, port) for host, port in config.cluster.addresses()]
        cluster = RedisCluster(
            startup_nodes=nodes,
            **{k: v for k, v in common.items() if k != "retry"},
            retry=retry,
            **({"ssl": True, **tls} if tls else {}),
        )
        # RedisCluster offers every command and script call the venue protocol makes (all keys of a venue in one
        # slot); it does not share a base class with Redis.
        return cast(Redis, cluster)
    options: dict[str, Any] = dict(parse_url(config.url))
    scheme_class = options.pop("connection_class", Connection)
    options["connection_class"] = (
        _TlsConnection
        if scheme_class is SSLConnection
        else _UnixConnection
        if scheme_class is UnixDomainSocketConnection
        else _TcpConnection
    )
    if scheme_class is SSLConnection:
        options.update(tls)
    if config.username is None:
        common["username"] = options.pop("username", None)
    if common["password"] is None:
        common["password"] = options.pop("password", None)
    options.pop("username", None)
    options.pop("password", None)
    pool = ConnectionPool(**options, **common)
    return Redis(connection_pool=pool)


def _sentinel_client(config: RedisConfig, common: dict[str, Any], tls: dict[str, Any]) -> Redis:
    sentinel = config.sentinel
    if sentinel is None:  # narrowed for mypy; make_redis only calls this with a sentinel section
        raise ValueError("no sentinel section")
    sentinel_kwargs: dict[str, Any] = {
        "username": sentinel.username,
        "password": sentinel.password(),
        "socket_connect_timeout": config.connect_timeout,
        "socket_timeout": max(config.connect_timeout, 1.0),
        "decode_responses": False,
    }
    if tls:
        sentinel_kwargs.update(ssl=True, **tls)
    node_kwargs = {k: v for k, v in common.items() if k != "retry"} | ({"ssl": True, **tls} if tls else {})
    manager = _Sentinels(
        sentinel.addresses(), sentinel_kwargs=sentinel_kwargs, node_kwargs=node_kwargs, min_other_sentinels=0
    )
    pool = _SentinelPool(
        sentinel.master,
        manager,
        sentinel.poll_interval,
        connection_class=_MasterTlsConnection if tls else _MasterConnection,
        is_master=True,
        db=sentinel.db,
        **common,
        **tls,
    )
    return Redis(connection_pool=pool)


async def wait_for_redis(redis: Redis, max_wait: float, stop: asyncio.Event | None = None) -> bool:
    """Ping until Redis answers, retrying at least every ``max_wait`` seconds. False if ``stop`` was set first."""
    # Only the error path waits for Redis: an agent that never lost it does not carry tenacity (~0.5 MB resident).
    from tenacity import AsyncRetrying, retry_if_exception_type, wait_exponential

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
