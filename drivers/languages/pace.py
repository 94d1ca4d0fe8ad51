"""How long to wait before asking a printer again whether the badge it holds is done.

A fixed poll costs up to one interval of idle printer per badge. The pace learns this printer's recent print
times (send -> confirmed) and asks slowly while the badge is surely still printing, then often from shortly
before the expected end, so the confirmation lands a few milliseconds after the label is out.
"""

from __future__ import annotations

import statistics
from collections import deque

#: Poll interval near the expected end of a label: one status round trip on a LAN costs about a millisecond, so
#: the confirmation lands 1-3 ms after the label is out, for a dozen or two queries a label.
FAST = 0.002
#: Start fast polling this long before the learned print time (covers jitter between badges).
LEAD = 0.05
#: Recent print times kept: enough to ride out one odd badge, few enough to follow a slower roll or a new head.
KEEP = 8


class CompletionPace:
    def __init__(self, slow: float) -> None:
        self.slow = slow
        self._recent: deque[float] = deque(maxlen=KEEP)

    @property
    def expected(self) -> float | None:
        """The median of the recent print times, or None before the first confirmed badge."""
        return statistics.median(self._recent) if self._recent else None

    def learn(self, took: float) -> None:
        self._recent.append(took)

    def wait(self, elapsed: float) -> float:
        """Seconds to sleep before the next status query, ``elapsed`` seconds after the badge was sent."""
        expected = self.expected
        if expected is None:
            return FAST  # nothing learned yet: the first badge pays in queries, not in idle printer time
        until_fast = expected - LEAD - elapsed
        if until_fast <= 0:
            return FAST
        return min(self.slow, until_fast)
