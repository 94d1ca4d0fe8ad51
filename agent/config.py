"""One YAML file per agent, validated completely before the agent touches Redis or the printer.

Every problem is reported as ``field.path: what is wrong`` under the file's name; unknown keys are errors (a typo
such as ``heartbeat_intervall`` must not silently fall back to a default at a live event).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Annotated, Any, Literal, Self
from urllib.parse import urlsplit

import msgspec
import yaml
from msgspec import Meta

from core import validate
from core.errors import ConfigError
from drivers.config import DriverConfig
from protocol.keys import PRINTER_RE, VENUE_RE


class _Strict(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Every config section: unknown keys are errors; fields are given by name (YAML keys, or keywords in code).

    Build a section from a mapping with ``parse`` (every check runs, every problem reported); the constructor, as for
    any dataclass, trusts its arguments (tests and tools build sections in code). Subclasses repeat
    ``kw_only=True``: msgspec does not inherit it, and without it a required field may not follow an optional one.
    """

    @classmethod
    def parse(cls, data: Any) -> Self:
        """This section from a mapping (nested dicts included), every check run. Raises validate.Invalid."""
        return validate.parse(cls, data)


def _printer_name(value: str) -> str:
    if not PRINTER_RE.match(value):
        raise ValueError("must be lowercase letters, digits, - and _ (at most 63), starting with a letter or digit")
    return value


def _venue_name(value: str) -> str:
    if not VENUE_RE.match(value):
        raise ValueError("must be lowercase letters, digits and - (at most 63), e.g. expo-2026")
    return value


def split_host_port(text: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:9731`` for IPv6) as (host, port); ValueError when the port is not a number."""
    host, _, port = text.rpartition(":")
    return host.strip("[]"), int(port)


def _is_host_port(value: str) -> bool:
    """A host and a port 1-65535, as a config must name a server."""
    host, sep, port = value.rpartition(":")
    return bool(sep and host and port.isdigit() and 0 < int(port) < 65536)


def _host_port(value: str) -> str:
    if not _is_host_port(value):
        raise ValueError(f"{value!r} must be host:port, e.g. 10.0.0.5:26379")
    return value


def _host_ports(values: list[str]) -> list[str]:
    return [_host_port(v) for v in values]


def _existing_file(value: Path | None) -> Path | None:
    if value is not None and not value.is_file():
        raise ValueError(f"{value} does not exist or is not a file")
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


def _yaml_off(value: object) -> object:
    # YAML reads a bare `listen: off` (as documented) as the boolean false; `on`/`true` stays an error ("must be text").
    return None if value is False else value


def _listen(value: str | None) -> str | None:
    if value in (None, "", "off"):
        return None
    if not _is_host_port(value):
        raise ValueError("must be host:port, e.g. 127.0.0.1:9731 (or off)")
    return value


#: A file that must exist when the config is read (not at the first reconnect, hours later).
ExistingFile = Annotated[Path | None, Meta(extra={"check": _existing_file})]
Nodes = Annotated[list[str], Meta(min_length=1, extra={"check": _host_ports})]


class PrinterConfig(_Strict, kw_only=True):
    name: Annotated[str, Meta(extra={"check": _printer_name})]
    location: Annotated[str, Meta(max_length=120)] = ""
    driver: DriverConfig


class TlsConfig(_Strict, kw_only=True):
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


class _Credentials(_Strict, kw_only=True):
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


class SentinelConfig(_Credentials, kw_only=True):
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


class ClusterConfig(_Strict, kw_only=True):
    """Redis Cluster (one Redis for many venues): a few nodes to start from; the rest are discovered."""

    nodes: Nodes

    def addresses(self) -> list[tuple[str, int]]:
        return [split_host_port(n) for n in self.nodes]


class RedisConfig(_Credentials, kw_only=True):
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


class TimingConfig(_Strict, kw_only=True):
    heartbeat_interval: Annotated[float, Meta(ge=0.05, le=30)] = 1.0
    dead_after_misses: Annotated[int, Meta(ge=2, le=60)] = 3
    probe_interval: Annotated[float, Meta(ge=0.05, le=60)] = 2.0
    affinity_wait: Annotated[float, Meta(ge=0, le=3600)] = 10.0
    #: How long one BLMOVE on the pool blocks: a pinned job or a shutdown is noticed within this.
    block_timeout: Annotated[float, Meta(ge=0.05, le=5)] = 1.0
    down_after_failures: Annotated[int, Meta(ge=1, le=100)] = 3
    up_after_successes: Annotated[int, Meta(ge=1, le=100)] = 3
    #: On SIGTERM, how long the badge in progress may take to finish before it is released as unknown.
    shutdown_grace: Annotated[float, Meta(ge=0, le=600)] = 20.0

    @property
    def dead_after(self) -> float:
        return self.heartbeat_interval * self.dead_after_misses


class JobsConfig(_Strict, kw_only=True):
    max_attempts: Annotated[int, Meta(ge=1, le=50)] = 3
    #: Print a test badge after the printer comes back from being down, before taking real jobs.
    test_print_on_recovery: bool = False


class HttpConfig(_Strict, kw_only=True):
    listen: Annotated[str | None, Meta(extra={"before": _yaml_off, "check": _listen})] = "127.0.0.1:9731"


class LogConfig(_Strict, kw_only=True):
    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["text", "json"] = "text"


class AgentConfig(_Strict, kw_only=True):
    venue: Annotated[str, Meta(extra={"check": _venue_name})]
    printer: PrinterConfig
    redis: RedisConfig = msgspec.field(default_factory=RedisConfig)
    timing: TimingConfig = msgspec.field(default_factory=TimingConfig)
    jobs: JobsConfig = msgspec.field(default_factory=JobsConfig)
    http: HttpConfig = msgspec.field(default_factory=HttpConfig)
    journal: Path | None = None
    log: LogConfig = msgspec.field(default_factory=LogConfig)

    @property
    def name(self) -> str:
        return self.printer.name


#: An agent config is a few hundred bytes; a file far larger is a mistake (a log, an image), and parsing it would
#: take minutes and gigabytes before saying so.
MAX_CONFIG_BYTES = 256 * 1024


def read_config_mapping(path: Path, keys_hint: str) -> dict[str, Any]:
    """The YAML mapping a config file holds, read with the bounds every config gets.

    Args:
        path: the config file.
        keys_hint: the top-level keys the file should have, named in the error when it holds no mapping.

    Raises ConfigError naming the file: missing, a directory, unreadable, over the size cap, not UTF-8, not YAML,
    or not a mapping (each exits 78 from the CLI, so systemd does not restart-loop on it).
    """
    try:
        with path.open("rb") as fh:
            # One byte past the cap tells "too large" from "exactly at the cap" without reading a huge file whole.
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        raise ConfigError(str(path), ["file not found"]) from None
    except IsADirectoryError:
        raise ConfigError(str(path), ["is a directory, not a config file"]) from None
    except OSError as exc:
        raise ConfigError(str(path), [f"cannot read: {exc.strerror or exc}"]) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(str(path), [f"larger than {MAX_CONFIG_BYTES // 1024} KiB: not a config file"])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(str(path), [f"not UTF-8 text: {exc.reason} at byte {exc.start}"]) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(str(path), [f"{where}not valid YAML: {problem}"]) from None
    if not isinstance(data, dict):
        raise ConfigError(str(path), [f"the file must hold a mapping ({keys_hint})"])
    return data


def load_config(path: str | Path) -> AgentConfig:
    """Read and validate one agent config. Raises ConfigError naming the file and every bad field."""
    path = Path(path)
    data = read_config_mapping(path, "venue:, printer:, redis:, ...")
    try:
        config = AgentConfig.parse(data)
    except validate.Invalid as exc:
        raise ConfigError(str(path), exc.problems) from None
    _check_files(path, config)
    return config


def _check_files(path: Path, config: AgentConfig) -> None:
    problems = []
    pw_file = config.redis.password_file
    if pw_file is not None and not pw_file.is_file():
        problems.append(f"redis.password_file: {pw_file} does not exist or is not a file")
    if config.redis.password_env is not None and config.redis.password_env not in os.environ:
        problems.append(f"redis.password_env: environment variable {config.redis.password_env} is not set")
    problems += _template_problems(config.printer.driver)
    problems += journal_problems(config.journal)
    if problems:
        raise ConfigError(str(path), problems)


def journal_problems(journal: Path | None) -> list[str]:
    """The journal's directory must exist and take files: else the agent would run without crash cover."""
    if journal is None:
        return []
    folder = journal.parent
    if folder.exists() and not folder.is_dir():
        return [f"journal: {folder} is not a directory"]
    if not folder.is_dir():
        return [
            f"journal: directory {folder} does not exist (badge-agent setup creates it; or: "
            f"sudo install -d -m 0750 -o badge-agent -g badge-agent {folder})"
        ]
    if journal.exists() and not journal.is_file() and not journal.is_char_device():
        return [f"journal: {journal} is not a file"]
    if not os.access(folder, os.W_OK | os.X_OK) or (journal.exists() and not os.access(journal, os.W_OK)):
        return [f"journal: {journal if journal.exists() else folder} cannot be written (read-only disk, owner or mode)"]
    return []


def _template_problems(driver: DriverConfig) -> list[str]:
    """A user's badge template is read and checked now, not at the first badge of the rush."""
    if driver.template is None:
        return []
    field = "printer.driver.template"
    if driver.language != "zpl":
        return [f"{field}: templates are for zpl printers; {driver.language} badges are drawn as graphics"]
    try:
        text = driver.template.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [f"{field}: cannot read {driver.template}: {exc}"]
    from drivers.languages.zpl_text import check_template

    return [f"{field}: {problem}" for problem in check_template(text)]


def secret_warnings(path: Path, config: AgentConfig) -> list[str]:
    """Files holding a secret that every user of the machine can read.

    Group-readable is fine: the recommended set-up is root-owned, mode 0640, group ``badge-agent`` (docs/venue.md).
    """
    redis = config.redis
    candidates = [(path, "config")] if urlsplit(redis.url).password else []
    if redis.password_file is not None:
        candidates.append((redis.password_file, "redis.password_file"))
    if redis.sentinel is not None and redis.sentinel.password_file is not None:
        candidates.append((redis.sentinel.password_file, "redis.sentinel.password_file"))
    if redis.tls is not None and redis.tls.key_file is not None:
        candidates.append((redis.tls.key_file, "redis.tls.key_file"))
    warnings = []
    for file, what in candidates:
        try:
            mode = file.stat().st_mode
        except OSError:
            continue
        if mode & stat.S_IROTH:
            warnings.append(f"{what} {file} holds a secret and every user can read it (chmod 640 or 600)")
    return warnings
