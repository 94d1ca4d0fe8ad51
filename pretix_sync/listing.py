"""pretix's records written into the venue's attendee list (attendees/store.py), source ``pretix``.

A record is written as the attendee list's import writes a row (``put``: added, updated, unchanged), with these
differences for a live source:

- A ticket pretix holds no name for is loaded all the same, flagged for the help desk (``attention``): the kiosk
  sends the attendee there instead of printing an empty badge; so is pretix's "requires special attention", and a
  name a badge cannot carry (the reason is pretix's data, not a typing error at a desk).
- A ticket that turned cancelled in pretix has its badge withdrawn if no printer has taken it yet (as a desk's
  cancel does); the kiosk refuses it from then on.
- A changed name reaches a badge job that exists already (queued, or printed: the next reprint), unless staff
  corrected the name at the desk: a correction made at the desk wins over pretix, is shown beside what pretix says,
  and each sync that finds pretix changed under it says so.
- Every pretix ticket's job id is registered with its pretix position (``P pretix:jobs``), so the confirm of its
  badge writes what to send to pretix (pretix_sync/outbox.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from attendees import specs
from attendees.store import NO_TYPE, Attendee, AttendeeStore
from attendees.terms import index_terms
from core.errors import JobError
from pretix_sync.keys import CONSUMER, PretixKeys
from pretix_sync.records import AttendeeRecord
from protocol.codec import dec, enc
from protocol.jobs import parse_job
from protocol.printed import PrintedRecord

SOURCE = "pretix"
NO_NAME = "no name in pretix: take the name from the attendee, correct it, then print"
PRETIX_ATTENTION = "pretix: this ticket requires special attention"
#: Records written per round trip.
BATCH = 500

Report = Callable[[str], None]


@dataclass
class Written:
    """What one batch of records did to the list."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    cancelled: int = 0
    #: updated records whose name, company or fields staff had corrected (the correction kept)
    kept_edits: int = 0
    failed: int = 0

    def line(self) -> str:
        kept = f" (kept {self.kept_edits} desk correction(s))" if self.kept_edits else ""
        failed = f", {self.failed} failed" if self.failed else ""
        return (
            f"list: added {self.added}, updated {self.updated}{kept}, unchanged {self.unchanged},"
            f" cancelled {self.cancelled}{failed}"
        )


def attention_for(record: AttendeeRecord) -> str:
    """Why the kiosk sends this ticket's holder to the help desk ("" when it prints at the kiosk)."""
    if record.status != "valid":
        return ""
    if not record.name:
        return NO_NAME
    try:
        parse_job({"attendee_id": record.code, "job_id": record.job_id, "name": record.name,
                   "company": record.company, "role": record.role, "fields": record.fields})  # fmt: skip
    except JobError as exc:
        return f"pretix's data cannot go on a badge ({exc}): correct it, then print"
    if record.needs_attention:
        return PRETIX_ATTENTION
    return ""


def list_record(record: AttendeeRecord, current: Attendee | None) -> specs.Record:
    """The attendee list's record of a pretix ticket (the job id an attendee already has is kept by ``put``)."""
    fields = json.dumps(record.fields, ensure_ascii=False, sort_keys=True) if record.fields else ""
    name = str(current.edits.get("name") or record.name) if current else record.name
    company = str(current.edits.get("company") or record.company) if current else record.company
    return specs.Record(
        name=record.name,
        company=record.company,
        role=record.role,
        fields=fields,
        order_code=record.order_code,
        email=record.email,
        source=SOURCE,
        status=record.status,
        job_id=current.job_id if current and current.job_id else record.job_id,
        ticket_type=record.fields.get("ticket_type") or NO_TYPE,
        terms=" ".join(index_terms(name, company, record.order_code, record.email)),
        attention=attention_for(record),
    )


class ListWriter:
    """Writes pretix's records into one venue's attendee list."""

    def __init__(self, store: AttendeeStore, report: Report | None = None) -> None:
        self.store = store
        self.keys = PretixKeys(store.keys.venue)
        self.record = PrintedRecord(store.redis, store.keys.venue)
        self._report = report or (lambda text: None)

    async def write(self, records: Sequence[AttendeeRecord], written: Written | None = None) -> Written:
        """Writes the records, counted into ``written`` (a read's batches add up in one)."""
        written = written if written is not None else Written()
        for start in range(0, len(records), BATCH):
            await self._write(records[start : start + BATCH], written)
        return written

    async def held(self) -> dict[str, int]:
        """The tickets the list holds from pretix: job id -> position id (``P pretix:jobs``)."""
        held: dict[str, int] = {}
        # One HGETALL, once a first read (the sync's Redis user reads, it does not scan): 100,000 tickets are a few
        # MB and a few milliseconds of Redis's time.
        found: dict[bytes, bytes] = await self.store.redis.hgetall(enc(self.keys.jobs))  # type: ignore[assignment]
        for job, position in found.items():
            try:
                held[dec(job)] = int(position)
            except ValueError:
                continue  # not written by this sync: nothing to look up
        return held

    async def _write(self, records: Sequence[AttendeeRecord], written: Written) -> None:
        codes = [r.code for r in records]
        current = await self.store.get_many(codes)
        rows = [(r.code, list_record(r, c)) for r, c in zip(records, current, strict=True)]
        # The outbox joins the printed record, and each job's position is registered, before the records are
        # written: a badge confirmed in between is in the record and still finds its position.
        await self.record.join(CONSUMER)
        async with self.store.redis.pipeline(transaction=False) as pipe:
            for record, (_, row) in zip(records, rows, strict=True):
                pipe.hset(enc(self.keys.jobs), enc(row.job_id), str(record.position_id).encode())
            await pipe.execute()
        replies = await self.store.put_many(rows)
        changed: list[str] = []
        for record, before, reply in zip(records, current, replies, strict=True):
            if record.email_left_out:
                # The position names it for whoever fixes it in pretix; the e-mail itself stays out of the log.
                self._report(
                    f"{record.job_id} (pretix position {record.position_id}): its attendee e-mail is not an e-mail"
                    " address; loaded without it"
                )
            if reply.kind is specs.PutKind.ADDED:
                written.added += 1
            elif reply.kind is specs.PutKind.UPDATED:
                written.updated += 1
                changed.append(record.code)
                if reply.kept_edits:
                    written.kept_edits += 1
                    self._report(
                        f"{record.job_id}: kept the help desk's correction of {', '.join(reply.kept_edits)}"
                        " (pretix changed it; both are shown at the desk)"
                    )
            elif reply.kind is specs.PutKind.UNCHANGED:
                written.unchanged += 1
            else:
                written.failed += 1
                self._report(f"{record.job_id}: kept changing while it was written; the next sync writes it")
                continue
            if record.status == "cancelled" and (before is None or before.status != "cancelled"):
                written.cancelled += 1
                # The ticket is cancelled already (put); this withdraws its badge if no printer has taken it.
                await self.store.set_status(record.code, "cancelled", "pretix sync")
        await self._refresh(changed)

    async def _refresh(self, codes: list[str]) -> None:
        """The badge jobs of changed attendees carry what the list now shows (a queued badge prints the new name; a
        printed one's reprint does)."""
        for attendee in await self.store.get_many(codes):
            if attendee is None or attendee.status != "valid" or not attendee.shown_name:
                continue
            try:
                await self.store.refresh_payload(attendee)
            except JobError:
                continue  # flagged for the desk (attention): nothing printable to put on the job
