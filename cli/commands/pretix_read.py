"""``sync``: read a pretix event's check-in list as attendee records, once or (``--follow``) every few seconds.

Each record is written as one JSON line (the ticket code, pretix's job id, name, company, role, fields, status and
why, needs_attention); a line on stderr says what each read brought. Writing the records into the venue's attendee
list is ``badge-agent attendees sync`` (cli/commands/pretix_sync.py); this command shows what pretix holds. Exit 78 for
settings to fix (the URL, the token, the event or list), 69 when pretix cannot be reached or fails on its side,
pages that loop or never end included (with ``--follow``: only at the first read; later it waits for pretix and
carries on). SIGTERM or Ctrl-C ends it within 5 s wherever it is, with 0.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import click

from core.logs import safe_json
from pretix_sync.changes import ListChanges
from pretix_sync.client import PretixClient
from pretix_sync.errors import PretixError
from pretix_sync.follow import event_and_answers, fail, follow_list, pretix_options
from pretix_sync.records import AttendeeRecord
from pretix_sync.token import read_token


class JsonLines:
    """Each record as one JSON line on ``out``."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    async def write(self, records: Sequence[AttendeeRecord], written: Wrote | None = None) -> Wrote:
        for record in records:
            self.out.write(safe_json(record.as_row()) + "\n")
        self.out.flush()
        written = written if written is not None else Wrote()
        written.lines += len(records)
        return written


@dataclass
class Wrote:
    lines: int = 0

    def line(self) -> str:
        return f"wrote {self.lines} JSON line(s)"


@click.command("sync")
@pretix_options
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
    organizer, slug, questions = event_and_answers(event, answers)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        async with PretixClient(url, organizer, slug, read_token(token_file), stop=stop) as client:
            await follow_list(
                ListChanges(client, list_id, questions=questions), JsonLines(output), follow, interval, stop
            )

    try:
        asyncio.run(main())
    except PretixError as exc:
        fail(str(exc), exc.exit_code)
