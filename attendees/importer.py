"""Loading an attendee file into the list: every row checked as a badge would be, then added, refreshed or left.

Nothing prints. A row is loaded whole or not at all (rejected, by its number, with the reason). A re-import adds new
rows, updates changed ones, leaves badge state alone, keeps a staff correction (and says when the source changed
under it), and marks rows no longer in the file as cancelled only with ``prune``.
"""

from __future__ import annotations

import json
import math
import re
import secrets
import string
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
    #: Why the file's ticket codes could be guessed (``guessable``), one sentence each; none when they are safe.
    code_warnings: list[str] = field(default_factory=list)

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
        self.summary.code_warnings = guessable(self._seen)
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


#: Bits a ticket code must carry (by ``code_bits``) not to be worth guessing: at the intake's rates a guesser tries
#: at most millions of codes in an event's days, and 2**64 leaves a list of 100,000 codes out of reach.
SAFE_BITS = 64
#: A numbered code is sequential when a guess in the range of the list's numbers hits a code at least this often.
SEQUENTIAL_DENSITY = 1 / 1000
#: Characters of each class a code may use, printable ASCII without spaces being 94 (keys.py, CODE_RE).
_CLASSES = (string.digits, string.ascii_lowercase, string.ascii_uppercase, string.punctuation)
#: Row numbers named in a warning.
ROWS_SHOWN = 5


def code_bits(part: str) -> float:
    """The estimate of a code's unpredictable bits: its length times log2 of the characters of the classes it uses
    (10 digits, 26 lowercase, 26 uppercase, 32 others). An overestimate for a word or a date, exact for random
    characters: a code under the bar is guessable whatever its source."""
    alphabet = sum(len(chars) for chars in _CLASSES if any(c in chars for c in part))
    return len(part) * math.log2(alphabet) if alphabet > 1 else 0.0


def guessable(seen: dict[str, int]) -> list[str]:
    """Warnings for ticket codes (code -> row number) someone could guess, and so collect a stranger's badge at a
    kiosk: numbered in sequence (by ``SEQUENTIAL_DENSITY``), or under ``SAFE_BITS`` by ``code_bits`` once the part
    every code shares (a prefix, a suffix, which guessers read off their own ticket) is left out. Names rows, never
    a code."""
    codes = list(seen)
    if not codes:
        return []
    prefix = _shared(codes) if len(codes) > 1 else 0
    suffix = _shared([c[prefix:][::-1] for c in codes]) if len(codes) > 1 else 0
    parts = {code: code[prefix : len(code) - suffix] for code in codes}
    warnings = []
    numbers = sorted(int(part) for part in parts.values() if part.isdigit() and part.isascii())
    if len(numbers) > 1 and len(numbers) / (numbers[-1] - numbers[0] + 1) >= SEQUENTIAL_DENSITY:
        warnings.append(
            f"ticket codes look sequential: {len(numbers)} of {len(codes)} are numbers from {numbers[0]} to "
            f"{numbers[-1]} (beside what every code shares), so a guess in that range names a ticket 1 time in "
            f"{math.ceil((numbers[-1] - numbers[0] + 1) / len(numbers))}; anyone who guesses a code can collect that "
            "badge at a kiosk"
        )
    weak = [seen[code] for code, part in parts.items() if code_bits(part) < SAFE_BITS]
    if weak:
        rows = ", ".join(str(n) for n in sorted(weak)[:ROWS_SHOWN]) + (", ..." if len(weak) > ROWS_SHOWN else "")
        warnings.append(
            f"ticket codes are guessable: {len(weak)} of {len(codes)} carry under {SAFE_BITS} bits by this estimate "
            "(length × log2 of the characters they use: 10 digits, 26 lowercase, 26 uppercase, 32 others; a part "
            f"every code shares counts nothing) (rows {rows}); a safe code has 13 or more random letters and digits "
            "(pretix's secrets have 32)"
        )
    return warnings


def _shared(texts: list[str]) -> int:
    """How many characters every one of ``texts`` starts with."""
    first, last = min(texts), max(texts)  # what the first and last in order share, all between them share
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return n


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
