"""Loading an attendee file into the list: every row checked as a badge would be, then added, refreshed or left.

Nothing prints. A row is loaded whole or not at all (rejected, by its number, with the reason). A re-import adds new
rows, updates changed ones, leaves badge state alone, keeps a staff correction (and says when the source changed
under it), and marks rows no longer in the file as cancelled only with ``prune``.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from attendees import specs
from attendees.keys import CODE_RE
from attendees.store import Attendee, AttendeeStore, record_for
from core.errors import JobError
from core.logs import shown
from protocol.jobs import Job, Row, parse_job

BATCH = 500
#: What a registration export writes in a status column for a ticket that no longer admits anyone (pretix: c
#: canceled, e expired; Eventbrite: "Refunded", "Cancelled", an attendee's "Not Attending").
CANCELLED_WORDS = frozenset(
    {"c", "e", "canceled", "cancelled", "expired", "refunded", "void", "deleted", "not attending"}
)
#: An e-mail address as the list keeps it: a local part and a domain of at least two labels, without spaces, quotes,
#: brackets or a second ``@`` (letters beyond ASCII allowed: internationalised addresses). Anything else in an
#: e-mail column (a name, "n/a", a formula) is not kept: a help desk's search and an export would carry it as if it
#: were an address.
EMAIL_RE = re.compile(
    r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.\-\u00a0-\U0010ffff]{1,64}"
    r"@(?:[A-Za-z0-9\-\u00a0-\U0010ffff]{1,63}\.)+[A-Za-z0-9\-\u00a0-\U0010ffff]{2,63}"
)


def is_email(text: str) -> bool:
    """Whether ``text`` is an e-mail address (``EMAIL_RE``, at most 254 characters)."""
    return len(text) <= 254 and EMAIL_RE.fullmatch(text) is not None


@dataclass
class Summary:
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    cancelled: int = 0
    rejected: int = 0
    rejected_rows: list[dict[str, Any]] = field(default_factory=list)
    #: Rows loaded without something the file had (an e-mail that is not an address), each with what was left out.
    warnings: int = 0
    warned_rows: list[dict[str, Any]] = field(default_factory=list)

    def line(self, dry_run: bool) -> str:
        head = "would load: " if dry_run else ""
        return (
            f"{head}added {self.added}, updated {self.updated}, unchanged {self.unchanged}, "
            f"cancelled {self.cancelled}, rejected {self.rejected}"
        ) + (f", warnings {self.warnings}" if self.warnings else "")


Report = Callable[[int, str], None]


class Importer:
    """One run of ``attendees import`` (or a sync's batch) into one venue's list."""

    def __init__(
        self, store: AttendeeStore, source: str = "import", report: Report | None = None, samples: int = 0
    ) -> None:
        """``samples``: how many of the first loadable rows to report as their badges will say (a dry run's look)."""
        self.store = store
        self.samples = samples
        self.source = source
        self.generation = secrets.token_hex(6)
        self.summary = Summary()
        self._report = report or (lambda number, text: None)
        self._seen: dict[str, int] = {}

    def _reject(self, number: int, reason: str) -> None:
        self.summary.rejected += 1
        self.summary.rejected_rows.append({"row": number, "reason": reason})
        self._report(number, f"rejected: {reason}")

    def _warn(self, number: int, warning: str) -> None:
        self.summary.warnings += 1
        self.summary.warned_rows.append({"row": number, "warning": warning})
        self._report(number, f"warning: {warning}")

    async def load(self, rows: Iterator[Row], dry_run: bool = False) -> Summary:
        batch: list[tuple[int, str, specs.Record]] = []
        for number, row, error in rows:
            checked = await self._check(number, row, error)
            if checked is None:
                continue
            batch.append((number, *checked))
            if len(batch) >= BATCH:
                await self._flush(batch, dry_run)
                batch = []
        await self._flush(batch, dry_run)
        return self.summary

    async def _check(self, number: int, row: dict[str, Any] | None, error: str) -> tuple[str, specs.Record] | None:
        if row is None:
            self._reject(number, error)
            return None
        code = str(row.get("attendee_id") or "").strip()
        if not code:
            self._reject(number, "attendee_id is required (the ticket code: map it, e.g. --map attendee_id=Barcode)")
            return None
        if not CODE_RE.fullmatch(code):
            self._reject(number, "attendee_id: a ticket code is 1-128 printable characters without spaces")
            return None
        if code in self._seen:
            self._reject(number, f"the same ticket code as row {self._seen[code]}")
            return None
        job_id = str(row.get("job_id") or "").strip()
        if not job_id or job_id == code:  # a job id is never the ticket code (job ids are in logs and on boards)
            job_id = await self.store.job_id_for(code)
        try:
            job = parse_job({**row, "job_id": job_id, "printer": None})
        except JobError as exc:
            self._reject(number, str(exc))
            return None
        status = "cancelled" if str(row.get("status", "")).strip().casefold() in CANCELLED_WORDS else "valid"
        order_code = str(row.get("order_code") or "").strip()[:64]
        email = str(row.get("email") or "").strip()
        if email and not is_email(email):
            # The attendee still gets a badge: the row loads, its e-mail empty, and the row is named.
            self._warn(number, f"email {shown(email, 80)!r} is not an e-mail address: loaded without it")
            email = ""
        self._seen[code] = number
        if self.samples > 0:
            self.samples -= 1
            self._report(number, f"would load {job.job_id}: {_says(job)}")
        return code, record_for(job, order_code, email, self.source, status)

    async def _flush(self, batch: list[tuple[int, str, specs.Record]], dry_run: bool) -> None:
        if not batch:
            return
        if dry_run:
            current = await self.store.get_many([code for _, code, _ in batch])
            for (_, _, record), attendee in zip(batch, current, strict=True):
                if attendee is None:
                    self.summary.added += 1
                elif _same(attendee, record):
                    self.summary.unchanged += 1
                else:
                    self.summary.updated += 1
            return
        replies = await self.store.put_many([(code, record) for _, code, record in batch], self.generation)
        for (number, _, _), reply in zip(batch, replies, strict=True):
            if reply.kind is specs.PutKind.ADDED:
                self.summary.added += 1
            elif reply.kind is specs.PutKind.UPDATED:
                self.summary.updated += 1
                if reply.kept_edits:
                    fields = ", ".join(reply.kept_edits)
                    self._report(number, f"updated; kept the help desk's correction of {fields} (the file changed it)")
            elif reply.kind is specs.PutKind.UNCHANGED:
                self.summary.unchanged += 1
            else:
                self._reject(number, "the attendee kept changing while it was loaded; import again")

    async def prune(self, dry_run: bool = False) -> int:
        """Cancel every valid attendee of this source that the file did not have (a refund, a deleted order)."""
        gone: list[str] = []
        batch: list[str] = []

        async def look(codes: list[str]) -> None:
            async with self.store.redis.pipeline(transaction=False) as pipe:
                for code in codes:
                    pipe.hmget(self.store.keys.attendee(code), ["g", "st", "s"])
                raws = await pipe.execute()
            for code, (generation, status, source) in zip(codes, raws, strict=True):
                if code in self._seen or status != b"valid" or (source or b"").decode() != self.source:
                    continue
                if dry_run or (generation or b"").decode() != self.generation:
                    gone.append(code)

        async for code in self.store.codes():
            batch.append(code)
            if len(batch) >= BATCH:
                await look(batch)
                batch = []
        await look(batch)
        for code in gone:
            if not dry_run:
                await self.store.set_status(code, "cancelled", f"import --prune ({self.source})")
        self.summary.cancelled += len(gone)
        return len(gone)


def _says(job: Job) -> str:
    """What the badge will say, on one line (as ``enqueue --dry-run`` shows it)."""
    parts = [job.name, job.company, job.role, *(f"{k}={v}" for k, v in job.fields.items())]
    return " | ".join(part for part in parts if part)


def _same(attendee: Attendee, record: specs.Record) -> bool:
    shown = (
        attendee.name, attendee.company, attendee.role, attendee.order_code, attendee.email, attendee.source,
        attendee.status, attendee.ticket_type,
    )  # fmt: skip
    given = (
        record.name, record.company, record.role, record.order_code, record.email, record.source, record.status,
        record.ticket_type,
    )  # fmt: skip
    fields = json.loads(record.fields) if record.fields else {}
    return shown == given and attendee.fields == fields
