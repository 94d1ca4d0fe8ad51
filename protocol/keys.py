"""Every Redis key of a venue, from one place.

All keys of a venue carry the venue in a hash tag (``badge:{expo-2026}:...``), so on Redis Cluster they live in one
slot and every multi-key script is legal. Nothing else in the code spells a key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

from protocol.codec import dec, enc

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

    @property
    def printed(self) -> str:
        """Stream: the printed record, one entry per confirmed print (protocol/printed.py), written by ``confirm``
        in its atomic step while any consumer is registered, deleted once every consumer has taken it."""
        return self.prefix + "printed"

    @property
    def printed_consumers(self) -> str:
        """Hash: each consumer of the printed record -> the id of the last entry it has taken."""
        return self.prefix + "printed:consumers"

    @property
    def minutes(self) -> str:
        """Hash: the event day's per-minute counts (arrivals per zone, prints per printer), written by ``confirm`` and
        the hand-over in their atomic steps (``count_print`` in prelude.lua), read by eventday/counts.py."""
        return self.prefix + "minutes"

    def done(self, job_id: str) -> str:
        return f"{self.prefix}done:{job_id}"

    def owned(self, token: str) -> str:
        """The ids of the jobs an intake token created (the intake counts its outstanding ones here)."""
        return f"{self.prefix}owned:{token}"

    @property
    def groups(self) -> str:
        """List: the groups of jobs (a box of pre-printed badges) waiting for a printer to claim one whole; new on the
        left, the next claimed from the right, a group handed back whole pushed on the right (claimed next)."""
        return self.prefix + "groups"

    def group(self, group_id: str) -> str:
        """Hash: one group: who may claim it (``printers``), its state, who holds it, its continuation label."""
        return f"{self.prefix}group:{group_id}"

    def group_queue(self, group_id: str) -> str:
        """List: a waiting group's jobs, in print order from the right (as every queue)."""
        return f"{self.prefix}group:{group_id}:q"

    def group_held(self, printer: str) -> str:
        """List: the jobs left of the group a printer claimed, the next on the right; ``take`` serves it after the
        printer's pinned queue and the pool. Never in the pinned index: no peer steals a job of a claimed group."""
        return f"{self.prefix}gq:{printer}"

    def group_claim(self, printer: str) -> str:
        """String: the id of the group a printer claimed (the group its ``gq`` holds the rest of)."""
        return f"{self.prefix}gclaim:{printer}"


class PrinterKeys(NamedTuple):
    """One printer's name and keys, encoded once: the hot path names them in every call."""

    name: bytes
    inflight: bytes
    queue: bytes
    control: bytes
    health: bytes
    group_held: bytes
    group_claim: bytes


class EncodedKeys:
    """A venue's keys as the scripts are sent them (bytes), built once from ``Keys``.

    The pull loop names the same few keys in every call: encoding them once per venue and printer, and a job's keys
    as a prefix plus the encoded id, keeps string building off the hot path (bench/hot_path.py).
    """

    def __init__(self, keys: Keys) -> None:
        self.keys = keys
        self.pool, self.events, self.dlq = enc(keys.pool), enc(keys.events), enc(keys.dlq)
        self.stats, self.pinned, self.hb = enc(keys.stats), enc(keys.pinned), enc(keys.hb)
        self.printers, self.sweep_lease = enc(keys.printers), enc(keys.sweep_lease)
        self.printed, self.printed_consumers = enc(keys.printed), enc(keys.printed_consumers)
        self.minutes = enc(keys.minutes)
        self._job_prefix, self._done_prefix = enc(keys.job("")), enc(keys.done(""))
        self._owned_prefix = enc(keys.owned(""))
        self.groups = enc(keys.groups)
        self._printer_keys: dict[str, PrinterKeys] = {}

    def job(self, job_id: bytes) -> bytes:
        return self._job_prefix + job_id

    def done(self, job_id: bytes) -> bytes:
        return self._done_prefix + job_id

    def owned(self, token: bytes) -> bytes:
        return self._owned_prefix + token

    def group(self, group_id: bytes) -> bytes:
        return enc(self.keys.group(dec(group_id)))

    def group_queue(self, group_id: bytes) -> bytes:
        return enc(self.keys.group_queue(dec(group_id)))

    def printer(self, name: str) -> PrinterKeys:
        mine = self._printer_keys.get(name)
        if mine is None:
            k = self.keys
            mine = PrinterKeys(
                enc(name),
                enc(k.inflight(name)),
                enc(k.queue(name)),
                enc(k.control(name)),
                enc(k.health(name)),
                enc(k.group_held(name)),
                enc(k.group_claim(name)),
            )
            if len(self._printer_keys) < 1024:  # a venue has tens of printers; a typo loop must not grow it forever
                self._printer_keys[name] = mine
        return mine


def pinned_member(printer: str, job_id: str) -> str:
    """The member of ``Keys.pinned`` for a job waiting in ``q:<printer>`` (the scripts build the same string)."""
    return f"{printer}|{job_id}"


def split_pinned_member(member: str) -> tuple[str, str]:
    """(printer, job id) of a ``Keys.pinned`` member."""
    printer, _, job_id = member.partition("|")
    return printer, job_id
