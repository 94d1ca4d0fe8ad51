"""Every Redis key of a venue, from one place.

All keys of a venue carry the venue in a hash tag (``badge:{expo-2026}:...``), so on Redis Cluster they live in one
slot and every multi-key script is legal. Nothing else in the code spells a key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

VENUE_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
PRINTER_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
JOB_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")


@dataclass(frozen=True)
class Keys:
    venue: str

    @property
    def prefix(self) -> str:
        return f"badge:{{{self.venue}}}:"

    @property
    def pool(self) -> str:
        return self.prefix + "pool"

    @property
    def hb(self) -> str:
        return self.prefix + "hb"

    @property
    def events(self) -> str:
        return self.prefix + "events"

    @property
    def dlq(self) -> str:
        return self.prefix + "dlq"

    @property
    def stats(self) -> str:
        """Counters by transition (printed, dead, duplicate_print, ...), so ``status`` never scans job hashes."""
        return self.prefix + "stats"

    @property
    def printers(self) -> str:
        """Every printer that ever beat in this venue, so ``status`` still shows the dead ones."""
        return self.prefix + "printers"

    @property
    def pinned(self) -> str:
        """Index of every job waiting in a pinned queue: ``<printer>|<job id>`` -> its ``enqueued_ms`` (server time).

        The scripts that push to or pop from a ``q:<printer>`` update it in the same step, so it always holds exactly
        the jobs of all pinned queues: an idle agent finds the venue's oldest pinned job with one ZRANGE, not one read
        per peer. Printer names cannot contain ``|``, so the first ``|`` splits a member.
        """
        return self.prefix + "pinned"

    @property
    def sweep_lease(self) -> str:
        """Who sweeps for dead peers this interval (one sweeper per venue)."""
        return self.prefix + "sweep"

    def queue(self, printer: str) -> str:
        return f"{self.prefix}q:{printer}"

    def inflight(self, printer: str) -> str:
        return f"{self.prefix}inflight:{printer}"

    def health(self, printer: str) -> str:
        return f"{self.prefix}health:{printer}"

    def control(self, printer: str) -> str:
        """Operator orders to one agent (drain), read by its heartbeat."""
        return f"{self.prefix}ctl:{printer}"

    def job(self, job_id: str) -> str:
        return f"{self.prefix}job:{job_id}"

    def done(self, job_id: str) -> str:
        return f"{self.prefix}done:{job_id}"


def pinned_member(printer: str, job_id: str) -> str:
    """The member of ``Keys.pinned`` for a job waiting in ``q:<printer>`` (the scripts build the same string)."""
    return f"{printer}|{job_id}"


def split_pinned_member(member: str) -> tuple[str, str]:
    """(printer, job id) of a ``Keys.pinned`` member."""
    printer, _, job_id = member.partition("|")
    return printer, job_id
