"""``badge-agent preprint print RUN``: a planned run printed on the venue's printers, box by box (preprint/pool.py),
with a progress bar; and the lines ``preprint status RUN`` adds for such a run (``pool_lines``)."""

from __future__ import annotations

import asyncio

import click

from cli.main import Target, fleet_options, run_async
from core.logs import shown
from preprint.pool import PoolStatus, Started, pool_status, print_on_pool

#: How often the progress bar asks how far the run is.
POLL_S = 1.0


def _names(given: tuple[str, ...]) -> list[str]:
    """``--printers a --printers b``, ``--printers a,b`` or ``--printers "a b"``: the names, once each, in order."""
    names: list[str] = []
    for item in given:
        for name in item.replace(",", " ").split():
            if name not in names:
                names.append(name)
    return names


def _eta(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


@click.command("print")
@fleet_options
@click.argument("run")
@click.option(
    "--printers",
    "printers",
    multiple=True,
    metavar="P",
    help="Only these printers print the run (repeat, or apart by commas); default: every printer of the venue.",
)
@click.option("--wait/--no-wait", default=True, help="Show a progress bar until every badge printed (the default).")
def print_run(target: Target, run: str, printers: tuple[str, ...], wait: bool) -> None:
    """Print the planned RUN on the venue's printers: a ready printer claims the next whole box and prints it in
    order, opened by a separator label, so each printer's stack is a box in order. Door badges go first.

    A run is printed once: a second `print` is refused. Ctrl-C stops the progress bar, not the run.
    """
    names = _names(printers)

    async def start() -> Started:
        redis = target.client()
        try:
            return await print_on_pool(redis, target.venue, run, names)
        finally:
            await redis.aclose()

    started = run_async(start())
    where = ", ".join(names) if names else "every printer of the venue"
    click.echo(f"{shown(run)}: {started.boxes} box(es), {started.badges} badge(s) handed to {shown(where)}")
    if not wait:
        click.echo(f"follow it with: badge-agent preprint status {shown(run)}")
        return
    last = run_async(_follow(target, run, started.badges))
    _report(last)


async def _follow(target: Target, run: str, total: int) -> PoolStatus:
    """The progress bar, with click's ETA, until every badge of the run printed (or Ctrl-C)."""
    redis = target.client()
    try:
        status = await pool_status(redis, target.venue, run)
        with click.progressbar(length=max(total, 1), label="printed", show_eta=True, show_pos=True) as bar:
            shown_so_far = 0
            try:
                while True:
                    status = await pool_status(redis, target.venue, run)
                    bar.update(status.printed - shown_so_far)
                    shown_so_far = status.printed
                    if status.done:
                        break
                    await asyncio.sleep(POLL_S)
            except (KeyboardInterrupt, asyncio.CancelledError):
                pass
        return status
    finally:
        await redis.aclose()


def pool_lines(status: PoolStatus) -> list[str]:
    """A run on the venue's printers as ``preprint status`` shows it: badges printed, ETA, each box's printer."""
    eta = "" if status.done else f"; ETA {_eta(status.eta_s)}"
    lines = [f"  on the printers: {status.printed} of {status.total} badge(s) printed{eta}"]
    for box in status.boxes:
        where = f" on {shown(box.printer)}" if box.printer else ""
        continued = f"; handed on {box.continued} time(s), last from {shown(box.back_from)}" if box.continued else ""
        lines.append(f"  box {box.number:>3}: {box.state:<8}{where}, {box.printed}/{box.count}{continued}")
    if status.maybe_printed:
        lines.append(
            f"  {len(status.maybe_printed)} badge(s) may be in two boxes (a copy may lie at a printer that died): "
            + ", ".join(shown(j) for j in status.maybe_printed[:10])
        )
    return lines


def _report(status: PoolStatus) -> None:
    click.echo(f"run {shown(status.run)}: {status.state}")
    for line in pool_lines(status):
        click.echo(line)
