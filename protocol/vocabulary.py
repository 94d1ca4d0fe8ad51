"""The words staff read for reprints, cancels and duplicates, in one place.

``status``, ``job``, the board, both /metrics (agent and intake) and the demo's summary all say these, so a desk
sees the same three ideas under the same names everywhere:

- an intended reprint (reprint.lua): never a duplicate;
- a badge that *may exist twice* (``maybe_duplicate``): an earlier attempt's outcome was unknown, staff look at the
  printer and location named;
- a badge *printed twice* (``duplicate_print``): a second copy was confirmed; staff pull one.

The counts come from the venue's stats hash (see docs/design.md), keyed by the field names used there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

REPRINTS = "reprints"
INTENDED = "(intended)"
# Two different things are cancelled at a venue, and a bare "cancelled 0" beside a cancelled ticket reads as a
# mistake: jobs withdrawn before printing (``badge-agent cancel``, the stats hash) and tickets the attendee list
# marks cancelled (by its ticketing system or an import). Each is named for what it counts.
CANCELLED = "jobs cancelled"
TICKETS_CANCELLED = "tickets cancelled"
MAY_EXIST_TWICE = "may exist twice"
PRINTED_TWICE = "printed twice"

#: The stats-hash field behind each staff count, and the words staff read for it (the order they are shown in).
STAFF_COUNTS: tuple[tuple[str, str, str], ...] = (
    # (key in JSON and metrics, stats-hash field, words)
    ("reprints", "reprint", f"{REPRINTS} {INTENDED}"),
    ("cancelled", "cancelled", CANCELLED),
    ("may_exist_twice", "maybe_duplicate", MAY_EXIST_TWICE),
    ("printed_twice", "duplicate_print", PRINTED_TWICE),
)

#: Event names staff must act on, and the words for each.
DUPLICATE_WORDS = {"maybe_duplicate": MAY_EXIST_TWICE, "duplicate_print": PRINTED_TWICE}

#: What the board labels its counts and duplicate lines with (sent in each snapshot, so the page holds no words of
#: its own for these).
BOARD_WORDS = {
    **{key: words for key, _, words in STAFF_COUNTS},
    **DUPLICATE_WORDS,
    "tickets_cancelled": TICKETS_CANCELLED,
}


@dataclass(frozen=True)
class StaffCounts:
    """The four counts staff read, taken from the venue's stats hash."""

    reprints: int = 0
    cancelled: int = 0
    may_exist_twice: int = 0
    printed_twice: int = 0

    @classmethod
    def from_stats(cls, counts: Mapping[str, int]) -> StaffCounts:
        return cls(**{key: int(counts.get(field, 0)) for key, field, _ in STAFF_COUNTS})

    @property
    def to_find(self) -> int:
        """Badges staff should go and look for: those that may exist twice plus those printed twice."""
        return self.may_exist_twice + self.printed_twice

    def as_dict(self) -> dict[str, int]:
        return {key: getattr(self, key) for key, _, _ in STAFF_COUNTS}

    def line(self) -> str:
        """One line: ``reprints 1 (intended) · jobs cancelled 0 · may exist twice 2 · printed twice 0``."""
        return " · ".join(count_words(key, getattr(self, key)) for key, _, _ in STAFF_COUNTS)


def count_words(key: str, value: int) -> str:
    """``reprints 3 (intended)``, ``may exist twice 2``: the words with the number where staff read it."""
    words = {k: w for k, _, w in STAFF_COUNTS}[key]
    if words.endswith(INTENDED):
        return f"{REPRINTS} {value} {INTENDED}"
    return f"{words} {value}"


def where_to_look(job: Mapping[str, Any]) -> str:
    """Where the other copy of a flagged job may be: printer and location, from the job's hash (str values)."""
    return str(job.get("maybe_printed_where") or "") or printed_where(job)


def printed_where(job: Mapping[str, Any]) -> str:
    """The printer (and its location) that confirmed the job's copy; after a reprint, the round before's."""
    printer, location = str(job.get("printer") or ""), str(job.get("printed_at") or "")
    if not printer:  # a reprint round not printed yet: reprint.lua kept where the last copy came out
        printer, location = str(job.get("last_printer") or ""), str(job.get("last_printed_at") or "")
    if printer and location:
        return f"{printer} ({location})"
    return printer or "unknown printer"


def flag_line(job_id: str, job: Mapping[str, Any]) -> str | None:
    """What staff should do about one job, or None when it is not flagged (an intended reprint never is)."""
    if str(job.get("duplicate_print") or "") == "1":
        return f"badge {job_id} {PRINTED_TWICE} — pull one; the first came out at {printed_where(job)}"
    if str(job.get("maybe_duplicate") or "") == "1":
        return f"badge {job_id} {MAY_EXIST_TWICE} — look at {where_to_look(job)}"
    return None


def job_lines(job_id: str, job: Mapping[str, Any]) -> list[str]:
    """The staff words for one job (``job``): its intended reprints and whether a copy may be lying somewhere."""
    lines = []
    reprints = str(job.get("reprints") or "")
    if reprints.isdigit() and int(reprints):  # anything else in the field is not a count staff can use
        lines.append(count_words("reprints", int(reprints)))
    flag = flag_line(job_id, job)
    if flag:
        lines.append(flag)
    return lines


def staff_family(counts: StaffCounts) -> Metric:
    """The staff counts as one metric family (core/exposition.py writes it), each ``what`` label a key of
    STAFF_COUNTS, its words in the HELP."""
    from prometheus_client.core import GaugeMetricFamily

    help_words = "; ".join(f"{key} = {words}" for key, _, words in STAFF_COUNTS)
    family = GaugeMetricFamily("badge_venue_staff", f"Counts staff act on: {help_words}.", labels=["what"])
    for key, value in counts.as_dict().items():
        family.add_metric([key], value)
    return family
