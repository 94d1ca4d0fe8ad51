"""One spec per Lua script of the pretix sync (``pretix_*.lua``, functions of the venue's library, as
protocol/specs.py does for the protocol's): the only place each script's KEYS and ARGV are put in order."""

from __future__ import annotations

from typing import Any, NamedTuple

from protocol.codec import dec, enc
from protocol.keys import Keys
from protocol.specs import ScriptCall, Spec


class Lease(NamedTuple):
    held: bool
    #: not held: who holds it, and for how many more ms
    holder: str = ""
    ms_left: int = 0


class LeaseSpec(Spec[Lease]):
    name = "pretix_lease"

    def call(self, k: Keys, me: str, lease_ms: int) -> ScriptCall[Lease]:
        return (self, [enc(k.pretix_sender)], [enc(me), lease_ms])

    def parse(self, reply: Any) -> Lease:
        if int(reply[0]) == 1:
            return Lease(True)
        return Lease(False, dec(reply[1]), int(reply[2]))


class SentSpec(Spec[bool]):
    name = "pretix_sent"

    def call(self, k: Keys, me: str, entry_id: str) -> ScriptCall[bool]:
        return (self, [enc(k.pretix_sender), enc(k.pretix_outbox)], [enc(me), enc(entry_id)])

    def parse(self, reply: Any) -> bool:
        return int(reply) == 1


LEASE = LeaseSpec()
SENT = SentSpec()
SPECS: tuple[Spec[Any], ...] = (LEASE, SENT)
