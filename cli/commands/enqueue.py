"""``badge-agent enqueue``: one job from flags, or many from a JSON-lines/CSV file or stdin."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from attendees.specs import Badged, BadgeKind
from attendees.store import AttendeeStore
from cli.commands.files import badge_says, file_options, open_export
from cli.main import Target, fail, fleet_options, run_async
from core.errors import JobError, UserError
from core.logs import shown
from protocol.jobs import Job, ignored_fields, parse_job
from protocol.replies import Enqueued
from protocol.store import Store

BATCH = 200  # jobs per pipelined round trip


@click.command()
@fleet_options
@click.option("--file", "-f", "file", type=click.File("rb"), help="JSON lines or CSV; - for stdin.")
@click.option("--format", "fmt", type=click.Choice(["auto", "jsonl", "csv", "xlsx"]), default="auto", show_default=True)
@file_options
@click.option("--dry-run", is_flag=True, help="Show what would be enqueued; change nothing (Redis is not contacted).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary (counts, rejected rows) instead.")
@click.option("--attendee-id", help="One job: the attendee id (goes into the QR code).")
@click.option("--name", help="One job: the name printed large.")
@click.option("--company", default="", help="One job: company.")
@click.option("--role", default="", help="One job: role.")
@click.option("--job-id", help="One job: job id (defaults to the attendee id).")
@click.option("--printer", help="Pin the job(s) to one printer (lane affinity).")
@click.option(
    "--field",
    "extra",
    multiple=True,
    metavar="KEY=VALUE",
    help="One job: the event's own data for its badge layout (repeatable), e.g. --field ticket_type=Speaker.",
)
@click.option("--layout", help="One job: the badge layout to print with (else the venue's rules decide).")
@click.option("--quiet", "-q", is_flag=True, help="Report only rejected and duplicate rows, and the totals.")
def enqueue(
    target: Target,
    file: BinaryIO | None,
    fmt: str,
    encoding: str | None,
    delimiter: str | None,
    maps: tuple[str, ...],
    preset: str | None,
    dry_run: bool,
    as_json: bool,
    attendee_id: str | None,
    name: str | None,
    company: str,
    role: str,
    job_id: str | None,
    printer: str | None,
    extra: tuple[str, ...],
    layout: str | None,
    quiet: bool,
) -> None:
    """Add badge jobs to the venue's pool. An existing job id is left alone and reported as a duplicate."""
    if file is None and attendee_id is None and name is None:
        fail("give --attendee-id and --name for one job, or --file FILE (- for stdin) for many")
    if file is not None and (attendee_id or name or extra or layout):
        fail("give either --file or the flags of one job (--field and --layout among them), not both")
    if file is None:
        one: dict[str, Any] = {
            "attendee_id": attendee_id, "name": name, "company": company, "role": role, "job_id": job_id
        }  # fmt: skip
        if extra:
            one["fields"] = _fields(extra)
        if layout:
            one["layout"] = layout
        rows: Iterator[tuple[int, dict[str, Any] | None, str]] = iter([(1, one, "")])
        total = 1
        used = "utf-8"
    else:
        export = open_export(file, fmt, encoding, delimiter, maps, preset, quiet=as_json)
        rows, total, used = export.rows, export.total, export.encoding
    show_bar = file is not None and not as_json
    try:
        counts = run_async(_enqueue_rows(target, rows, total, printer, quiet, show_bar, dry_run, not as_json))
    except UserError as exc:  # a mapped column missing from the header
        fail(str(exc))
        return
    rejected = counts.pop("rejected_rows")
    if as_json:
        summary = {**counts, "rejected_rows": rejected, "dry_run": dry_run, "encoding": used}
        click.echo(json.dumps(summary, ensure_ascii=False))
    else:
        verb = "would enqueue" if dry_run else "enqueued"
        click.echo(f"{verb} {counts['enqueued']}, duplicate {counts['duplicate']}, rejected {counts['rejected']}")
    if counts["rejected"]:
        sys.exit(1)


def _fields(entries: tuple[str, ...]) -> dict[str, str]:
    """``--field KEY=VALUE`` flags as a job's ``fields`` (checked with the job, like ``name``)."""
    found: dict[str, str] = {}
    for entry in entries:
        key, sep, value = entry.partition("=")
        if not sep or not key.strip():
            fail(f"--field {entry!r}: expected KEY=VALUE, e.g. --field ticket_type=Speaker")
        if key.strip() in found:
            fail(f"--field {key.strip()!r} given twice")
        found[key.strip()] = value
    return found


async def _enqueue_rows(
    target: Target,
    rows: Iterator[tuple[int, dict[str, Any] | None, str]],
    total: int,
    printer: str | None,
    quiet: bool,
    show_bar: bool,
    dry_run: bool = False,
    row_lines: bool = True,
) -> dict[str, Any]:
    redis = target.client()
    store = Store(redis, target.venue)
    counts: dict[str, Any] = {"enqueued": 0, "duplicate": 0, "rejected": 0}
    rejected_rows: list[dict[str, Any]] = []
    ignored: set[str] = set()
    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True)

    def report(number: int, text: str) -> None:
        # Rows go to stdout (to keep or grep); the bar is on stderr and only where stderr is a terminal.
        if row_lines:
            out.print(f"row {number}: {shown(text, 500)}", markup=False)

    accepted: list[Job] = []  # enqueued by us in this run: checked on the current master at the end

    def reject(number: int, reason: str) -> None:
        counts["rejected"] += 1
        rejected_rows.append({"row": number, "reason": reason})
        report(number, f"rejected: {reason}")

    async def flush(entries: list[tuple[int, Job | str]]) -> None:
        """Report every row of the batch in file order; rejected rows are told where they are in the file."""
        if not entries:
            return
        batch = [(n, job) for n, job in entries if isinstance(job, Job)]
        listed = {} if dry_run or attendee_list is None else await attendee_list.badge_listed(batch, "enqueue")
        batch = [(n, job) for n, job in batch if n not in listed]
        if dry_run:
            replies = [Enqueued(True, "") for _ in batch]
        else:
            replies = await send(batch)
        outcome = dict(zip([n for n, _ in batch], replies, strict=True))
        for number, job in entries:
            if isinstance(job, str):
                reject(number, job)
                continue
            if number in listed:
                listed_row(number, *listed[number])
                continue
            added, state = outcome[number]
            if added:
                counts["enqueued"] += 1
                accepted.append(job)
                if dry_run:
                    report(number, f"would enqueue {job.job_id}: {badge_says(job)}")
                elif not quiet:
                    pin = f" (pinned to {job.printer})" if job.printer else ""
                    report(number, "enqueued " + job.job_id + pin)
            else:
                counts["duplicate"] += 1
                report(number, f"duplicate {job.job_id}: already known (state {state}), left unchanged")
        progress.advance(task, len(entries))

    def listed_row(number: int, job_id: str, reply: Badged) -> None:
        """A row of a listed attendee: their one badge job (made now, or already there), never a second."""
        if reply.kind is BadgeKind.QUEUED:
            counts["enqueued"] += 1
            if not quiet:
                report(number, f"enqueued {job_id} (the attendee list's badge for this ticket)")
        elif reply.kind is BadgeKind.EXISTS:
            counts["duplicate"] += 1
            report(number, f"duplicate {job_id}: this ticket's badge exists (state {reply.state}), left unchanged")
        elif reply.kind is BadgeKind.CANCELLED:
            reject(number, "the ticket is cancelled on the attendee list: no badge")
        else:
            reject(number, "the attendee kept changing while the badge was made; enqueue again")

    async def send(batch: list[tuple[int, Job]]) -> list[Enqueued]:
        if not batch:
            return []
        return await store.enqueue_many([(job.job_id, job.payload(), job.printer, job.zoned) for _, job in batch])

    progress = Progress(
        TextColumn("enqueue"), BarColumn(), MofNCompleteColumn(), console=err, disable=not show_bar, transient=False
    )
    attendee_list: AttendeeStore | None = None
    if not dry_run and await AttendeeStore.exists(redis, target.venue):
        attendee_list = AttendeeStore(redis, target.venue, store)
    try:
        with progress:
            task = progress.add_task("enqueue", total=total)
            batch: list[tuple[int, Job | str]] = []
            for number, row, error in rows:
                try:
                    if row is None:
                        raise JobError(error)
                    data = {**row, "printer": printer} if printer and not row.get("printer") else row
                    batch.append((number, parse_job(data)))
                    ignored.update(ignored_fields(data))
                except JobError as exc:
                    batch.append((number, str(exc)))
                if len(batch) >= BATCH:
                    await flush(batch)
                    batch = []
            await flush(batch)
        if not dry_run:
            await verify_on_master(store, accepted, err)
    finally:
        await redis.aclose()
    if ignored:
        err.print(f"note: ignored fields not used on badges: {', '.join(sorted(ignored))}", markup=False)
    return {**counts, "rejected_rows": rejected_rows}


async def verify_on_master(store: Store, jobs: list[Job], err: Console, rounds: int = 5) -> None:
    """Only what the current master holds counts as enqueued; anything a failover lost is enqueued again.

    A Sentinel failover can lose the last writes acknowledged by the old master (replication is asynchronous).
    Enqueueing is idempotent on the job id, so sending a lost job again is safe; one that was already taken and
    printed in the meantime still has its job hash and is left alone.
    """
    pending = jobs
    for attempt in range(rounds):
        missing: list[Job] = []
        for start in range(0, len(pending), BATCH):
            chunk = pending[start : start + BATCH]
            async with store.redis.pipeline(transaction=False) as pipe:
                for job in chunk:
                    pipe.exists(store.keys.job(job.job_id))
                found = await pipe.execute()
            missing += [job for job, present in zip(chunk, found, strict=True) if not present]
        if not missing:
            return
        err.print(
            f"note: {len(missing)} job(s) were lost by a Redis failover; enqueueing them again",
            markup=False,
        )
        for job in missing:
            await store.enqueue(job.job_id, job.payload(), job.printer, zone=job.zoned)
        pending = missing
        await asyncio.sleep(0.2 * (attempt + 1))
    raise UserError(f"{len(pending)} job(s) could not be confirmed on the Redis master; run the same enqueue again")
