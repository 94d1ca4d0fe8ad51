"""One YAML file per agent, validated completely before the agent touches Redis or the printer.

Every problem is reported as ``field.path: what is wrong`` under the file's name; unknown keys are errors (a typo
such as ``heartbeat_intervall`` must not silently fall back to a default at a live event).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

import msgspec
from msgspec import Meta

from core import validate
from core.errors import ConfigError
from core.settings import Strict, is_host_port, read_config_mapping
from drivers.config import DriverConfig
from protocol.keys import PRINTER_RE
from protocol.redis_config import RedisConfig, venue_name


def _printer_name(value: str) -> str:
    if not PRINTER_RE.match(value):
        raise ValueError("must be lowercase letters, digits, - and _ (at most 63), starting with a letter or digit")
    return value


def _yaml_off(value: object) -> object:
    # YAML reads a bare `listen: off` (as documented) as the boolean false; `on`/`true` stays an error ("must be text").
    return None if value is False else value


def _listen(value: str | None) -> str | None:
    if value in (None, "", "off"):
        return None
    if not is_host_port(value):
        raise ValueError("must be host:port, e.g. 127.0.0.1:9731 (or off)")
    return value


class PrinterConfig(Strict, kw_only=True):
    name: Annotated[str, Meta(extra={"check": _printer_name})]
    location: Annotated[str, Meta(max_length=120)] = ""
    driver: DriverConfig


class TimingConfig(Strict, kw_only=True):
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


class JobsConfig(Strict, kw_only=True):
    max_attempts: Annotated[int, Meta(ge=1, le=50)] = 3
    #: Print a test badge after the printer comes back from being down, before taking real jobs.
    test_print_on_recovery: bool = False


class HttpConfig(Strict, kw_only=True):
    listen: Annotated[str | None, Meta(extra={"before": _yaml_off, "check": _listen})] = "127.0.0.1:9731"


class LogConfig(Strict, kw_only=True):
    level: Literal["debug", "info", "warning", "error"] = "info"
    format: Literal["text", "json"] = "text"


class AgentConfig(Strict, kw_only=True):
    venue: Annotated[str, Meta(extra={"check": venue_name})]
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
