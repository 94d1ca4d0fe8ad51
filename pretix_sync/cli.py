"""``sync``: read a pretix event's check-in list as attendee records, once or (``--follow``) every few seconds.

Each record is written as one JSON line (the ticket code, pretix's job id, name, company, role, fields, status and
why, needs_attention); a line on stderr says what each read brought. Writing the records into the venue's attendee
list is the attendee list's part; this command is its reader. Exit 78 for settings to fix (the URL, the token, the
event or list), 69 when pretix cannot be reached or fails on its side (with ``--follow``: only at the first read;
later it waits for pretix and carries on).
"""

from __future__ import annotations

import asyncio
import re
import signal
import sys
import time
from pathlib import Path
from typing import TextIO

import click

from agent.errors import EXIT_CONFIG
from agent.logs import safe_json, shown
from pretix_sync.changes import Batch, ListChanges
from pretix_sync.client import PretixClient
from pretix_sync.errors import PretixError, PretixUnavailable
from pretix_sync.token import read_token


def _fail(message: str, code: int) -> None:
    click.echo(f"badge-agent: {shown(message, 1000)}", err=True)
    sys.exit(code)


def parse_event(value: str) -> tuple[str, str]:
    organizer, _, event = value.strip().partition("/")
    if not organizer or not event or "/" in event:
        raise click.BadParameter("give ORGANIZER/EVENT, the two short names pretix shows in the event's address")
    return organizer, event


#: A field name, as the venue's jobs take them; the fields a record always has cannot be mapped onto.
FIELD_RE = re.compile(r"[a-z0-9_]{1,40}")
RECORD_FIELDS = frozenset({"ticket_type", "product_id"})


def parse_answers(values: tuple[str, ...]) -> dict[str, str]:
    """``--answer FIELD=QUESTION`` options: field name -> pretix question identifier."""
    mapped: dict[str, str] = {}
    for value in values:
        field, _, question = value.partition("=")
        field, question = field.strip(), question.strip()
        if not FIELD_RE.fullmatch(field) or not question:
            raise click.BadParameter(f"{value!r}: give FIELD=QUESTION, FIELD of a-z 0-9 _ (e.g. pronouns=PRONOUNS)")
        if field in RECORD_FIELDS:
            raise click.BadParameter(f"{value!r}: {field} is the product's, not an answer's")
        mapped[field] = question
    return mapped


def _summary(batch: Batch, first: bool) -> str:
    what = "first read" if first else "changes"
    return (
        f"pretix {what}: {batch.orders} orders, {batch.valid} valid, {batch.cancelled} cancelled,"
        f" {batch.needs_attention} for the help desk ({batch.requests_seconds:.1f} s)"
    )


async def _run(changes: ListChanges, follow: bool, interval: float, out: TextIO, stop: asyncio.Event) -> None:
    first = True
    waiting_since: float | None = None
    while True:
        try:
            batch = await changes.read()
        except PretixUnavailable as exc:
            if first or not follow:
                raise
            if waiting_since is None:  # said once per outage, not every few seconds
                waiting_since = time.monotonic()
                click.echo(f"pretix unreachable, trying again every {interval:g} s: {shown(str(exc), 500)}", err=True)
        else:
            if waiting_since is not None:
                click.echo(f"pretix answers again after {time.monotonic() - waiting_since:.0f} s", err=True)
                waiting_since = None
            for record in batch.records:
                out.write(safe_json(record.as_row()) + "\n")
            out.flush()
            if first or batch.records:
                click.echo(_summary(batch, first), err=True)
            first = False
        if not follow:
            return
        try:
            await asyncio.wait_for(stop.wait(), timeout=interval)
            return
        except TimeoutError:
            pass


@click.command("sync")
@click.option("--pretix", "url", required=True, help="pretix's address, e.g. https://pretix.eu")
@click.option("--event", required=True, help="ORGANIZER/EVENT: the short names in the event's address.")
@click.option(
    "--token-file",
    type=click.Path(path_type=Path),
    required=True,
    help="A file holding a team's API token (mode 600); the token is never shown or logged.",
)
@click.option(
    "--checkin-list", "list_id", type=int, required=True, help="The check-in list's id (pretix decides who it admits)."
)
@click.option(
    "--answer",
    "answers",
    multiple=True,
    metavar="FIELD=QUESTION",
    help="Copy the answer to a pretix question (by its identifier) into a field; repeatable.",
)
@click.option("--follow", is_flag=True, help="Keep reading changes until stopped (SIGTERM or Ctrl-C).")
@click.option(
    "--interval",
    type=click.FloatRange(min=0.2),
    default=5.0,
    show_default=True,
    help="Seconds between two reads with --follow.",
)
@click.option(
    "-o",
    "--output",
    type=click.File("w", encoding="utf-8"),
    default="-",
    help="Where the JSON lines go (default: standard output).",
)
def sync(
    url: str,
    event: str,
    token_file: Path,
    list_id: int,
    answers: tuple[str, ...],
    follow: bool,
    interval: float,
    output: TextIO,
) -> None:
    """Read the attendees a pretix check-in list admits, then (--follow) what changes, as JSON lines."""
    try:
        organizer, slug = parse_event(event)
    except click.BadParameter as exc:
        _fail(f"--event {event!r}: {exc.message}", EXIT_CONFIG)
    try:
        questions = parse_answers(answers)
    except click.BadParameter as exc:
        _fail(f"--answer {exc.message}", EXIT_CONFIG)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        async with PretixClient(url, organizer, slug, read_token(token_file)) as client:
            await _run(ListChanges(client, list_id, questions=questions), follow, interval, output, stop)

    try:
        asyncio.run(main())
    except PretixError as exc:
        _fail(str(exc), exc.exit_code)
