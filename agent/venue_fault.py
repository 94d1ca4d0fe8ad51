"""Redis errors that retrying cannot fix (a venue fault): named, backed off, logged once per interval.

A key of the wrong type (``SET badge:{v}:pool oops``), a user without a permission, a script that errors, the
functions library not loaded (or only an older version of it, for a user who may not load it): Redis
answers at once, every time, so the pull loop's usual "wait until Redis answers PING, then go again" turns into a
busy loop (a core per agent, a warning per try, Redis flooded). Such an error is a fault of the venue's data or
setup that a person must fix; until then the agent waits longer and longer between tries (up to ``cap``), says
so once per ``log_every``, and reports the fault's name in its health (``/healthz``, ``status``, the board).
"""

from __future__ import annotations

import logging
import time

from redis.exceptions import ReadOnlyError, RedisError, ResponseError

from core.logs import kv, shown
from protocol.scripts import LibraryMissing

log = logging.getLogger("agent.venue_fault")

#: Error replies that do clear by themselves (a failover, a replica loading, a script running long): not a fault.
_TRANSIENT = ("READONLY", "LOADING", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "BUSY", "NOSCRIPT", "MOVED", "ASK")


def venue_fault_name(exc: BaseException) -> str | None:
    """A short name for an error retrying cannot fix (``wrong_type``, ``no_permission``, ...); None for the rest."""
    if not isinstance(exc, ResponseError) or isinstance(exc, ReadOnlyError):
        return None
    if isinstance(exc, LibraryMissing):
        return "library_missing"  # its text names the command an admin runs
    text = str(exc)
    # A script's error carries the command's own code after its prefix ("... script: WRONGTYPE ..." or first).
    if "WRONGTYPE" in text:
        return "wrong_type"
    if text.startswith("NOPERM") or "NOPERM" in text:
        return "no_permission"
    if text.startswith(_TRANSIENT):
        return None
    if text.startswith("OOM"):
        return "out_of_memory"
    return "redis_refused"


class VenueFaultBackoff:
    """Backoff and once-per-interval logging for one loop that keeps meeting a venue fault."""

    def __init__(self, first: float = 0.5, cap: float = 30.0, log_every: float = 30.0) -> None:
        self.first = first
        self.cap = cap
        self.log_every = log_every
        self.delay = 0.0
        self.name: str | None = None
        self.detail = ""
        self._last_failure = 0.0
        self._last_log = 0.0
        self._since_log = 0

    def failed(self, name: str, exc: RedisError) -> float:
        """Record one failure; returns how long to wait before the next try."""
        now = time.monotonic()
        if not self.active(now):
            self.delay = 0.0  # a new fault after a quiet spell starts from the short wait again
        self.delay = min(self.cap, max(self.first, self.delay * 2))
        self.name, self.detail = name, shown(exc)
        self._last_failure = now
        self._since_log += 1
        if now - self._last_log >= self.log_every:
            log.error(
                "venue fault in Redis: fix it, the agent retries with backoff",
                extra=kv(fault=name, error=self.detail, failures=self._since_log, next_try_s=self.delay),
            )
            self._last_log, self._since_log = now, 0
        return self.delay

    def active(self, now: float | None = None) -> bool:
        """True while failures keep coming (within two waits of the last one)."""
        if self.name is None:
            return False
        return (time.monotonic() if now is None else now) - self._last_failure <= 2 * self.delay + 1.0

    def describe(self) -> str:
        return f"venue fault in Redis ({self.name}): {self.detail}"

    def clear(self) -> None:
        """A step that met the fault succeeded: it is fixed (said once)."""
        if self.name is not None:
            log.warning("venue fault in Redis cleared", extra=kv(fault=self.name))
        self.name, self.delay, self._last_log, self._since_log = None, 0.0, 0.0, 0
