"""``status``, ``job`` and ``events``: what the venue looks like, what happened to one badge, the audit log."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from typing import Any

import click
from redis.asyncio import Redis
from redis.exceptions import ResponseError
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.live import Live
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from board.venue_view import venue_view
from cli.main import Target, fail, fleet_options, run_async
from core.logs import quoted, safe_json, shown
from protocol.fleet import FleetView, events_after, job_detail, tail_events
from protocol.library import default_library
from protocol.scripts import LOAD_COMMAND, library_loaded
from protocol.vocabulary import MAY_EXIST_TWICE, PRINTED_TWICE, TICKETS_CANCELLED, StaffCounts, job_lines

STATE_STYLE = {
    "ready": "green",
    "printing": "cyan",
    "paused": "yellow",
    "device_down": "red",
    "dead": "bold red",
    "stopped": "dim",
    "gone": "dim",
}


COLUMNS = ("printer", "state", "location", "printing", "pinned", "printed", "heartbeat")
NUMERIC = ("pinned", "printed", "heartbeat")
WRAPPED = ("printer", "location", "printing")  # what gives way when the terminal is narrow


class FleetTable:
    """The printers' table, fitted to the width it is drawn in.

    A state is one word staff read at a glance. Left to itself, rich narrows every wrapping column alike at 80
    columns and folds "device_down" letter by letter; here the names, locations and job ids are capped first, so
    the state column keeps its longest word and only its reasons wrap.
    """

    def __init__(self, table: Table, state_width: int) -> None:
        self.table, self.state_width = table, state_width

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.table)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        columns = self.table.columns
        for column in columns:
            column.max_width = None
        unbounded = options.update_width(100_000)  # Measurement.get clamps to the width it is given
        if Measurement.get(console, unbounded, self.table).maximum > options.max_width:
            # Too wide: what is left beside the borders, the numbers and the state's longest word is shared by the
            # wrapping columns, each taking no more than it needs and handing the rest on.
            natural = {c.header: _widest(console, unbounded, c) + 2 for c in columns}
            state = max(self.state_width + 2, len("state") + 2)
            room = options.max_width - (len(columns) + 1) - state - sum(natural[n] for n in NUMERIC)
            wrapped = sorted(WRAPPED, key=lambda n: natural[n])
            for left, name in enumerate(wrapped):
                share = max(3, min(natural[name], room // (len(wrapped) - left)))
                room -= share
                next(c for c in columns if c.header == name).max_width = share - 2
        yield self.table


def _widest(console: Console, options: ConsoleOptions, column: Any) -> int:
    """The column's widest cell (its header included), unwrapped."""
    return Measurement.get(console, options, Group(Text(str(column.header)), *column.cells)).maximum


def fleet_table(view: FleetView) -> Group:
    table = Table(title=f"venue {view.venue}", title_justify="left", expand=False)
    for column in COLUMNS:
        # fold: a cell too wide for the terminal wraps onto the next line; none is cut short with an ellipsis.
        table.add_column(column, justify="right" if column in NUMERIC else "left", overflow="fold")
    for p in view.printers:
        state = Text(shown(p.state), style=STATE_STYLE.get(p.state, ""))
        if p.reasons:
            state.append(f" ({shown(', '.join(p.reasons))})", style="dim")
        if p.labels_remaining is not None:
            state.append(f" · {p.labels_remaining} labels left", style="dim")
        if p.confirmed_by == "spooler":
            # Its prints are on a print server's word, not the printer's: staff should know to look.
            state.append(" · confirmed by the spooler", style="yellow")
        elif p.confirmed_by:
            state.append(f" · confirmed by the {shown(p.confirmed_by)}", style="dim")
        age = "—" if p.beat_age is None else f"{p.beat_age:.1f} s"
        # Text, not str: rich would read "[...]" in a job id or a location as markup.
        cells = (Text(shown(p.name)), state, Text(shown(p.location)), Text(shown(p.inflight) if p.inflight else "—"))
        table.add_row(*cells, str(p.depth), str(p.printed), age)
    c = view.counts
    staff = StaffCounts.from_stats(c)
    line = Text(
        f"pool {view.pool} · queued {c.get('queued', 0)} · printing {c.get('printing', 0)} · "
        f"printed {c.get('printed', 0)} · dead (DLQ) {view.dlq} · released {c.get('released', 0)} · "
        f"reclaimed {c.get('reclaimed', 0)} · {staff.line()}"
    )
    state_width = max((len(shown(p.state)) for p in view.printers), default=0)
    parts: list[Any] = [FleetTable(table, state_width), line]
    attendees, pretix = view.sections.get("attendees"), view.sections.get("pretix")
    if attendees is not None:
        parts.append(Text(shown(attendee_line(attendees), 2000)))
    if pretix is not None:
        sender = pretix["sender"]
        by = f"sent by {sender}" if sender else "no attendees sync --follow is sending them"
        waiting = pretix["waiting"]
        style = "bold yellow" if waiting and not sender else ""
        parts.append(Text(shown(f"pretix: {waiting} confirmed print(s) wait to be sent ({by})", 2000), style=style))
        walk_ins = pretix.get("walk_ins")
        if walk_ins:
            if walk_ins["waiting"]:
                parts.append(Text(shown(f"pretix: {walk_ins['waiting']} walk-in(s) wait for their order", 200)))
            for why in walk_ins["refused"]:
                parts.append(Text(shown(f"pretix: {why}", 1000), style="bold yellow"))
    hooks = view.sections.get("webhooks")
    if hooks is not None:
        sender = hooks["sender"]
        by = f"sent by {sender}" if sender else "no webhooks run is sending them"
        waiting = hooks["waiting"]
        gave_up = f", {hooks['gave_up']} given up" if hooks["gave_up"] else ""
        style = "bold yellow" if (waiting and not sender) or hooks["gave_up"] else ""
        parts.append(Text(shown(f"webhooks: {waiting} delivery(ies) wait ({by}){gave_up}", 2000), style=style))
    runs = view.sections.get("preprint")
    if runs is not None:
        parts += [Text(shown(preprint_line(run), 2000)) for run in runs["runs"]]
    if staff.to_find:
        parts.append(
            Text(
                f"{staff.to_find} badge(s) to find ({MAY_EXIST_TWICE} or {PRINTED_TWICE}): "
                "`badge-agent job ID` says where to look",
                style="bold yellow",
            )
        )
    return Group(*parts)


def preprint_line(run: dict[str, Any]) -> str:
    """``pre-print night (done): pre-printed 1800 (in boxes 1650) · handed over 150 · void 12 (printed at the door
    9)``: the numbers of ``preprint status``, /metrics and the attendee export."""
    c = run["counts"]
    line = f"pre-print {run['run']} ({run['state']}): "
    if c.get("planned"):
        line += f"planned {c['planned']} · "
    return line + (
        f"pre-printed {c['preprinted']} (in boxes {c['in_boxes']}) · handed over {c['handed_over']}"
        f" · void {c['void']} (printed at the door {c['printed_at_door']})"
    )


def attendee_line(counts: dict[str, Any]) -> str:
    """``attendees: checked in 120 of 450 expected · Speaker 12/20 · Visitor 108/430 · tickets cancelled 3``."""
    types = " · ".join(
        f"{'(no type)' if name == '-' else name} {c['checked_in']}/{c['expected']}"
        for name, c in counts["by_ticket_type"].items()
    )
    line = f"attendees: checked in {counts['checked_in']} of {counts['expected']} expected"
    return line + (f" · {types}" if types else "") + f" · {TICKETS_CANCELLED} {counts['cancelled']}"


@click.command()
@fleet_options
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--watch", is_flag=True, help="Keep refreshing (Ctrl-C to stop).")
@click.option("--interval", default=1.0, show_default=True, help="Refresh interval for --watch, seconds.")
def status(target: Target, as_json: bool, watch: bool, interval: float) -> None:
    """The printers of a venue: state, location, badge in progress, pinned depth, printed, heartbeat age."""

    async def once() -> tuple[FleetView, bool | None]:
        redis = target.client()
        try:
            return await venue_view(redis, target.venue), await _library_loaded(redis)
        finally:
            await redis.aclose()

    async def watching() -> None:
        redis = target.client()
        try:
            with Live(console=Console(), auto_refresh=False) as live:
                while True:
                    view = await venue_view(redis, target.venue)
                    if as_json:
                        click.echo(safe_json(view.as_dict()))
                    else:
                        live.update(fleet_table(view), refresh=True)
                    await asyncio.sleep(interval)
        finally:
            await redis.aclose()

    if watch:
        with contextlib.suppress(KeyboardInterrupt):
            run_async(watching())
        return
    view, loaded = run_async(once())
    library = default_library().name
    if as_json:
        click.echo(safe_json({**view.as_dict(), "library": {"name": library, "loaded": loaded}}, indent=2))
        return
    console = _console(fleet_table(view))
    console.print(fleet_table(view))
    if loaded is False:
        console.print(
            Text(
                f"Redis lacks function library {library}: no agent of this version can print; an admin runs "
                f"`{LOAD_COMMAND}` (docs/redis.md)",
                style="bold red",
            )
        )


def _console(table: Group) -> Console:
    """A terminal's own width (cells wrap to fit it); piped to a file or a program, the table's full width, so no
    column is cut at the 80 characters rich assumes without a terminal (COLUMNS, when set, still rules)."""
    console = Console()
    if console.is_terminal or "COLUMNS" in os.environ:
        return console
    wide = Console(width=10_000)
    return Console(width=max(80, wide.measure(table).maximum))


async def _library_loaded(redis: Redis) -> bool | None:
    """Whether the venue's Redis has this version's functions library; None when that cannot be told (Redis 6.2,
    or a user without the library's probe function)."""
    try:
        return await library_loaded(redis)
    except ResponseError:
        return None


@click.command()
@fleet_options
@click.argument("job_id")
@click.option("--json", "as_json", is_flag=True)
def job(target: Target, job_id: str, as_json: bool) -> None:
    """Everything about one badge job: its fields and its events."""

    async def get() -> dict[str, Any] | None:
        redis = target.client()
        try:
            return await job_detail(redis, target.venue, job_id)
        finally:
            await redis.aclose()

    detail = run_async(get())
    if detail is None:
        fail(f"no job {job_id!r} in venue {target.venue}", 1)
        return
    if as_json:
        click.echo(safe_json({**detail, "staff": job_lines(job_id, detail)}, indent=2))
        return
    events = detail.pop("events")
    for line in job_lines(job_id, detail):
        click.echo(shown(line))
    now_ms = time.time() * 1000
    for key in sorted(detail):
        click.echo(f"{key:>20}  {_field(key, detail[key], now_ms)}")
    click.echo("events:")
    for e in events:
        click.echo("  " + format_event(e))


def _field(key: str, value: Any, now_ms: float) -> str:
    """A job field as staff read it: the ``*_ms`` times (epoch milliseconds) as local time and age."""
    text = shown(value)
    if key.endswith("_ms") and text.isdigit() and int(text):
        return f"{when(int(text), now_ms)}  ({text})"
    return text


def when(ms: int, now_ms: float) -> str:
    """Local date and time of an epoch-milliseconds stamp, and how long ago it was."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000))
    return f"{stamp} ({_age((now_ms - ms) / 1000)})"


def _age(seconds: float) -> str:
    if seconds < 0:
        return "in the future: check this machine's clock"
    if seconds < 60:
        return f"{seconds:.0f} s ago"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min ago"
    if seconds < 86400:
        return f"{seconds // 3600:.0f} h {seconds % 3600 // 60:.0f} min ago"
    return f"{seconds // 86400:.0f} days ago"


def format_event(e: dict[str, str]) -> str:
    ms = int(e["id"].split("-")[0])
    stamp = time.strftime("%H:%M:%S", time.localtime(ms / 1000)) + f".{ms % 1000:03d}"
    rest = " ".join(f"{k}={quoted(v)}" for k, v in e.items() if k not in ("id", "event") and v)
    return f"{stamp} {shown(e.get('event', '?')):<16} {rest}"


@click.command()
@fleet_options
@click.option("--follow", "-f", is_flag=True, help="Keep printing new events.")
@click.option("--count", "-n", default=50, show_default=True, help="How many recent events to show first.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
def events(target: Target, follow: bool, count: int, as_json: bool) -> None:
    """The venue's audit log: one line per transition."""

    def show(e: dict[str, str]) -> None:
        click.echo(safe_json(e) if as_json else format_event(e))

    async def stream() -> None:
        redis = target.client()
        try:
            last = "0-0"
            for e in await tail_events(redis, target.venue, count):
                show(e)
                last = e["id"]
            while follow:
                batch = await events_after(redis, target.venue, last, 500, block_ms=1000)
                for e in batch:
                    show(e)
                    last = e["id"]
        finally:
            await redis.aclose()

    with contextlib.suppress(KeyboardInterrupt):
        run_async(stream())
