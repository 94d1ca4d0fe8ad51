"""Loads the Lua scripts that sit next to this file: one atomic step each.

redis-py's ``Script`` runs EVALSHA and falls back to loading the script on NOSCRIPT, so a restarted or failed-over
Redis (whose script cache is empty) costs one extra round trip once, not an error.
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

SCRIPT_NAMES = (
    "enqueue",
    "take",
    "begin",
    "confirm",
    "release",
    "dead_letter",
    "beat",
    "handback",
    "sweep",
    "reclaim",
    "steal",
    "drain",
    "requeue",
)


def script_source(name: str) -> str:
    return resources.files("agent.protocol").joinpath(f"{name}.lua").read_text(encoding="utf-8")


class Scripts:
    """The venue protocol's scripts, registered on one client."""

    def __init__(self, redis: Redis) -> None:
        self._scripts: dict[str, AsyncScript] = {
            name: redis.register_script(script_source(name)) for name in SCRIPT_NAMES
        }

    def __getitem__(self, name: str) -> AsyncScript:
        return self._scripts[name]
