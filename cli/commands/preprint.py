"""``badge-agent preprint``: pre-printed badges, a planned run of boxes (preprint/)."""

from __future__ import annotations

import click

from cli.commands.preprint_pool import print_run, run_status


@click.group()
def preprint() -> None:
    """Pre-printed badges: a planned run of boxes, printed on the venue's printers."""


preprint.add_command(print_run)
preprint.add_command(run_status)
