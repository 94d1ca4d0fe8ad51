"""A pre-print run's plan, without Redis: who is in it, in what order, in which box.

Names are ordered by the Unicode Collation Algorithm (pyuca, the default table DUCET), never by code points: an
accent or a letter's case only breaks a tie between names that are otherwise the same (``muller``, ``Muller`` and
``Müller`` sit together), ``Ł`` sorts after ``L`` and ``Ö`` beside ``O``, and each script keeps the place DUCET gives
it: Latin, then Greek, then Cyrillic, the other alphabets, Hangul, and the Han characters last (by radical and stroke
count as Unicode orders them, not by reading). ``Mueller`` is a different spelling from ``Müller`` and sorts where
its letters say (before ``Muller``): the default table has no German phone-book rule.

The family name is the name part the source gave (``fields.family_name``: pretix's name parts, Eventbrite's last
name, a mapped column); otherwise the rule ``family_of`` states.
"""

from __future__ import annotations

import functools
import hashlib
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from core.errors import UserError

if TYPE_CHECKING:
    from attendees.store import Attendee

SortBy = Literal["family", "name", "company"]
SORTS: tuple[SortBy, ...] = ("family", "name", "company")
#: The pick-up place a kiosk names when the run does not say.
DEFAULT_PICKUP = "the help desk"
DEFAULT_BOX_SIZE = 200
MAX_BOX_SIZE = 100_000

#: Scripts whose names are written family name first (Chinese, Japanese, Korean).
_FAMILY_FIRST = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL")


@functools.cache
def _collator() -> object:
    import pyuca

    return pyuca.Collator()


def sort_key(text: str) -> tuple[int, ...]:
    """The UCA sort key of ``text`` (all levels: primary letters first, then accents, then case)."""
    key: tuple[int, ...] = _collator().sort_key(unicodedata.normalize("NFC", text))  # type: ignore[attr-defined]
    return key


def _family_first(name: str) -> bool:
    for char in name:
        if char.isalpha():
            return unicodedata.name(char, "").startswith(_FAMILY_FIRST)
    return False


def family_of(name: str, fields: dict[str, str]) -> tuple[str, str]:
    """(family name, given name) of an attendee.

    The source's parts when it gave them (``family_name``, ``given_name`` in the attendee's fields). Otherwise the
    name as written: in Chinese, Japanese and Korean, whose names start with the family name, the whole name (its
    order is the family name's); in every other script the last word is the family name and the words before it the
    given name ("Anna van der Berg" sorts under "Berg": give the parts where that is wrong).
    """
    family = (fields.get("family_name") or "").strip()
    if family:
        return family, (fields.get("given_name") or "").strip()
    words = name.split()
    if not words:
        return "", ""
    if _family_first(name):
        return " ".join(words), ""
    return words[-1], " ".join(words[:-1])


def fields_hash(name: str, company: str, role: str, fields: dict[str, str], ticket_type: str) -> str:
    """A short hash of what a badge prints: a later change of any of these makes a pre-printed badge void. The
    values are joined with a separator no printed text may hold (a control character: protocol/jobs.py)."""
    parts = [name, company, role, ticket_type, *(f"{k}\x1e{v}" for k, v in sorted(fields.items()))]
    return hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=8).hexdigest()


def attendee_fields_hash(attendee: Attendee) -> str:
    return fields_hash(
        attendee.shown_name, attendee.shown_company, attendee.role, attendee.shown_fields, attendee.ticket_type
    )


@dataclass(frozen=True)
class Entry:
    """One attendee of a plan: what it is sorted by and shown under on a box's label."""

    code: str
    #: What the box label shows (the family name; the whole name for ``--sort name``; the company).
    label: str
    key: tuple[tuple[int, ...], ...]
    version: str
    layout: str
    layout_version: int
    fields_hash: str


def entry_for(attendee: Attendee, sort: SortBy, layout: str, layout_version: int) -> Entry:
    name = attendee.shown_name
    family, given = family_of(name, attendee.shown_fields)
    # One collation key a person: the family name, a space, the given name (a space sorts before every letter, so
    # "Berg Anna" stays before "Bergmann Ada"); the ticket code breaks a tie, so the order never depends on the list.
    if sort == "family":
        label, text = family or name, f"{family} {given}".strip()
    elif sort == "name":
        label, text = name, name
    else:
        company = attendee.shown_company
        label, text = company or family or name, f"{company} {family} {given}".strip()
    return Entry(
        attendee.code, label, (sort_key(text), tuple(attendee.code.encode())), attendee.version, layout,
        layout_version, attendee_fields_hash(attendee),
    )  # fmt: skip


@dataclass(frozen=True)
class Box:
    number: int
    entries: tuple[Entry, ...]

    @property
    def first(self) -> str:
        return self.entries[0].label if self.entries else ""

    @property
    def last(self) -> str:
        return self.entries[-1].label if self.entries else ""

    @property
    def label(self) -> str:
        """What the box says on its side and on its separator: ``Box 3: Kowalski - Müller``."""
        return box_label(self.number, self.first, self.last)


def box_label(number: int, first: str, last: str) -> str:
    if not first:
        return f"Box {number}"
    if first == last:
        return f"Box {number}: {first}"
    return f"Box {number}: {first} - {last}"


def check_box_size(size: int) -> None:
    if size < 1 or size > MAX_BOX_SIZE:
        raise UserError(f"--box-size must be 1-{MAX_BOX_SIZE} badges a box (it was {size})")


def boxes(entries: Iterable[Entry], size: int) -> list[Box]:
    """The entries in collation order, ``size`` a box (the last one may hold fewer)."""
    check_box_size(size)
    ordered = sorted(entries, key=lambda e: e.key)
    return [Box(n + 1, tuple(ordered[i : i + size])) for n, i in enumerate(range(0, len(ordered), size))]


def renumber(kept: Sequence[Box]) -> list[Box]:
    """Boxes numbered 1.. again (after one lost every attendee to a change while the run was written)."""
    return [Box(n + 1, box.entries) for n, box in enumerate(b for b in kept if b.entries)]
