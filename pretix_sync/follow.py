"""What both pretix sync commands share: their pretix options, their messages and the read loop.

``badge-agent attendees sync`` (cli/commands/pretix_sync.py) writes what it reads into the venue's attendee list;
``python -m pretix_sync`` (cli/commands/pretix_read.py) writes it as JSON lines, to look at what pretix holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
import time
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import click

from core.errors import EXIT_CONFIG
from core.logs import shown
from pretix_sync.changes import Batch, ListChanges
from pretix_sync.errors import PretixMisbehaves, PretixUnavailable, ReadStopped
from pretix_sync.records import AttendeeRecord

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


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


W = TypeVar("W", bound=Written)


class RecordSink(Protocol[W]):
    """Where a read's records go: the venue's list (pretix_sync/listing.py) or JSON lines
    (cli/commands/pretix_read.py). A read hands them on in batches, each added to the same ``written``."""

    async def write(self, records: Sequence[AttendeeRecord], written: W | None = None) -> W: ...


async def until_stopped(work: Coroutine[Any, Any, T], stop: asyncio.Event) -> T | None:
    """``work``'s result, or None once ``stop`` is set: then it is cancelled wherever it is (a request to pretix
    under way, a write), so a stop never waits for a slow or silent pretix."""
    task = asyncio.ensure_future(work)
    stopping = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:  # also when the caller is cancelled: the work never outlives it
        stopping.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, ReadStopped):
                await task
    if stop.is_set():
        if not task.cancelled():
            task.exception()  # taken, whatever it is: a stop is a clean end
        return None
    return task.result()


async def follow_list(
    changes: ListChanges, writer: RecordSink[Any], follow: bool, interval: float, stop: asyncio.Event
) -> None:
    """One read of the check-in list's changes into ``writer``, or (``follow``) one every ``interval`` seconds until
    ``stop``; an outage after the first read is said once and waited out. ``stop`` ends a read wherever it is: what
    it wrote stays, and the next sync reads it again (the mark moves only after a whole read)."""
    first = True
    away_since: float | None = None
    while not stop.is_set():
        written: Any = None

        async def write(records: list[AttendeeRecord]) -> None:
            nonlocal written
            written = await writer.write(records, written)

        try:
            batch: Batch | None = await until_stopped(changes.read_into(write, stop), stop)
        except PretixUnavailable as exc:
            if first or not follow:
                raise
            if away_since is None:  # said once per outage, not every few seconds
                away_since = time.monotonic()
                what = "failing on its side" if isinstance(exc, PretixMisbehaves) else "unreachable"
                say(f"pretix {what}, trying again every {interval:g} s: {exc}")
        else:
            if batch is None:
                if first:
                    say("stopped during the first read: what it wrote stays; the next sync reads everything again")
                return
            if away_since is not None:
                say(f"pretix answers again after {time.monotonic() - away_since:.0f} s")
                away_since = None
            if written is None:
                written = await writer.write([], None)
            if first or batch.read:
                what = "first read" if first else "changes"
                say(
                    f"pretix {what}: {batch.orders} orders, {batch.valid} valid, {batch.cancelled} cancelled,"
                    f" {batch.needs_attention} for the help desk ({batch.requests_seconds:.1f} s); {written.line()}"
                )
            first = False
        if not follow:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval)
