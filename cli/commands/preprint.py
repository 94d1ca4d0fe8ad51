"""``badge-agent preprint``: badges printed before the doors open, sorted by name and packed in boxes.

``plan`` chooses and boxes the attendees and stores the run in the venue's Redis; ``print`` prints it on the venue's
printers, a box at a time (cli/commands/preprint_pool.py); ``pdf`` writes a run as a PDF for a print shop or an
office printer and ``done`` says its sheets are printed; ``status`` shows a run; ``voids`` lists
the badges staff must pull from the boxes; ``void`` voids those of an older layout; ``rm`` drops a run never printed.
"""

from __future__ import annotations

import json
from typing import Any

import click
from rich.console import Console

from cli.commands.preprint_pool import pool_lines, print_run
from cli.main import Target, fleet_options, run_async
from preprint.plan import DEFAULT_BOX_SIZE, DEFAULT_PICKUP, SORTS, SortBy
from preprint.pool import pool_status
from preprint.store import PlanReport, PreprintStore, Run, StoredBox


@click.group()
def preprint() -> None:
    """Badges printed before the doors open: planned, boxed by name, printed as a PDF or on the venue's printers."""


def _run_lines(run: Run, boxes: list[StoredBox], counts: dict[str, int] | None = None) -> list[str]:
    where = {"pdf": "as a PDF", "pool": "on the venue's printers", "": "not yet printed"}.get(run.mode, run.mode)
    types = ", ".join(run.ticket_types) or "all ticket types"
    lines = [
        f"run {run.name}: {run.state}, {where}; {run.total} badges in {len(boxes)} boxes of up to {run.box_size} "
        f"(sorted by {run.sort}; {types}); pick-up: {run.pickup}",
    ]
    if not run.listed:
        lines.append("  the plan was cut short: drop it (badge-agent preprint rm) and plan again")
    if counts:
        lines.append("  " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items()))
    lines += [f"  {box.label} ({box.count})" for box in boxes]
    return lines


@preprint.command()
@fleet_options
@click.option("--ticket-type", "ticket_types", multiple=True, help="Only attendees of this ticket type (repeatable).")
@click.option("--sort", "sort", type=click.Choice(SORTS), default="family", show_default=True)
@click.option("--box-size", type=int, default=DEFAULT_BOX_SIZE, show_default=True, help="Badges a box.")
@click.option("--name", "name", default="", help="The run's name (default: run-<n>).")
@click.option("--pickup", default="", help=f"Where a kiosk sends its attendees (default: {DEFAULT_PICKUP}).")
@click.option("--json", "as_json", is_flag=True)
def plan(
    target: Target, ticket_types: tuple[str, ...], sort: SortBy, box_size: int, name: str, pickup: str, as_json: bool
) -> None:
    """Plan a run: the valid attendees without a badge and in no run yet, sorted, in boxes. Prints nothing."""
    report = run_async(_plan(target, list(ticket_types), sort, box_size, name, pickup))
    if as_json:
        click.echo(json.dumps(_report_json(report), ensure_ascii=False))
        return
    out = Console(highlight=False, soft_wrap=True)
    for line in _run_lines(report.run, report.boxes):
        out.print(line, markup=False)
    if report.left_out:
        out.print("left out: " + ", ".join(f"{n} {why}" for why, n in sorted(report.left_out.items())), markup=False)


def _report_json(report: PlanReport) -> dict[str, Any]:
    return {
        **report.run.as_dict(),
        "boxes": [{"number": b.number, "first": b.first, "last": b.last, "count": b.count} for b in report.boxes],
        "left_out": report.left_out,
    }


async def _plan(
    target: Target, ticket_types: list[str], sort: SortBy, box_size: int, name: str, pickup: str
) -> PlanReport:
    redis = target.client()
    try:
        store = PreprintStore(redis, target.venue)
        if not name:
            taken = set(await store.names())
            n = len(taken) + 1
            while f"run-{n}" in taken or await store.run(f"run-{n}") is not None:
                n += 1
            name = f"run-{n}"
        return await store.plan(name, ticket_types=ticket_types, sort=sort, box_size=box_size, pickup=pickup)
    finally:
        await redis.aclose()


@preprint.command()
@fleet_options
@click.argument("run", required=False)
@click.option("--json", "as_json", is_flag=True)
def status(target: Target, run: str | None, as_json: bool) -> None:
    """A run's boxes and counts (without RUN: every run)."""
    found = run_async(_status(target, run))
    if as_json:
        click.echo(json.dumps(found, ensure_ascii=False))
        return
    out = Console(highlight=False, soft_wrap=True)
    if not found:
        out.print("no pre-print runs in this venue (badge-agent preprint plan)", markup=False)
    for item in found:
        for line in item["lines"]:
            out.print(line, markup=False)


async def _status(target: Target, name: str | None) -> list[dict[str, Any]]:
    redis = target.client()
    try:
        store = PreprintStore(redis, target.venue)
        names = [name] if name else await store.names()
        found = []
        for n in names:
            run = await store.need_run(n)
            boxes = await store.boxes(run)
            counts = await store.counts(run)
            lines = _run_lines(run, boxes, counts)
            extra: dict[str, Any] = {}
            if run.mode == "pool":
                # A run on the venue's printers: how far it is, box by box, and when it should be done.
                pool = await pool_status(redis, target.venue, n)
                lines += pool_lines(pool)
                extra["pool"] = {"printed": pool.printed, "total": pool.total, "eta_s": pool.eta_s,
                                 "maybe_printed": pool.maybe_printed,
                                 "boxes": [vars(b) for b in pool.boxes]}  # fmt: skip
            found.append(
                {
                    **run.as_dict(),
                    "boxes": [{"number": b.number, "first": b.first, "last": b.last, "count": b.count} for b in boxes],
                    "counts": counts,
                    "lines": lines,
                    **extra,
                }
            )
        return found
    finally:
        await redis.aclose()


@preprint.command()
@fleet_options
@click.argument("run")
def rm(target: Target, run: str) -> None:
    """Drop a run never printed: its attendees can be planned again."""
    dropped = run_async(_store_call(target, lambda s: s.remove(run)))
    click.echo(f"run {run} dropped; {dropped} attendees are in no run again")


@preprint.command()
@fleet_options
@click.argument("run")
def done(target: Target, run: str) -> None:
    """Say a PDF run's sheets are printed: its attendees' badges are in their boxes from now on."""
    marked = run_async(_store_call(target, lambda s: s.done(run)))
    click.echo(f"run {run}: {marked} badges pre-printed")


async def _store_call(target: Target, call: Any) -> Any:
    redis = target.client()
    try:
        return await call(PreprintStore(redis, target.venue))
    finally:
        await redis.aclose()


preprint.add_command(print_run)
