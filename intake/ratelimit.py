"""Per-token request rate: a token bucket in this process (each intake behind a proxy keeps its own)."""

from __future__ import annotations

import math
import time


class RateLimit:
    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.burst = rate, burst
        self._buckets: dict[str, tuple[float, float]] = {}  # token name -> (tokens left, monotonic time)

    def take(self, who: str) -> int:
        """0 when ``who`` may go ahead now, else the seconds to wait (for Retry-After, at least 1)."""
        now = time.monotonic()
        left, then = self._buckets.get(who, (float(self.burst), now))
        left = min(float(self.burst), left + (now - then) * self.rate)
        if left >= 1.0:
            self._buckets[who] = (left - 1.0, now)
            return 0
        self._buckets[who] = (left, now)
        return max(1, math.ceil((1.0 - left) / self.rate))
