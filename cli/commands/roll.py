"""``badge-agent roll PRINTER --labels N``: staff mark a roll change, so the board can estimate the labels left on a
printer that does not count them itself (eventday/rolls.py)."""

from __future__ import annotations

import click

from cli.main import Target, fail, fleet_options, run_async
from eventday.rolls import RollError, RollMark, mark_roll


@click.command()
@fleet_options
@click.argument("printer")
@click.option("--labels", type=int, required=True, help="Labels on the new roll (its box says).")
def roll(target: Target, printer: str, labels: int) -> None:
    """Mark that PRINTER got a new roll of LABELS labels now: its labels left are then LABELS minus what it has
    printed since (on the board and the intake's /metrics), unless the printer reports its own count."""

    async def go() -> RollMark:
        redis = target.client()
        try:
            return await mark_roll(redis, target.venue, printer, labels)
        except RollError as exc:
            fail(str(exc), 2)
            raise  # fail exits; this keeps the type checker sure
        finally:
            await redis.aclose()

    mark = run_async(go())
    click.echo(f"{mark.printer}: new roll of {mark.labels} labels marked; its labels left count down from here")
