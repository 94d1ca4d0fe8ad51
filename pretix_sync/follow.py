"""What both pretix sync commands share: their pretix options, their messages and the read loop.

``badge-agent attendees sync`` (cli/commands/pretix_sync.py) writes what it reads into the venue's attendee list;
``python -m pretix_sync`` (cli/commands/pretix_read.py) writes it as JSON lines, to look at what pretix holds.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import click

from core.errors import EXIT_CONFIG
from core.logs import shown
from pretix_sync.changes import ListChanges
from pretix_sync.errors import PretixUnavailable
from pretix_sync.records import AttendeeRecord

F = TypeVar("F", bound=Callable[..., Any])


def say(text: str) -> None:
    click.echo(shown(text, 2000), err=True)


def fail(message: str, code: int) -> None:
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


def event_and_answers(event: str, answers: tuple[str, ...]) -> tuple[str, str, dict[str, str]]:
    """``--event`` and ``--answer`` read, or the command ends with exit 78 naming the option."""
    try:
        organizer, slug = parse_event(event)
    except click.BadParameter as exc:
        fail(f"--event {event!r}: {exc.message}", EXIT_CONFIG)
    try:
        questions = parse_answers(answers)
    except click.BadParameter as exc:
        fail(f"--answer {exc.message}", EXIT_CONFIG)
    return organizer, slug, questions


def pretix_options(command: F) -> F:
    """``--pretix``, ``--event``, ``--token-file``, ``--checkin-list`` and ``--answer``."""
    for option in reversed(
        (
            click.option("--pretix", "url", required=True, help="pretix's address, e.g. https://pretix.eu"),
            click.option("--event", required=True, help="ORGANIZER/EVENT: the short names in the event's address."),
            click.option(
                "--token-file",
                type=click.Path(path_type=Path),
                required=True,
                help="A file holding a team's API token (mode 600); the token is never shown or logged.",
            ),
            click.option(
                "--checkin-list",
                "list_id",
                type=int,
                required=True,
                help="The check-in list's id (pretix decides who it admits).",
            ),
            click.option(
                "--answer",
                "answers",
                multiple=True,
                metavar="FIELD=QUESTION",
                help="Copy the answer to a pretix question (by its identifier) into a field; repeatable.",
            ),
        )
    ):
        command = option(command)
    return command


class Written(Protocol):
    def line(self) -> str: ...


class RecordSink(Protocol):
    """Where a read's records go: the venue's list (pretix_sync/listing.py) or JSON lines
    (cli/commands/pretix_read.py)."""

    async def write(self, records: Sequence[AttendeeRecord]) -> Written: ...


async def follow_list(
    changes: ListChanges, writer: RecordSink, follow: bool, interval: float, stop: asyncio.Event
) -> None:
    """One read of the check-in list's changes into ``writer``, or (``follow``) one every ``interval`` seconds until
    ``stop``; an outage after the first read is said once and waited out."""
    first = True
    away_since: float | None = None
    while True:
        try:
            batch = await changes.read()
        except PretixUnavailable as exc:
            if first or not follow:
                raise
            if away_since is None:  # said once per outage, not every few seconds
                away_since = time.monotonic()
                say(f"pretix unreachable, trying again every {interval:g} s: {exc}")
        else:
            if away_since is not None:
                say(f"pretix answers again after {time.monotonic() - away_since:.0f} s")
                away_since = None
            written = await writer.write(batch.records)
            if first or batch.records:
                what = "first read" if first else "changes"
                say(
                    f"pretix {what}: {batch.orders} orders, {batch.valid} valid, {batch.cancelled} cancelled,"
                    f" {batch.needs_attention} for the help desk ({batch.requests_seconds:.1f} s); {written.line()}"
                )
            first = False
        if not follow:
            return
        try:
            await asyncio.wait_for(stop.wait(), timeout=interval)
            return
        except TimeoutError:
            pass
