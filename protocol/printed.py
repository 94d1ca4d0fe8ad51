"""The printed record: one entry per confirmed print, for whatever must hear of it outside the venue's printers.

``confirm`` (confirm.lua) adds an entry to ``P printed`` (a stream) in the same atomic step that marks a badge
printed, while any consumer is registered in ``P printed:consumers``: no confirmed print can be missed by a consumer,
whatever happens to the process that reads it, and the events stream's cap does not matter. An entry holds the
``kind`` (``badge`` for a job's first confirmed print, ``reprint`` for a later round's), the job, the print's epoch,
the printer, where it stands, the server time, the layout it was drawn with and whose word the print is on
(``confirmed_by``: ``device`` or ``spooler``).

Each consumer (a feature's reader of the prints, such as a ticketing system's outbox) registers itself with ``join``
before the prints it wants can happen, reads the entries after its cursor (``after``), and moves its cursor past what
it has taken (``took``: printed_took.lua; or prelude.lua's ``printed_took`` inside a script of its own that acts on
the entries in the same step); an entry is deleted once every consumer has taken it. The protocol names none of them.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from redis.asyncio import Redis

from protocol import specs
from protocol.codec import dec, enc
from protocol.keys import EncodedKeys, Keys
from protocol.scripts import Scripts

#: A consumer's cursor before it has taken anything: every entry of the record comes after it.
START = "0-0"


class PrintedEntry(NamedTuple):
    id: str
    kind: str
    job_id: str
    epoch: str
    printer: str
    location: str
    printed_ms: int
    layout: str
    layout_version: str
    #: Whose word the print is on: ``device`` or ``spooler`` (confirm.lua); "" where the agent did not say.
    confirmed_by: str = ""

    @classmethod
    def parse(cls, entry_id: Any, raw: dict[Any, Any]) -> PrintedEntry:
        values = {dec(k): dec(v) for k, v in raw.items()}
        try:
            printed_ms = int(values.get("printed_ms") or 0)
        except ValueError:
            printed_ms = 0
        return cls(
            dec(entry_id),
            values.get("kind", ""),
            values.get("job_id", ""),
            values.get("epoch", ""),
            values.get("printer", ""),
            values.get("location", ""),
            printed_ms,
            values.get("layout", ""),
            values.get("layout_version", ""),
            values.get("confirmed_by", ""),
        )


class PrintedRecord:
    """One venue's printed record on one Redis client."""

    def __init__(self, redis: Redis, venue: str, scripts: Scripts | None = None) -> None:
        self.redis = redis
        self.keys = Keys(venue)
        self.scripts = scripts or Scripts(redis)

    async def join(self, consumer: str) -> bool:
        """Register ``consumer`` (its cursor at the start) unless it is already; True when it was new. From now on
        every confirm writes an entry it will read."""
        return bool(await self.redis.hsetnx(enc(self.keys.printed_consumers), enc(consumer), START))

    async def cursor(self, consumer: str) -> str | None:
        """The id of the last entry ``consumer`` has taken; None when it is not registered."""
        raw = await self.redis.hget(enc(self.keys.printed_consumers), enc(consumer))
        return None if raw is None else dec(raw)

    async def after(self, consumer: str, count: int) -> list[PrintedEntry]:
        """The (at most ``count``) oldest entries ``consumer`` has not taken yet; none when it is not registered."""
        cursor = await self.cursor(consumer)
        if cursor is None:
            return []
        raw: list[tuple[bytes, dict[bytes, bytes]]] = await self.redis.xrange(  # type: ignore[assignment]
            enc(self.keys.printed), min=f"({cursor}", count=count
        )
        return [PrintedEntry.parse(entry_id, fields) for entry_id, fields in raw]

    async def took(self, consumer: str, entry_id: str) -> bool:
        """``consumer`` has taken every entry up to ``entry_id``: True when its cursor moved (False when it is not
        registered, or the id is not after its cursor). Entries every consumer has taken are deleted."""
        return await self.scripts.run(specs.PRINTED_TOOK.call(EncodedKeys(self.keys), consumer, entry_id))
