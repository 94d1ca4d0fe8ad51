"""Where the printer's idle time between two badges goes: stamps on the driver, matched with the emulator's log.

Stamps are ``time.time()``, the clock the emulator's print log uses (same machine, separate processes). For each
pair of consecutive labels, from the first one coming out to the next one going under the head:

* ``detect``: label out -> the driver's ``print()`` returns (it has the printer's evidence of that label);
* ``agent``: -> the next ``print()`` call (confirm + take, begin, journal and everything else in the pull loop),
  of which ``draw`` is drawing the next badge;
* ``check``: -> the badge's first byte is written (the driver's pre-send status check);
* ``send``: -> the label goes under the head (the write, and the printer receiving and parsing the badge).
"""

from __future__ import annotations

import itertools
import time
from typing import Any

from bench.common import percentile
from drivers.base import Badge, Driver, PrintResult

BADGE_BYTES = 200  # writes longer than this are a badge, shorter ones status queries
PARTS = ("detect", "agent", "draw", "check", "send")


class GapStamps:
    """Wraps one driver's ``print``, ``render`` and its transport's ``write`` to stamp each badge's way through."""

    def __init__(self, driver: Driver) -> None:
        self.calls: list[float] = []  # print() entered
        self.returns: list[float] = []  # print() returned
        self.draws: list[tuple[float, float]] = []  # render() start, end
        self.writes: list[float] = []  # first badge-sized write of each print()
        transport = driver.transport  # type: ignore[attr-defined]
        real_print, real_render, real_write = driver.print, driver.render, transport.write

        async def print_(data: bytes, badge: Badge, timeout: float) -> PrintResult:
            self.calls.append(time.time())
            try:
                return await real_print(data, badge, timeout)
            finally:
                self.returns.append(time.time())

        def render(badge: Badge) -> bytes:
            start = time.time()
            try:
                return real_render(badge)
            finally:
                self.draws.append((start, time.time()))

        async def write(data: bytes) -> None:
            if len(data) > BADGE_BYTES and len(self.writes) < len(self.calls):
                self.writes.append(time.time())
            await real_write(data)

        driver.print = print_  # type: ignore[method-assign]
        driver.render = render  # type: ignore[method-assign]
        transport.write = write

    def breakdown(self, labels: list[dict[str, Any]]) -> dict[str, float]:
        """p50 ms of each part over the gaps between ``labels`` (the emulator's complete labels, in order)."""
        parts = self.parts(labels)
        return {p: percentile([v * 1000 for v in vs], 50) for p, vs in parts.items()}

    def parts(self, labels: list[dict[str, Any]]) -> dict[str, list[float]]:
        """Seconds of each part, gap by gap, between ``labels``.

        Each label is matched to the print() call whose badge write came last before it went under the head.
        """
        parts: dict[str, list[float]] = {p: [] for p in PARTS}
        for out, nxt in itertools.pairwise(labels):
            i = _last_before(self.writes, nxt["started_t"])
            if i is None or i == 0 or i >= len(self.calls) or i - 1 >= len(self.returns):
                continue
            returned, called, written = self.returns[i - 1], self.calls[i], self.writes[i]
            draw = sum(e - s for s, e in self.draws if returned <= s and e <= called)
            parts["detect"].append(returned - out["t"])
            parts["agent"].append(called - returned)
            parts["draw"].append(draw)
            parts["check"].append(written - called)
            parts["send"].append(nxt["started_t"] - written)
        return parts


def _last_before(stamps: list[float], t: float) -> int | None:
    found = None
    for i, s in enumerate(stamps):
        if s <= t:
            found = i
    return found
