"""One spec per Lua script of the attendee list, as protocol/specs.py does for the protocol's: the only place
each script's KEYS and ARGV are put in order, and where its reply becomes a type. The scripts (``attendee_*.lua``)
are functions of the venue's library (protocol/library.py names this package), with the protocol's helpers
(``add_job``, ``now_ms``) and this package's (prelude.lua) beside them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NamedTuple

from attendees.keys import AttendeeKeys
from preprint.keys import PreprintKeys, preprint_job_id
from protocol.codec import dec, enc
from protocol.keys import EncodedKeys, PrinterKeys
from protocol.specs import ScriptCall, Spec


class PutKind(StrEnum):
    ADDED = "added"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    STALE = "stale"


class Put(NamedTuple):
    kind: PutKind
    #: updated: the fields whose local edit was kept while the source's value changed.
    kept_edits: tuple[str, ...] = ()


class Record(NamedTuple):
    """What ``put`` writes: the attendee as the source (or a walk-in) says."""

    name: str
    company: str
    role: str
    fields: str  # JSON object, or ""
    order_code: str
    email: str
    source: str
    status: str
    job_id: str
    ticket_type: str
    terms: str
    #: Why the kiosk sends this attendee to the help desk instead of printing ("" for none): no name, or the source
    #: asks for it (pretix's "requires special attention").
    attention: str = ""


def _preprint(k: AttendeeKeys, venue_keys: EncodedKeys, run: str, job_id: str) -> tuple[list[bytes], list[bytes | int]]:
    """The trailing KEYS and ARGV of a change to an attendee whose record names pre-print ``run`` (put.lua, edit.lua:
    its void list and the pre-print job's completion gate), none for one in no run."""
    if not run:
        return [], []
    return [enc(PreprintKeys(k.venue).voids(run)), venue_keys.done(enc(preprint_job_id(job_id)))], [enc(run)]


def _word_keys(k: AttendeeKeys, *lists: str) -> list[bytes]:
    """The postings key of each word term of the lists, in order (prelude.lua's term_keys reads them so)."""
    return [enc(k.posting(term)) for terms in lists for term in terms.split() if term[0] not in "#="]


class PutSpec(Spec[Any]):
    name = "attendee_put"

    def call(
        self,
        k: AttendeeKeys,
        venue_keys: EncodedKeys,
        code: str,
        version: str,
        generation: str,
        record: Record,
        old_terms: str,
        maxlen: int,
        preprint_run: str = "",
    ) -> ScriptCall[Put]:
        """``old_terms``: the terms on the record as read (at ``version``); ``maxlen``: the events stream's, where a
        count that is no number is told as it restarts; ``preprint_run``: the pre-print run the record names as read
        ("" for none)."""
        more_keys, more_args = _preprint(k, venue_keys, preprint_run, record.job_id)
        keys = [
            enc(k.attendee(code)), enc(k.terms), enc(k.counts), venue_keys.job(enc(record.job_id)), enc(k.badging),
            enc(k.exact), enc(k.refs), venue_keys.events, *_word_keys(k, old_terms, record.terms), *more_keys,
        ]  # fmt: skip
        args: list[bytes | int] = [
            enc(code), enc(version), enc(generation), *(enc(v) for v in record), enc(old_terms), maxlen, *more_args,
        ]  # fmt: skip
        return (self, keys, args)

    def parse(self, reply: Any) -> Put:
        kind = PutKind(dec(reply[0]))
        kept = tuple(x for x in dec(reply[1]).split(",") if x) if len(reply) > 1 else ()
        return Put(kind, kept)


class BadgeKind(StrEnum):
    QUEUED = "queued"
    EXISTS = "exists"
    CANCELLED = "cancelled"
    #: flagged for the help desk (``Attendee.attention``): a kiosk does not print it, a desk may
    ATTENTION = "attention"
    UNKNOWN = "unknown"
    STALE = "stale"
    #: in a pre-print run, not void: the badge is in its box (state: "" planned, "preprinted", "handed_over")
    PREPRINTED = "preprinted"


class Badged(NamedTuple):
    kind: BadgeKind
    state: str = ""  # exists: the job's state; preprinted: the pre-printed badge's


class BadgeSpec(Spec[Any]):
    name = "attendee_badge"

    def call(
        self,
        k: AttendeeKeys,
        venue_keys: EncodedKeys,
        code: str,
        version: str,
        job_id: str,
        payload: str,
        pinned: PrinterKeys | None,
        maxlen: int,
        created_by: str,
        zone: tuple[bytes, bytes] | None = None,
        owned: bytes | None = None,
    ) -> ScriptCall[Badged]:
        """``zone``: the zone of the token that asks and its printers (protocol/store.py, ``zone_args``); ``owned``:
        the set of jobs of the intake token that asks (``owned:<token>``), which a new badge joins."""
        queue, printer = (pinned.queue, pinned.name) if pinned is not None else (venue_keys.pool, b"")
        job = enc(job_id)
        keys = [
            enc(k.attendee(code)), venue_keys.job(job), queue, venue_keys.events, venue_keys.stats,
            venue_keys.pinned, enc(k.badging), *([owned] if owned else []),
        ]  # fmt: skip
        args = [enc(code), enc(version), job, enc(payload), printer, maxlen, enc(created_by), *(zone or ())]
        return (self, keys, args)

    def parse(self, reply: Any) -> Badged:
        return Badged(BadgeKind(dec(reply[0])), dec(reply[1]) if len(reply) > 1 else "")


class EditSpec(Spec[Any]):
    name = "attendee_edit"

    def call(
        self,
        k: AttendeeKeys,
        venue_keys: EncodedKeys,
        code: str,
        version: str,
        name: str,
        company: str,
        fields: str,
        terms: str,
        old_terms: str,
        maxlen: int,
        preprint: tuple[EncodedKeys, str, str] | None = None,
    ) -> ScriptCall[str]:
        """``preprint``: (the venue's keys, the pre-print run the record names as read, the attendee's job id), for
        an attendee in a run."""
        more_keys, more_args = _preprint(k, *preprint) if preprint else ([], [])
        args: list[bytes | int] = [
            enc(code), enc(version), enc(name), enc(company), enc(fields), enc(terms), enc(old_terms), maxlen,
            *more_args,
        ]  # fmt: skip
        keys = [
            enc(k.attendee(code)), enc(k.terms), enc(k.exact), enc(k.refs), venue_keys.events,
            *_word_keys(k, old_terms, terms),
        ]  # fmt: skip
        return (self, keys + more_keys, args)

    def parse(self, reply: Any) -> str:
        return dec(reply[0])  # edited, unknown or stale


class StatusSpec(Spec[Any]):
    name = "attendee_status"

    def call(
        self,
        k: AttendeeKeys,
        venue_keys: EncodedKeys,
        code: str,
        status: str,
        job_id: str,
        maxlen: int,
        preprint_run: str = "",
    ) -> ScriptCall[tuple[str, str, bool]]:
        """``job_id``: the attendee's badge job as read (its record is restored to "none" when a cancel is undone);
        ``preprint_run``: the pre-print run the record names as read ("" for none): a cancel voids its badge."""
        keys = [enc(k.attendee(code)), enc(k.counts), venue_keys.job(enc(job_id)), venue_keys.events]
        args: list[bytes | int] = [enc(status), enc(job_id), maxlen]
        if preprint_run:
            more_keys, more_args = _preprint(k, venue_keys, preprint_run, job_id)
            keys += [*more_keys, enc(PreprintKeys(k.venue).run(preprint_run))]
            args += [*more_args, enc(code)]
        return (self, keys, args)

    def parse(self, reply: Any) -> tuple[str, str, bool]:
        # (changed | same | unknown | stale, job id, the badge a cancel withdrew is back to "none")
        return dec(reply[0]), dec(reply[1]) if len(reply) > 1 else "", len(reply) > 2 and dec(reply[2]) == "restored"


class CheckinSpec(Spec[Any]):
    name = "attendee_checkin"

    def call(self, k: AttendeeKeys, venue_keys: EncodedKeys, job_ids: list[str], maxlen: int) -> ScriptCall[int]:
        ids = [enc(j) for j in job_ids]
        keys = [enc(k.counts), enc(k.badging), venue_keys.events, *(venue_keys.done(j) for j in ids)]
        return (self, keys, [maxlen, *ids])

    def parse(self, reply: Any) -> int:
        return int(reply)


class PayloadSpec(Spec[Any]):
    name = "attendee_payload"

    def call(self, venue_keys: EncodedKeys, job_id: str, payload: str) -> ScriptCall[str]:
        return (self, [venue_keys.job(enc(job_id))], [enc(payload)])

    def parse(self, reply: Any) -> str:
        return dec(reply)


class SearchSpec(Spec[Any]):
    name = "attendee_search"

    def call(
        self, k: AttendeeKeys, first: str, terms: list[bytes | str], others: list[str], max_codes: int
    ) -> ScriptCall[list[str]]:
        """``first``: the search's most selective word, with the word terms of its prefix range (as read from the
        terms); ``others``: the rest of its words (checked against each candidate's terms, attendee_search.lua)."""
        prefix = enc(k.posting(""))
        # the terms as Redis answered them (bytes: the store's client does not decode)
        keys = [enc(k.exact), enc(k.refs), *(prefix + (t if isinstance(t, bytes) else enc(t)) for t in terms)]
        return (self, keys, [max_codes, enc(first), *(enc(word) for word in others)])

    def parse(self, reply: Any) -> list[str]:
        return [dec(code) for code in reply or [] if code is not None]


class ReadSpec(Spec[list[list[bytes | str | None]]]):
    name = "attendee_read"

    def call(self, hashes: list[bytes], fields: tuple[bytes, ...]) -> ScriptCall[list[list[bytes | str | None]]]:
        """``fields`` of each of ``hashes`` (attendee or job hashes), one list of values a hash."""
        return (self, hashes, list(fields))

    def parse(self, reply: Any) -> list[list[bytes | str | None]]:
        return [list(values) for values in reply]


PUT = PutSpec()
BADGE = BadgeSpec()
EDIT = EditSpec()
STATUS = StatusSpec()
CHECKIN = CheckinSpec()
PAYLOAD = PayloadSpec()
SEARCH = SearchSpec()
READ = ReadSpec()
SPECS: tuple[Spec[Any], ...] = (PUT, BADGE, EDIT, STATUS, CHECKIN, PAYLOAD, SEARCH, READ)
