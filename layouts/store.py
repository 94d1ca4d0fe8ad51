"""Badge layouts in the venue's Redis: stored, versioned, listed, removed, and the rules that pick them.

A layout name holds one variant per stock (``layout:<name>:<stock>``: its version and its document with its files),
and an entry in the ``layouts`` hash (its version, its stocks, when and by whom it was set). Every change is one
Lua script (layout_set.lua, layout_rm.lua, layout_rule.lua beside this file: functions of the venue's library,
which only an admin may call) that also bumps ``layouts:version``, writes an event and publishes on
``layouts:changed``: agents poll the version (one small read a heartbeat) and hear the announcement, so a new version
is drawn from the next badge on.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from layouts import specs
from layouts.errors import LayoutError
from layouts.keys import LayoutKeys
from layouts.model import BUILT_IN_LAYOUT, RESERVED_NAME, Layout, parse_layout
from protocol.keys import Keys
from protocol.scripts import Scripts
from protocol.store import EVENTS_MAXLEN

if TYPE_CHECKING:
    from redis.asyncio import Redis


@dataclass(frozen=True)
class Stored:
    """What the ``layouts`` hash says about one layout name."""

    name: str
    version: int
    stocks: tuple[str, ...]
    set_ms: int
    by: str


def encode_variant(layout: Layout) -> str:
    """A layout as stored: its document and its files (base64), as JSON."""
    files = {name: base64.b64encode(data).decode("ascii") for name, data in layout.assets.items()}
    return json.dumps({"document": layout.document, "files": files, "source": layout.source}, ensure_ascii=False)


def decode_variant(raw: bytes | str, name: str, version: int) -> Layout:
    """A stored variant back as a checked layout. Raises LayoutError (a variant written by hand, or damaged)."""
    where = f"layout {name} v{version}"
    try:
        stored = json.loads(raw)
        files = {k: base64.b64decode(v) for k, v in stored["files"].items()}
        document = stored["document"]
    except (ValueError, KeyError, TypeError) as exc:
        raise LayoutError([f"{where}: the stored variant cannot be read ({exc})"]) from None
    return parse_layout(document, where, files, strict=False)


def _parse_meta(name: str, raw: bytes | str) -> Stored:
    data = json.loads(raw)
    return Stored(name, int(data["version"]), tuple(data.get("stocks") or ()), int(data.get("set_ms", 0)), data["by"])


class LayoutStore:
    def __init__(self, redis: Redis, venue: str, events_maxlen: int = EVENTS_MAXLEN) -> None:
        self.redis = redis
        self.keys = LayoutKeys(venue)
        self.venue_keys = Keys(venue)
        self.events_maxlen = events_maxlen
        self.scripts = Scripts(redis)

    async def set(self, name: str, variants: list[Layout], by: str) -> tuple[int, int]:
        """Store ``variants`` (one per stock) as the next version of ``name``. Returns (its version, venue's)."""
        if name == BUILT_IN_LAYOUT:
            raise LayoutError([RESERVED_NAME])
        stocks = [v.stock for v in variants]
        if len(set(stocks)) != len(stocks):
            raise LayoutError([f"layout {name}: two variants for one stock ({', '.join(stocks)})"])
        from layouts.draw import prerender  # the CLI draws SVGs and PDFs once here, so agents never load resvg/PDFium

        documents = [(variant.stock, encode_variant(prerender(variant))) for variant in variants]
        return await self.scripts.run(specs.SET.call(self.keys, name, by, self.events_maxlen, documents))

    async def all(self) -> dict[str, Stored]:
        raw = await self.redis.hgetall(self.keys.layouts)
        return {_text(n): _parse_meta(_text(n), v) for n, v in sorted(raw.items())}

    async def get(self, name: str) -> Stored | None:
        raw = await self.redis.hget(self.keys.layouts, name)
        return None if raw is None else _parse_meta(name, raw)

    async def variant(self, name: str, stock: str) -> tuple[int, Layout] | None:
        """The stored variant of ``name`` for ``stock``: (its version, the layout), or None."""
        version, raw = await self.redis.hmget(self.keys.layout(name, stock), ["version", "document"])
        if raw is None or version is None:
            return None
        return int(version), decode_variant(raw, name, int(version))

    async def remove(self, name: str, by: str) -> tuple[bool, list[str]]:
        """Remove every variant of ``name`` and the rules that pick it: (removed, the rules removed)."""
        stored = await self.get(name)
        stocks = stored.stocks if stored else ()
        return await self.scripts.run(specs.RM.call(self.keys, name, by, self.events_maxlen, stocks))

    async def rules(self) -> dict[str, str]:
        raw = await self.redis.hgetall(self.keys.layout_rules)
        return {_text(r): _text(n) for r, n in sorted(raw.items())}

    async def rules_for(self, name: str) -> list[str]:
        """The rules ("field=value") that pick ``name``."""
        return [rule for rule, picked in (await self.rules()).items() if picked == name]

    async def set_rule(self, rule: str, name: str, by: str) -> int:
        """``rule`` ("field=value") picks ``name`` ("" removes the rule). 1 changed, 0 no change, -1 no such layout."""
        return await self.scripts.run(specs.RULE.call(self.keys, rule, name, by, self.events_maxlen))

    async def version(self) -> int:
        raw = await self.redis.get(self.keys.layouts_version)
        return int(raw or 0)

    async def printer_stocks(self) -> dict[str, str]:
        """The stock each live printer of the venue has loaded, as its heartbeat reports it (``health.stock``)."""
        names = sorted(_text(n) for n in await self.redis.hkeys(self.venue_keys.printers))
        if not names:
            return {}
        healths = await self.redis.mget([self.venue_keys.health(n) for n in names])
        found: dict[str, str] = {}
        for name, raw in zip(names, healths, strict=True):
            if raw is None:
                continue  # no heartbeat for a while: not printing now (it meets the layouts when it comes back)
            try:
                health = json.loads(raw)
            except ValueError:
                continue
            if (
                isinstance(health, Mapping)
                and isinstance(health.get("stock"), str)
                and health.get("state") != "stopped"
            ):
                found[name] = health["stock"]
        return found


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
