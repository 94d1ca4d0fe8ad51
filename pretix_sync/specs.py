"""One spec per Lua script of the pretix sync (``pretix_*.lua``, functions of the venue's library, as
protocol/specs.py does for the protocol's): the only place each script's KEYS and ARGV are put in order."""

from __future__ import annotations

from typing import Any, NamedTuple

from pretix_sync.keys import CONSUMER, PretixKeys
from protocol.codec import dec, enc
from protocol.specs import ScriptCall, Spec


class Lease(NamedTuple):
    held: bool
    #: not held: who holds it, and for how many more ms
    holder: str = ""
    ms_left: int = 0


class LeaseSpec(Spec[Lease]):
    name = "pretix_lease"

    def call(self, k: PretixKeys, me: str, lease_ms: int) -> ScriptCall[Lease]:
        return (self, [enc(k.sender)], [enc(me), lease_ms])

    def parse(self, reply: Any) -> Lease:
        if int(reply[0]) == 1:
            return Lease(True)
        return Lease(False, dec(reply[1]), int(reply[2]))


class SentSpec(Spec[bool]):
    name = "pretix_sent"

    def call(self, k: PretixKeys, me: str, entry_id: str) -> ScriptCall[bool]:
        return (self, [enc(k.sender), enc(k.outbox)], [enc(me), enc(entry_id)])

    def parse(self, reply: Any) -> bool:
        return int(reply) == 1


class Pumped(NamedTuple):
    #: entries of the printed record read (and taken)
    read: int
    #: of those, prints of pretix's attendees added to the outbox
    added: int


class PumpSpec(Spec[Pumped]):
    name = "pretix_pump"

    def call(self, k: PretixKeys, count: int) -> ScriptCall[Pumped]:
        v = k.venue_keys
        keys = [enc(v.printed_consumers), enc(v.printed), enc(k.jobs), enc(k.outbox)]
        return (self, keys, [enc(CONSUMER), count])

    def parse(self, reply: Any) -> Pumped:
        return Pumped(int(reply[0]), int(reply[1]))


LEASE = LeaseSpec()
PUMP = PumpSpec()
SENT = SentSpec()
SPECS: tuple[Spec[Any], ...] = (LEASE, SENT, PUMP)
