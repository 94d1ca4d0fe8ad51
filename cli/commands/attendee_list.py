"""``badge-agent attendees``: load, look up, search, export and, after the event, purge the venue's attendee list.

None of these commands prints a badge.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any, BinaryIO

import click
from rich.console import Console

from attendees.importer import Importer, Summary
from attendees.keys import CODE_RE
from attendees.store import AttendeeStore, PurgeRefused
from attendees.views import describe, printed_iso, when_printed
from cli.commands.files import file_options, open_export
from cli.main import Target, fail, fleet_options, run_async
from cli.registration_files import SAVE_AS_UTF8, lossy_rows
from core.logs import shown

#: Rows a dry run shows as their badges will say (the first ones), and rows of lost letters it shows.
SAMPLE_ROWS = 5
LOSSY_SHOWN = 5


@click.group()
def attendees() -> None:
    """The venue's attendee list: kiosks look attendees up by ticket code, the help desk searches it."""


@attendees.command("import")
@fleet_options
@click.argument("file", type=click.File("rb"))
@file_options
@click.option("--format", "fmt", type=click.Choice(["auto", "jsonl", "csv", "xlsx"]), default="auto")
@click.option("--prune", is_flag=True, help="Cancel the listed attendees (of earlier imports) this file lacks.")
@click.option(
    "--dry-run", is_flag=True, help="Check every row, show a few as their badges will say, count what would change."
)
@click.option(
    "--accept-lossy",
    is_flag=True,
    help="Load names that are question marks where letters were (a file saved without them) all the same.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON summary instead.")
def import_list(
    target: Target,
    file: BinaryIO,
    encoding: str | None,
    delimiter: str | None,
    maps: tuple[str, ...],
    preset: str | None,
    fmt: str,
    prune: bool,
    dry_run: bool,
    accept_lossy: bool,
    as_json: bool,
) -> None:
    """Load or refresh the list from FILE (CSV, JSON lines or XLSX, as enqueue --file reads it). Prints nothing.

    Rows need the ticket code (attendee_id) and a name; --preset pretix or eventbrite maps those exports (docs/cli.md
    lists which of their files).
    """
    export = open_export(file, fmt, encoding, delimiter, maps, preset, quiet=as_json, for_list=True)
    out = Console(highlight=False, soft_wrap=True)
    rows = list(export.rows)  # a list is a few thousand rows: looked at whole before anything is loaded
    lossy = lossy_rows(rows)
    name = getattr(file, "name", "-")
    if lossy:
        lost = (
            f"{name}: {len(lossy)} row(s) have names of question marks where letters should be (row {lossy[0][0]}: "
            f"{shown(lossy[0][1], 80)!r}): the file was saved in a character set without those letters, and their "
            f"badges would print the marks; {SAVE_AS_UTF8}"
        )
        if not accept_lossy and not dry_run:
            fail(f"{lost}. To load the file as it is: --accept-lossy")
        if not as_json:
            for number, value in lossy[:LOSSY_SHOWN]:
                out.print(f"row {number}: letters lost: {shown(value, 200)!r}", markup=False)
            click.echo(f"note: {lost}" + ("" if accept_lossy else "; --accept-lossy loads it as it is"), err=True)

    def report(number: int, text: str) -> None:
        if not as_json:
            out.print(f"row {number}: {shown(text, 500)}", markup=False)

    samples = 0 if as_json else SAMPLE_ROWS
    summary = run_async(_import(target, iter(rows), prune, dry_run, report, samples))
    if as_json:
        click.echo(
            json.dumps(
                {
                    **summary.__dict__,
                    "lossy": len(lossy),
                    "dry_run": dry_run,
                    "read_as": export.describe(),
                    "export": export.kind,
                },
                ensure_ascii=False,
            )
        )
    else:
        click.echo(f"{export.describe()}: {summary.line(dry_run)}")
        for warning in summary.code_warnings:  # loaded all the same: the venue may have no other codes
            click.echo(f"warning: {warning}", err=True)
    if summary.rejected or (lossy and not accept_lossy):
        sys.exit(1)


async def _import(target: Target, rows: Any, prune: bool, dry_run: bool, report: Any, samples: int) -> Summary:
    redis = target.client()
    try:
        importer = Importer(AttendeeStore(redis, target.venue), "import", report, samples if dry_run else 0)
        await importer.load(rows, dry_run)
        if prune:
            await importer.prune(dry_run)
        return importer.summary
    finally:
        await redis.aclose()


def _check_code(code: str) -> None:
    if not CODE_RE.fullmatch(code):
        fail("a ticket code is 1-128 printable characters without spaces")


def _line(data: dict[str, Any]) -> str:
    badge = data["badge"]
    where = f" at {badge['location'] or badge['printer']}" if badge["state"] != "none" else ""
    when = f" {when_printed(badge['printed_ms'])}" if badge["printed_ms"] else ""
    status = " [CANCELLED]" if data["status"] == "cancelled" else ""
    company = f" · {data['company']}" if data["company"] else ""
    return shown(f"{data['code']}  {data['name']}{company}{status}  badge: {badge['state']}{where}{when}", 400)


@attendees.command()
@fleet_options
@click.argument("code")
@click.option("--json", "as_json", is_flag=True)
def show(target: Target, code: str, as_json: bool) -> None:
    """One attendee by ticket code, with their badge's state."""
    _check_code(code)
    data = run_async(_show(target, code))
    if data is None:
        fail(f"no attendee with that code in venue {target.venue}", 1)
        return
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False))
        return
    click.echo(_line(data))
    for key in ("role", "ticket_type", "order_code", "email", "source", "job_id"):
        if data[key]:
            click.echo(f"  {key}: {shown(data[key], 300)}")
    for key, value in data["fields"].items():
        click.echo(f"  fields.{key}: {shown(value, 300)}")
    for key, value in data.get("source_says", {}).items():
        click.echo(f"  corrected at the desk: {key} (the source says {shown(value, 300)})")


async def _show(target: Target, code: str) -> dict[str, Any] | None:
    redis = target.client()
    try:
        store = AttendeeStore(redis, target.venue)
        attendee = await store.get(code)
        if attendee is None:
            return None
        (badge,) = await store.badge_states([attendee])
        return describe(attendee, badge)
    finally:
        await redis.aclose()


@attendees.command()
@fleet_options
@click.argument("text", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True)
def search(target: Target, text: tuple[str, ...], as_json: bool) -> None:
    """At most 50 attendees whose name, company, order code or e-mail has words starting with TEXT's words."""
    found = run_async(_search(target, " ".join(text)))
    if as_json:
        click.echo(json.dumps(found, ensure_ascii=False))
        return
    for data in found:
        click.echo(_line(data))
    click.echo(f"{len(found)} found" + (" (the first 50)" if len(found) >= 50 else ""))


async def _search(target: Target, text: str) -> list[dict[str, Any]]:
    redis = target.client()
    try:
        store = AttendeeStore(redis, target.venue)
        found = await store.search(text)
        states = await store.badge_states(found)
        return [describe(a, b) for a, b in zip(found, states, strict=True)]
    finally:
        await redis.aclose()


EXPORT_COLUMNS = ("code", "name", "company", "role", "ticket_type", "order_code", "email", "status", "job_id")
#: What makes a spreadsheet read a cell as a formula (OWASP's CSV injection rule): a name from pretix or a desk such
#: as ``=HYPERLINK("http://...")`` or ``@SUM(...)`` would run, or send the sheet's data away, when staff open the
#: export in Excel or LibreOffice.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value: object) -> object:
    """A cell as a spreadsheet shows it and never runs it: text starting with a formula character gets a ``'`` in
    front (the spreadsheets' own mark for "this is text"; they hide it). Numbers are left as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


@attendees.command()
@fleet_options
@click.option("-o", "--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--checked-in", is_flag=True, help="Only attendees checked in (badge printed, or pre-printed and handed over)."
)
@click.option("--in-boxes", is_flag=True, help="Only attendees whose pre-printed badge is still in its box (no-shows).")
def export(target: Target, out: Path, checked_in: bool, in_boxes: bool) -> None:
    """Write the list as CSV (UTF-8) for the registration system: each attendee, badge state and when it printed
    (printed_utc: ISO 8601 with date and offset, 2026-06-11T14:03:07+00:00), and where a pre-printed badge is
    (preprint_run, preprint_box, preprint_state: planned, preprinted, handed_over or void). A cell starting with
    = + - @, a tab or a carriage return is written with ' in front, so a spreadsheet shows it as text and never runs
    it."""
    count = run_async(_export(target, out, checked_in, in_boxes))
    click.echo(f"{out}: {count} attendee(s)")


async def _export(target: Target, out: Path, checked_in: bool, in_boxes: bool = False) -> int:
    from preprint.store import PreprintStore

    redis = target.client()
    written = 0
    try:
        store = AttendeeStore(redis, target.venue)
        preprints = PreprintStore(redis, target.venue, store)
        with out.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow([
                *EXPORT_COLUMNS, "badge", "printed_at", "printed_utc", "reprints", "preprint_run", "preprint_box",
                "preprint_state",
            ])  # fmt: skip
            codes: list[str] = []

            async def flush() -> int:
                found = [a for a in await store.get_many(codes) if a is not None]
                states = await store.badge_states(found)
                n = 0
                for attendee, badge in zip(found, states, strict=True):
                    where = await preprints.where(attendee) if attendee.preprint else None
                    boxed = where.state if where else ""
                    if checked_in and badge.state != "printed" and boxed != "handed_over":
                        continue
                    if in_boxes and boxed != "preprinted":
                        continue
                    data = describe(attendee, badge)
                    when = printed_iso(badge.printed_ms)
                    cells = [
                        *(data[c] for c in EXPORT_COLUMNS), badge.state, badge.location, when, badge.reprints,
                        where.run if where else "", where.box if where else "", boxed,
                    ]  # fmt: skip
                    writer.writerow([spreadsheet_cell(cell) for cell in cells])
                    n += 1
                return n

            async for code in store.codes():
                codes.append(code)
                if len(codes) >= 500:
                    written += await flush()
                    codes = []
            written += await flush()
    finally:
        await redis.aclose()
    return written


@attendees.command()
@fleet_options
@click.option("--yes", is_flag=True, help="Do not ask.")
def purge(target: Target, yes: bool) -> None:
    """After the event: remove the list, the pre-print runs, every personal field of the venue's badge jobs, and the
    event log.

    See docs/security.md for what Redis's own files keep until they are rewritten.
    """
    if not yes:
        click.confirm(
            f"remove venue {target.venue}'s attendee list, pre-print runs and the names on its badge jobs?", abort=True
        )
    try:
        done = run_async(_purge(target))
    except PurgeRefused as exc:
        fail(str(exc), 1)
        return
    click.echo(
        f"removed {done['attendees']} attendee(s) and {done['runs']} pre-print run(s); "
        f"blanked {done['jobs']} badge job(s); event log removed"
    )


async def _purge(target: Target) -> dict[str, int]:
    redis = target.client()
    try:
        return await AttendeeStore(redis, target.venue).purge()
    finally:
        await redis.aclose()
