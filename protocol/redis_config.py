"""The ``redis:`` section every process's config shares (an agent's, the intake's, a fleet command's ``--redis``).

One Redis URL, a Sentinel-managed master or a Cluster; credentials from a file or an environment variable, never in
the YAML; TLS with the server always verified. protocol/connection.py connects with it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from msgspec import Meta

from core.settings import ExistingFile, Nodes, Strict, split_host_port
from protocol.keys import VENUE_RE


def venue_name(value: str) -> str:
    if not VENUE_RE.match(value):
        raise ValueError("must be lowercase letters, digits and - (at most 63), e.g. expo-2026")
    return value


def _redis_url(value: str) -> str:
    # redis-py fills what a URL leaves out with localhost:6379, so `redis:/10.0.0.5:6390` (one slash) would
    # silently reach another Redis: every part it reads must be there and well formed.
    parts = urlsplit(value)
    if parts.scheme not in ("redis", "rediss", "unix") or not value.startswith(parts.scheme + "://"):
        raise ValueError("must start with redis://, rediss:// (TLS) or unix:// (two slashes)")
    if parts.scheme == "unix":
        if not parts.path.startswith("/"):
            raise ValueError("names no socket path (unix:///run/redis/redis.sock)")
        return value
    try:
        port = parts.port
    except ValueError:
        raise ValueError("has a port that is not a number from 1 to 65535") from None
    if not parts.hostname:
        raise ValueError("names no host (redis://HOST:PORT/DB)")
    if port == 0 or (parts.netloc.rsplit("@", 1)[-1].endswith(":") and port is None):
        raise ValueError("has a port that is not a number from 1 to 65535")
    if parts.path not in ("", "/") and not parts.path[1:].isdigit():
        raise ValueError(f"the path must be a database number (/0), not {parts.path!r}")
    return value


class TlsConfig(Strict, kw_only=True):
    """TLS to Redis (and to the Sentinels). The server's certificate and host name are always checked.

    There is deliberately no switch to turn verification off: on a network shared with exhibitors and guests, an
    unchecked certificate is no better than plain text.
    """

    #: The venue CA that signed the Redis servers' certificates; unset = the system's trusted CAs.
    ca_file: ExistingFile = None
    #: A client certificate and its key, for a Redis with ``tls-auth-clients yes``.
    cert_file: ExistingFile = None
    key_file: ExistingFile = None

    def __post_init__(self) -> None:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("give cert_file and key_file together (a client certificate and its key)")


class Credentials(Strict, kw_only=True):
    """A username and a password read from a file or an environment variable, never written in the YAML."""

    username: str | None = None
    password_file: Path | None = None
    password_env: str | None = None

    def __post_init__(self) -> None:
        if self.password_file and self.password_env:
            raise ValueError("give password_file or password_env, not both")

    def password(self) -> str | None:
        """The password from the file or environment variable named in the config (never logged)."""
        if self.password_file is not None:
            return self.password_file.read_text(encoding="utf-8").strip()
        if self.password_env is not None:
            return os.environ.get(self.password_env)
        return None


class SentinelConfig(Credentials, kw_only=True):
    """Redis Sentinel: the agent asks the sentinels which server is the master, and follows every change.

    Its credentials are the sentinels' own (``requirepass``/ACL in sentinel.conf); the data servers use
    ``redis.username``/``password_*``.
    """

    master: Annotated[str, Meta(min_length=1, max_length=200)]
    nodes: Nodes
    #: How often the sentinels are asked who the master is: a failover is followed within this, without an error.
    poll_interval: Annotated[float, Meta(ge=0.05, le=5)] = 0.25
    db: Annotated[int, Meta(ge=0, le=15)] = 0
    # The sentinels' password file is checked here; the data servers' one in _check_files (same message).
    password_file: ExistingFile = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.password_env is not None and self.password_env not in os.environ:
            raise ValueError(f"password_env: environment variable {self.password_env} is not set")

    def addresses(self) -> list[tuple[str, int]]:
        return [split_host_port(n) for n in self.nodes]


class ClusterConfig(Strict, kw_only=True):
    """Redis Cluster (one Redis for many venues): a few nodes to start from; the rest are discovered."""

    nodes: Nodes

    def addresses(self) -> list[tuple[str, int]]:
        return [split_host_port(n) for n in self.nodes]


class RedisConfig(Credentials, kw_only=True):
    url: Annotated[str, Meta(extra={"check": _redis_url})] = "redis://127.0.0.1:6379/0"
    connect_timeout: Annotated[float, Meta(gt=0, le=60)] = 2.0
    #: Instead of ``url``: a Sentinel-managed master, or a Redis Cluster.
    sentinel: SentinelConfig | None = None
    cluster: ClusterConfig | None = None
    #: TLS settings; with ``url`` they need ``rediss://``; with ``sentinel``/``cluster`` they turn TLS on.
    tls: TlsConfig | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check_ways(url_given=False)

    def _check_given(self, given: frozenset[str]) -> None:
        # Whether ``url`` was written matters, not its value: the default url next to a sentinel is still a mistake.
        if "url" in given:
            self._check_ways(url_given=True)

    def _check_ways(self, *, url_given: bool) -> None:
        chosen = [name for name in ("sentinel", "cluster") if getattr(self, name) is not None]
        if url_given:
            chosen.insert(0, "url")
        if len(chosen) > 1:
            raise ValueError(f"give one of url, sentinel or cluster, not {' and '.join(chosen)}")
        if self.tls is not None and chosen in ([], ["url"]) and urlsplit(self.url).scheme != "rediss":
            raise ValueError("tls is set but the url is not rediss:// (TLS would silently be off)")

    @property
    def mode(self) -> Literal["url", "sentinel", "cluster"]:
        if self.sentinel is not None:
            return "sentinel"
        if self.cluster is not None:
            return "cluster"
        return "url"

    @property
    def uses_tls(self) -> bool:
        if self.mode == "url":
            return urlsplit(self.url).scheme == "rediss"
        return self.tls is not None

    def safe_url(self) -> str:
        """Where Redis is, with any password replaced, for logs and summaries."""
        tls = " (tls)" if self.uses_tls else ""
        if self.sentinel is not None:
            return f"sentinel master {self.sentinel.master} via {', '.join(self.sentinel.nodes)}{tls}"
        if self.cluster is not None:
            return f"cluster via {', '.join(self.cluster.nodes)}{tls}"
        parts = urlsplit(self.url)
        if parts.password is None:
            return self.url
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return parts._replace(netloc=netloc).geturl()
