"""The kiosk's word on the wait: when its zone's expected wait (eventday/counts.py) passes ``kiosk.say_wait_after``
minutes, a queued badge's answer says about how long. Read at most once per ``CACHE_S`` per venue, however many
kiosks follow their badges once a second."""

from __future__ import annotations

import time

from aiohttp import web

from eventday.counts import zone_waits
from intake.context import INTAKE
from intake.tokens import Token

#: How long one read of the zones' waits answers every kiosk: a wait moves by the minute, kiosks ask every second.
CACHE_S = 2.0
_read: dict[str, tuple[float, dict[str, float | None]]] = {}  # venue -> (monotonic time read, zone -> wait)


async def kiosk_wait(request: web.Request, token: Token) -> int | None:
    """About how many minutes a badge of this kiosk's zone waits, when that is over the venue's threshold; else
    None (no wait worth saying, or no rate to say it by)."""
    intake = request.app[INTAKE]
    venue = intake.config.venue
    now = time.monotonic()
    read = _read.get(venue)
    if read is None or now - read[0] >= CACHE_S:
        read = _read[venue] = (now, {w.zone: w.wait_minutes for w in await zone_waits(intake.redis, venue)})
    zone = intake.config.zone_name_of(token.name, token.zone) or "-"  # "-": the badges of no zone
    wait = read[1].get(zone)
    if wait is None or wait <= intake.config.kiosk.say_wait_after:
        return None
    return max(1, round(wait))
