"""A roll change, as staff mark it (``badge-agent roll PRINTER --labels N``): the labels on the new roll and the
printer's prints ever at that moment, so labels left can be estimated for a printer that does not count them."""

from __future__ import annotations

import json
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import WatchError

from eventday import keys as day_keys
from protocol.codec import dec, enc
from protocol.keys import Keys

#: The most labels a roll may be said to hold: a typo (an extra zero or two) is refused rather than believed.
MAX_LABELS = 100_000


class RollError(ValueError):
    """A roll change that cannot be marked, in words for the operator."""


@dataclass(frozen=True)
class RollMark:
    printer: str
    labels: int
    printed: int  # the printer's prints ever at the change (``n|<printer>`` in ``minutes``)
    at_ms: int  # server time of the change


async def mark_roll(redis: Redis, venue: str, printer: str, labels: int) -> RollMark:
    """Record that ``printer`` got a new roll of ``labels`` labels now; raises ``RollError`` for a printer the venue
    has never seen or a count out of range."""
    if not 1 <= labels <= MAX_LABELS:
        raise RollError(f"--labels must be between 1 and {MAX_LABELS}, not {labels}")
    k = Keys(venue)
    if not await redis.hexists(enc(k.printers), enc(printer)):
        raise RollError(f"no printer named {printer!r} in venue {venue!r} (badge-agent status lists them)")
    minutes, counter = enc(k.minutes), enc("n|" + printer)
    while True:
        # Watched: a print confirmed between reading the counter and writing the mark would count against the new
        # roll twice (or not at all); then both are read again.
        async with redis.pipeline(transaction=True) as pipe:
            try:
                await pipe.watch(minutes)
                printed = int(dec(await pipe.hget(minutes, counter)) or 0)
                sec, usec = await pipe.time()
                at_ms = int(sec) * 1000 + int(usec) // 1000
                mark = {"labels": labels, "printed": printed, "at_ms": at_ms}
                pipe.multi()  # type: ignore[no-untyped-call]  # redis-py leaves it unannotated
                pipe.hset(enc(day_keys.rolls(venue)), enc(printer), json.dumps(mark))
                await pipe.execute()
            except WatchError:
                continue
        return RollMark(printer, labels, printed, at_ms)
