"""Per-token (and per-address) request rate: a token bucket in this process (each intake behind a proxy keeps its
own)."""

from __future__ import annotations

import math
import time

#: Buckets kept before the full ones are dropped (a bucket per client address must not grow without end).
KEPT = 4096


class RateLimit:
    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self._buckets: dict[str, tuple[float, float]] = {}  # token name -> (tokens left, monotonic time)

    def _left(self, who: str, now: float) -> float:
        left, then = self._buckets.get(who, (float(self.burst), now))
        return min(float(self.burst), left + (now - then) * self.rate)

    def _wait(self, left: float) -> int:
        return max(1, math.ceil((1.0 - left) / self.rate))

    def take(self, who: str) -> int:
        """0 when ``who`` may go ahead now, else the seconds to wait (for Retry-After, at least 1)."""
        now = time.monotonic()
        left = self._left(who, now)
        if len(self._buckets) >= KEPT and who not in self._buckets:
            # A full bucket is as good as none: drop those, keeping the ones that still hold someone back.
            self._buckets = {k: v for k, v in self._buckets.items() if self._left(k, now) < self.burst}
        if left >= 1.0:
            self._buckets[who] = (left - 1.0, now)
            return 0
        self._buckets[who] = (left, now)
        return self._wait(left)

    def wait(self, who: str) -> int:
        """What ``take`` would answer, taking nothing: 0 when ``who`` has room now, else the seconds to wait."""
        left = self._left(who, time.monotonic())
        return 0 if left >= 1.0 else self._wait(left)
