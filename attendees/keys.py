"""The attendee list's keys, under the venue's hash tag beside the protocol's (agent/protocol/keys.py).

``P att:<code>`` (hash) is one attendee, keyed by the ticket code it is looked up by; ``P attendees:index`` (sorted
set, every score 0) holds ``<term> NUL <code>`` for the search; ``P attendees:counts`` (hash) the list's counts;
``P attendees:badging`` (hash) job id -> ticket type of the attendees' badges not yet counted as checked in;
``P attendees:key`` the secret that makes a job id out of a code no one may read back (``job_id_for``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.protocol.keys import Keys

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
    def index(self) -> str:
        return self.prefix + "attendees:index"

    @property
    def counts(self) -> str:
        return self.prefix + "attendees:counts"

    @property
    def badging(self) -> str:
        return self.prefix + "attendees:badging"

    @property
    def secret(self) -> str:
        return self.prefix + "attendees:key"
