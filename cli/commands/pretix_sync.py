"""``badge-agent attendees sync``: keep the venue's attendee list in step with a pretix event, and (``--follow``)
tell pretix about every confirmed print of its attendees.

One read, or with ``--follow`` a read every ``--interval`` seconds (what changed since the last one), written into
the list (pretix_sync/listing.py); beside it, with ``--follow``, the outbox's sender (pretix_sync/outbox.py).
Exit 78 for settings to fix (the URL, the token, the event or list), 69 when pretix or Redis cannot be reached or
pretix fails on its side, pages that loop or never end included (with ``--follow``: pretix only at the first read;
later it waits for pretix and carries on). SIGTERM or Ctrl-C ends it within 5 s wherever it is, with 0.
"""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import click

from attendees.store import AttendeeStore
from cli.main import Target, fleet_options, run_async
from pretix_sync.changes import ListChanges
from pretix_sync.client import PretixClient
from pretix_sync.errors import PretixError
from pretix_sync.follow import event_and_answers, fail, follow_list, pretix_options, say
from pretix_sync.listing import ListWriter
from pretix_sync.outbox import Outbox, Sender
from pretix_sync.token import read_token


async def _sync(
    target: Target,
    url: str,
    organizer: str,
    event: str,
    token_file: Path,
    list_id: int,
    questions: dict[str, str],
    follow: bool,
    interval: float,
) -> None:
    token = read_token(token_file)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    redis = target.client()
    try:
        store = AttendeeStore(redis, target.venue)
        async with PretixClient(url, organizer, event, token, stop=stop) as client:
            writer = ListWriter(store, say)
            changes = ListChanges(client, list_id, questions=questions, held=writer.held)
            reading = follow_list(changes, writer, follow, interval, stop)
            if not follow:
                await reading
                return
            sender = Sender(Outbox(redis, target.venue, store.scripts), client, list_id, report=say)
            tasks = [asyncio.create_task(reading), asyncio.create_task(sender.run(stop))]
            # A stop cancels a send under way too: an entry leaves the outbox only once pretix answered, and sent
            # again it makes no second check-in (its nonce) or print log (looked up first).
            stopping = asyncio.create_task(stop.wait())
            try:
                done, _ = await asyncio.wait([*tasks, stopping], return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()  # a failure of either ends the sync with its message
            finally:
                stop.set()
                for task in (*tasks, stopping):
                    task.cancel()
                await asyncio.gather(*tasks, stopping, return_exceptions=True)
    finally:
        await redis.aclose()


@click.command("sync")
@fleet_options
@pretix_options
@click.option(
    "--follow",
    is_flag=True,
    help="Keep the list in step and send confirmed prints to pretix until stopped (SIGTERM or Ctrl-C).",
)
@click.option(
    "--interval",
    type=click.FloatRange(min=0.2),
    default=5.0,
    show_default=True,
    help="Seconds between two reads of pretix's changes with --follow.",
)
def sync(
    target: Target,
    url: str,
    event: str,
    token_file: Path,
    list_id: int,
    answers: tuple[str, ...],
    follow: bool,
    interval: float,
) -> None:
    """Load the attendees a pretix check-in list admits into the venue's list; --follow keeps it in step and checks
    each attendee in on pretix when their first badge is confirmed printed (a reprint: a print log)."""
    organizer, slug, questions = event_and_answers(event, answers)

    async def guarded() -> PretixError | None:
        # Caught here: run_async ends every user error with 2, and pretix's have their own (78, 69).
        try:
            await _sync(target, url, organizer, slug, token_file, list_id, questions, follow, interval)
        except PretixError as exc:
            return exc
        return None

    error = run_async(guarded())
    if error is not None:
        fail(str(error), error.exit_code)
