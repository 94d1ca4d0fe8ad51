"""The pretix sync's keys, under the venue's hash tag beside the protocol's (protocol/keys.py).

``P pretix:jobs`` (hash) the job id of each attendee loaded from pretix -> its pretix position id (written by the
sync); ``P pretix:outbox`` (stream) confirmed prints of those jobs not yet told to pretix, moved there from the
printed record (protocol/printed.py) by ``pretix_pump.lua`` and deleted once pretix answered; ``P pretix:sender``
the lease of the one sync process that sends the outbox (a string with an expiry). Walk-ins that become pretix
orders (pretix_sync/walk_ins.py): ``P pretix:walk-in-products`` (string, JSON) the products a desk may choose,
written by the sync; ``P pretix:walk-ins`` (stream) walk-ins added at a desk waiting for their order (the intake
adds, the sync deletes once pretix made it or refused it); ``P pretix:walk-ins:failed`` (hash) code -> why pretix
refused a walk-in's order.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.keys import Keys

#: The pretix outbox's name among the printed record's consumers.
CONSUMER = "pretix"


@dataclass(frozen=True)
class PretixKeys:
    venue: str

    @property
    def venue_keys(self) -> Keys:
        return Keys(self.venue)

    @property
    def jobs(self) -> str:
        return self.venue_keys.prefix + "pretix:jobs"

    @property
    def outbox(self) -> str:
        return self.venue_keys.prefix + "pretix:outbox"

    @property
    def sender(self) -> str:
        return self.venue_keys.prefix + "pretix:sender"

    @property
    def walk_in_products(self) -> str:
        return self.venue_keys.prefix + "pretix:walk-in-products"

    @property
    def walk_ins(self) -> str:
        return self.venue_keys.prefix + "pretix:walk-ins"

    @property
    def walk_in_failed(self) -> str:
        return self.venue_keys.prefix + "pretix:walk-ins:failed"
