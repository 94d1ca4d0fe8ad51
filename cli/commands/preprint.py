"""``badge-agent preprint``: badges printed before the doors open, sorted by name and packed in boxes.

``plan`` chooses and boxes the attendees and stores the run in the venue's Redis; ``print`` prints it on the venue's
printers, a box at a time (cli/commands/preprint_pool.py); ``pdf`` writes a run as a PDF for a print shop or an
office printer and ``done`` says its sheets are printed; ``status`` shows a run; ``voids`` lists
the badges staff must pull from the boxes; ``void`` voids those of an older layout; ``rm`` drops a run never printed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from cli.commands.preprint_pool import pool_lines, print_run
from cli.main import Target, fleet_options, run_async
from preprint.pdf import DEFAULT_STOCK, SHEETS
from preprint.plan import DEFAULT_BOX_SIZE, DEFAULT_PICKUP, SORTS, SortBy
from preprint.pool import pool_status
from preprint.printing import write_pdf
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


@preprint.command("pdf")
@fleet_options
@click.argument("run")
@click.option("-o", "--output", "out", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--sheet", type=click.Choice(sorted(SHEETS)), default="a4", show_default=True)
@click.option("--per-sheet", type=int, default=None, help="Badges a sheet (default: as many as fit).")
@click.option("--dpi", type=int, default=300, show_default=True)
@click.option("--badge-size", "stock", default=DEFAULT_STOCK, show_default=True, help="WIDTHxHEIGHT in mm.")
@click.option("--butterfly", is_flag=True, help="Fold-over badges: the back half, turned, above the front.")
@click.option("--json", "as_json", is_flag=True)
def pdf_command(
    target: Target,
    run: str,
    out: Path,
    sheet: str,
    per_sheet: int | None,
    dpi: int,
    stock: str,
    butterfly: bool,
    as_json: bool,
) -> None:
    """Write RUN as a PDF for a print shop or an office printer: a separator page a box, cut marks. Its badges count
    as pre-printed once you say the sheets are printed (preprint done RUN), not before."""
    report = run_async(
        _store_call(
            target,
            lambda s: write_pdf(
                s, run, out, sheet=sheet, per_sheet=per_sheet, dpi=dpi, stock=stock, butterfly=butterfly
            ),
        )
    )
    if as_json:
        click.echo(json.dumps(report.as_dict(), ensure_ascii=False))
        return
    out_console = Console(highlight=False, soft_wrap=True)
    out_console.print(f"{out}: {report.badges} badges on {report.pages} pages (run {run})", markup=False)
    for code, name, why in report.left_out:
        out_console.print(f"  left out: {name or '?'} ({code}): {why}", markup=False)
    out_console.print(f"once the sheets are printed: badge-agent preprint done {run}", markup=False)


@preprint.command()
@fleet_options
@click.argument("run")
@click.option("--all", "everything", is_flag=True, help="Also those never printed (nothing to pull).")
@click.option("--json", "as_json", is_flag=True)
def voids(target: Target, run: str, everything: bool, as_json: bool) -> None:
    """The badges of RUN staff must pull from their boxes: their attendees' details changed (the door prints
    theirs)."""
    found = run_async(_store_call(target, lambda s: s.voids(run)))
    shown = [v for v in found if v.printed or everything]
    if as_json:
        click.echo(json.dumps([v.as_dict() for v in shown], ensure_ascii=False))
        return
    out = Console(highlight=False, soft_wrap=True)
    if not shown:
        out.print(f"run {run}: nothing to pull from the boxes", markup=False)
    for v in shown:
        what = "pull" if v.printed else "never printed"
        out.print(f"box {v.box}: {v.name} ({v.code}): {v.reason} — {what}", markup=False)


@preprint.command()
@fleet_options
@click.argument("run")
@click.option("--layout", "layout", required=True, help="Void the badges drawn with an older version of it.")
def void(target: Target, run: str, layout: str) -> None:
    """Void the badges of RUN drawn with an older version of a layout than the venue's now (a new version voids
    nothing by itself): staff pull them, the door prints their attendees' badges."""
    voided, version = run_async(_store_call(target, lambda s: s.void_layout(run, layout)))
    click.echo(f"run {run}: {voided} badges drawn before layout {layout} v{version} are void (preprint voids {run})")
