"""What every YAML config of the project is built from: strict sections, the file read with bounds, host:port.

An agent's config (agent/config.py), the intake's (intake/config.py) and the Redis section they share
(protocol/redis_config.py) are all ``Strict`` sections, read by ``read_config_mapping`` and checked by
core/validate.py, so every problem is reported as ``field.path: what is wrong`` under the file's name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Self

import msgspec
import yaml
from msgspec import Meta

from core import validate
from core.errors import ConfigError


class Strict(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Every config section: unknown keys are errors; fields are given by name (YAML keys, or keywords in code).

    Build a section from a mapping with ``parse`` (every check runs, every problem reported); the constructor, as for
    any dataclass, trusts its arguments (tests and tools build sections in code). Subclasses repeat
    ``kw_only=True``: msgspec does not inherit it, and without it a required field may not follow an optional one.
    """

    @classmethod
    def parse(cls, data: Any) -> Self:
        """This section from a mapping (nested dicts included), every check run. Raises validate.Invalid."""
        return validate.parse(cls, data)


def split_host_port(text: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:9731`` for IPv6) as (host, port); ValueError when the port is not a number."""
    host, _, port = text.rpartition(":")
    return host.strip("[]"), int(port)


def is_host_port(value: str) -> bool:
    """A host and a port 1-65535, as a config must name a server."""
    host, sep, port = value.rpartition(":")
    return bool(sep and host and port.isdigit() and 0 < int(port) < 65536)


def host_port(value: str) -> str:
    if not is_host_port(value):
        raise ValueError(f"{value!r} must be host:port, e.g. 10.0.0.5:26379")
    return value


def host_ports(values: list[str]) -> list[str]:
    return [host_port(v) for v in values]


def existing_file(value: Path | None) -> Path | None:
    if value is not None and not value.is_file():
        raise ValueError(f"{value} does not exist or is not a file")
    return value


#: A file that must exist when the config is read (not at the first reconnect, hours later).
ExistingFile = Annotated[Path | None, Meta(extra={"check": existing_file})]
Nodes = Annotated[list[str], Meta(min_length=1, extra={"check": host_ports})]


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
