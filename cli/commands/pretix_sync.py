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
from core.errors import EXIT_CONFIG
from pretix_sync.changes import ListChanges
from pretix_sync.client import PretixClient
from pretix_sync.errors import PretixError
from pretix_sync.follow import event_and_answers, fail, follow_list, pretix_options, say
from pretix_sync.listing import ListWriter
from pretix_sync.outbox import Outbox, Sender
from pretix_sync.token import read_token
from pretix_sync.walk_ins import PAYMENTS, WalkInOrders, choose_products, publish_products


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
    walk_in_products: tuple[int, ...] = (),
    walk_in_payment: str = "paid",
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
            outbox = Outbox(redis, target.venue, store.scripts)
            sender = Sender(outbox, client, list_id, report=say)
            # What the desks offer for a walk-in's pretix order: these products, checked against the event's (none
            # given: the desks offer none). Its orders are made by the outbox's sender, one process at a time.
            products = choose_products(await client.items(), walk_in_products, f"{organizer}/{event}")
            await publish_products(redis, target.venue, products)

            async def holds_lease() -> bool:
                return (await outbox.lease(sender.me, sender.lease_ms)).held

            walk_ins = WalkInOrders(store, client, products, walk_in_payment, say, holds_lease, list_id)
            tasks = [asyncio.create_task(c) for c in (reading, sender.run(stop), walk_ins.run(stop))]
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
@click.option(
    "--walk-in-product",
    "walk_in_products",
    type=int,
    multiple=True,
    metavar="ID",
    help="A pretix product (its id) a desk may choose for a walk-in: the walk-in becomes an order of it (with"
    " --follow; repeatable).",
)
@click.option(
    "--walk-in-payment",
    type=click.Choice(PAYMENTS),
    default="paid",
    show_default=True,
    help="A walk-in's order: paid (at the product's price, marked paid) or free (no charge).",
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
    walk_in_products: tuple[int, ...],
    walk_in_payment: str,
) -> None:
    """Load the attendees a pretix check-in list admits into the venue's list; --follow keeps it in step and checks
    each attendee in on pretix when their first badge is confirmed printed (a reprint: a print log)."""
    organizer, slug, questions = event_and_answers(event, answers)
    if walk_in_products and not follow:
        fail("--walk-in-product: walk-ins' orders are made while the sync follows: add --follow", EXIT_CONFIG)

    async def guarded() -> PretixError | None:
        # Caught here: run_async ends every user error with 2, and pretix's have their own (78, 69).
        try:
            await _sync(
                target, url, organizer, slug, token_file, list_id, questions, follow, interval,
                walk_in_products, walk_in_payment,
            )  # fmt: skip
        except PretixError as exc:
            return exc
        return None

    error = run_async(guarded())
    if error is not None:
        fail(str(error), error.exit_code)
