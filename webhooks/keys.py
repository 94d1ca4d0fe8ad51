"""The webhooks' keys, under the venue's hash tag beside the protocol's (protocol/keys.py).

``P webhooks`` (hash) name -> the webhook as JSON (hooks.py; never its secret, which stays in a file on the sender's
machine: every venue user may read the venue's keys); ``P webhooks:pending:<name>`` (hash) delivery id -> the
delivery (its data, tries, first and next try) and ``P webhooks:q:<name>`` (zset) delivery id -> its place in the
order things happened: the deliveries of one webhook not yet answered with a 2xx; ``P webhooks:gaveup:<name>``
(list, capped) deliveries that kept failing past the retry window; ``P webhooks:events`` (string) the id of the last
entry of the events stream read for dead letters; ``P webhooks:sender`` the lease of the one sender (a string with an
expiry).
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.keys import Keys

#: The webhooks' name among the printed record's consumers.
CONSUMER = "webhooks"


@dataclass(frozen=True)
class WebhookKeys:
    venue: str

    @property
    def venue_keys(self) -> Keys:
        return Keys(self.venue)

    @property
    def hooks(self) -> str:
        return self.venue_keys.prefix + "webhooks"

    @property
    def sender(self) -> str:
        return self.venue_keys.prefix + "webhooks:sender"

    @property
    def events_cursor(self) -> str:
        return self.venue_keys.prefix + "webhooks:events"

    def pending(self, name: str) -> str:
        return f"{self.venue_keys.prefix}webhooks:pending:{name}"

    def queue(self, name: str) -> str:
        return f"{self.venue_keys.prefix}webhooks:q:{name}"

    def gaveup(self, name: str) -> str:
        return f"{self.venue_keys.prefix}webhooks:gaveup:{name}"
