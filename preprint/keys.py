"""The pre-print runs' keys, under the venue's hash tag beside the attendee list's (attendees/keys.py).

``P preprint:runs`` (set) the run names. ``P preprint:run:<run>`` (hash) one run: name, created_ms, sort, box_size,
ticket_types (JSON list), pickup, layout_versions (JSON ``{layout: version}`` when planned), state, total, boxes, mode.
``P preprint:run:<run>:box:<n>`` (hash, n from 1) one box: number, first and last (the display names of its first
and last badge), count; ``...:box:<n>:codes`` (list) its attendee codes in print order. ``P preprint:run:<run>:voids``
(hash) code -> JSON ``{box, name, reason, ms}``: the badges of the run staff must pull from their boxes.

On the attendee's hash (``att:<code>``): ``preprint`` (JSON ``{run, box, layout, layout_version, fields_hash}``),
and ``bs``, the pre-printed badge's state (``preprinted``, ``handed_over``, ``void``; absent: planned, or none).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from protocol.keys import Keys

#: A run's name: it is part of key names and of a box's label on paper.
RUN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")

#: The attendee hash's field holding where their pre-printed badge is (JSON).
ATTENDEE_FIELD = "preprint"
#: The attendee hash's field holding the pre-printed badge's state.
BADGE_STATE_FIELD = "bs"


class RunState:
    """A run's ``state``."""

    PLANNED = "planned"
    PRINTING = "printing"
    PRINTED = "printed"
    #: A PDF run an admin said is printed (``preprint done``).
    DONE = "done"


class BadgeState:
    """The values of the attendee's ``bs`` field."""

    PREPRINTED = "preprinted"
    HANDED_OVER = "handed_over"
    VOID = "void"


class Mode:
    POOL = "pool"
    PDF = "pdf"
    NONE = ""


def preprint_job_id(job_id: str) -> str:
    """The job id of an attendee's pre-printed badge: its own, beside the attendee's badge job (``job_id``), which
    stays free for a badge printed at the door (a void one's replacement): that one is then a first print, an arrival,
    never a reprint of the boxed one."""
    return f"{job_id}:pp"


def run_of(record: str) -> str:
    """The run an attendee's ``preprint`` field names ("" for none, or one that cannot be read)."""
    if not record:
        return ""
    try:
        found = json.loads(record).get("run")
    except (ValueError, AttributeError):
        return ""
    return found if isinstance(found, str) else ""


@dataclass(frozen=True)
class PreprintKeys:
    venue: str

    @property
    def prefix(self) -> str:
        return Keys(self.venue).prefix

    @property
    def runs(self) -> str:
        return self.prefix + "preprint:runs"

    def run(self, name: str) -> str:
        return f"{self.prefix}preprint:run:{name}"

    def box(self, name: str, number: int) -> str:
        return f"{self.prefix}preprint:run:{name}:box:{number}"

    def box_codes(self, name: str, number: int) -> str:
        return f"{self.prefix}preprint:run:{name}:box:{number}:codes"

    @property
    def pattern(self) -> str:
        """Every key of every run (``attendees purge`` removes them: a box holds attendee codes and names)."""
        return self.prefix + "preprint:*"

    def voids(self, name: str) -> str:
        return f"{self.prefix}preprint:run:{name}:voids"
