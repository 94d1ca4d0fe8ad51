"""The attendee list's keys, under the venue's hash tag beside the protocol's (protocol/keys.py).

``P att:<code>`` (hash) is one attendee, keyed by the ticket code it is looked up by. The search index (see
prelude.lua): ``P attendees:terms`` (sorted set, every score 0) holds each distinct word once, for prefix ranges;
``P attendees:p:<term>`` (string) the short refs of the attendees that have that word; ``P attendees:exact``
(hash) the same for whole terms (order codes, e-mails); ``P attendees:refs`` (hash) maps a ref to its code and
the terms it is indexed under (``<code> <term>...``).
``P attendees:counts`` (hash) holds the list's counts (and the refs' counter); ``P attendees:badging`` (hash)
job id -> ticket type of the attendees' badges not yet counted as checked in;
``P attendees:key`` the secret that makes a job id out of a code no one may read back (``job_id_for``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from protocol.keys import Keys

#: What a ticket's barcode may hold: printable ASCII without spaces (pretix secrets, Eventbrite barcodes, UUIDs).
CODE_RE = re.compile(r"[!-~]{1,128}")


@dataclass(frozen=True)
class AttendeeKeys:
    venue: str

    @property
    def prefix(self) -> str:
        return Keys(self.venue).prefix

    def attendee(self, code: str) -> str:
        return f"{self.prefix}att:{code}"

    @property
    def attendee_pattern(self) -> str:
        """SCAN MATCH pattern of every attendee key (glob characters in the venue cannot occur: VENUE_RE)."""
        return f"{self.prefix}att:*"

    @property
    def terms(self) -> str:
        return self.prefix + "attendees:terms"

    @property
    def exact(self) -> str:
        return self.prefix + "attendees:exact"

    def posting(self, term: str) -> str:
        return f"{self.prefix}attendees:p:{term}"

    @property
    def posting_pattern(self) -> str:
        return f"{self.prefix}attendees:p:*"

    @property
    def refs(self) -> str:
        return self.prefix + "attendees:refs"

    @property
    def counts(self) -> str:
        return self.prefix + "attendees:counts"

    @property
    def badging(self) -> str:
        return self.prefix + "attendees:badging"

    @property
    def secret(self) -> str:
        return self.prefix + "attendees:key"
