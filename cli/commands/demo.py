"""``badge-agent demo``: a whole simulated venue on this machine, start to finish, then a summary.

A private redis-server, one agent process per simulated printer (different speeds), the bundled sample of
attendees, a printer that runs out of labels and is reloaded, a printer whose power dies for good, an agent killed
with SIGKILL mid-run, a garbage job pushed by hand, a live status board, and a closing count of printed / lost /
printed twice judged from the printers' own print logs, in the staff words of protocol/vocabulary.py.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import click
import yaml
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from board.venue_view import venue_view
from cli.commands.status import fleet_table, format_event
from cli.main import run_async
from cli.redis_server import RedisServer
from drivers.sim import SimControl
from protocol.codec import dec
from protocol.connection import make_redis
from protocol.fleet import tail_events
from protocol.jobs import parse_job
from protocol.keys import Keys
from protocol.redis_config import RedisConfig
from protocol.store import Store
from protocol.vocabulary import PRINTED_TWICE, StaffCounts, flag_line

VENUE = "demo-venue"


class Script:
    """What goes wrong during the demo, by how far the rush has got (share of badges printed)."""

    def __init__(self, printers: list[DemoPrinter]) -> None:
        self.printers = printers
        self.done: set[str] = set()
        self.reloaded_at: float | None = None

    def once(self, name: str, when: bool) -> bool:
        if when and name not in self.done:
            self.done.add(name)
            return True
        return False

    def step(self, progress: float) -> None:
        hall_a_1, hall_a_2, _, kiosk = self.printers
        if self.once("labels out", progress >= 0.15):
            SimControl(hall_a_1.control).set_fault("media_out")
            self.reloaded_at = time.monotonic() + 4
        if self.reloaded_at is not None and self.once("reloaded", time.monotonic() >= self.reloaded_at):
            SimControl(hall_a_1.control).set_fault(None)
        if self.once("power dies", progress >= 0.3):
            SimControl(hall_a_2.control).set_fault("power_off")
        if self.once("agent killed", progress >= 0.5) and kiosk.proc is not None:
            kiosk.proc.kill()  # SIGKILL mid-badge: peers must notice and reprint what it held


@dataclass
class DemoPrinter:
    name: str
    location: str
    print_time: float
    config: Path
    control: Path
    log: Path
    proc: subprocess.Popen[bytes] | None = None


def sample_attendees() -> list[dict[str, Any]]:
    text = resources.files("cli").joinpath("data", "attendees.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def write_config(root: Path, redis_url: str, name: str, location: str, print_time: float) -> DemoPrinter:
    printer = DemoPrinter(
        name, location, print_time, root / f"{name}.yaml", root / f"{name}.control.json", root / f"{name}.prints.jsonl"
    )
    config = {
        "venue": VENUE,
        "printer": {
            "name": name,
            "location": location,
            "driver": {
                "language": "sim",
                "transport": "sim",
                "print_time": print_time,
                "control_file": str(printer.control),
                "print_log": str(printer.log),
                "io_timeout": 0.5,
            },
        },
        "redis": {"url": redis_url},
        "timing": {"probe_interval": 0.5},
        "http": {"listen": "off"},
        "journal": str(root / f"{name}.journal"),
    }
    printer.config.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return printer


@click.command()
@click.option("--badges", default=60, show_default=True, help="How many attendees check in (sample repeats).")
@click.option("--speed", default=1.0, show_default=True, help="Print-time factor (2 = printers twice as slow).")
@click.option("--keep", is_flag=True, help="Keep the temporary folder (configs, logs, print logs) afterwards.")
def demo(badges: int, speed: float, keep: bool) -> None:
    """Run a simulated venue: Redis, four agents on simulated printers, a check-in rush, and a summary."""
    root = Path(tempfile.mkdtemp(prefix="badge-demo-"))
    server = RedisServer(root / "redis")
    console = Console()
    printers: list[DemoPrinter] = []
    try:
        server.start()
        console.print(f"redis-server started ({server.executable}) in {root}", highlight=False)
        url = server.unix_url
        layout = [
            ("hall-a-1", "Hall A, desk 1", 0.5),
            ("hall-a-2", "Hall A, desk 2", 0.5),
            ("hall-b-1", "Hall B, fast lane", 0.25),
            ("kiosk-1", "Lobby kiosk", 1.0),
        ]
        printers = [write_config(root, url, n, loc, t * speed) for n, loc, t in layout]
        for p in printers:
            p.proc = subprocess.Popen(
                [sys.executable, "-m", "agent", "run", "-c", str(p.config)],
                stdout=subprocess.DEVNULL,
                stderr=(root / f"{p.name}.log").open("wb"),
            )
        run_async(_rush(console, url, printers, badges))
    finally:
        for p in printers:
            if p.proc is not None and p.proc.poll() is None:
                p.proc.send_signal(signal.SIGTERM)
        for p in printers:
            if p.proc is not None:
                try:
                    p.proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.proc.kill()
        if printers:
            summarize(console, root, server, printers, badges)
        server.stop()
        if keep:
            console.print(f"kept {root}", highlight=False)
        else:
            shutil.rmtree(root, ignore_errors=True)


async def _rush(console: Console, url: str, printers: list[DemoPrinter], badges: int) -> None:
    redis = make_redis(RedisConfig(url=url), block_timeout=5)
    store = Store(redis, VENUE)
    people = sample_attendees()
    start = time.monotonic()
    try:
        # Wait until every agent beats, like doors opening once the printers are warm.
        while len((await venue_view(redis, VENUE)).printers) < len(printers):
            if time.monotonic() - start > 20:
                raise click.ClickException("agents did not start; see their logs with --keep")
            await asyncio.sleep(0.2)
        queued = 0
        junk_pushed = False
        script = Script(printers)
        with Live(console=console, auto_refresh=False) as live:
            while True:
                if queued < badges:
                    # Attendees arrive in bursts of a few at a time, at several desks.
                    for _ in range(min(4, badges - queued)):
                        base = people[queued % len(people)]
                        row = {**base, "attendee_id": f"{base['attendee_id']}-{queued // len(people)}"}
                        if queued % 9 == 4:
                            row["printer"] = "hall-b-1"  # the fast lane's desk pins its own attendees
                        job = parse_job(row)
                        await store.enqueue(job.job_id, job.payload(), job.printer)
                        queued += 1
                if not junk_pushed and queued >= badges // 3:
                    # Someone pushes junk into the pool by hand: it must land in the DLQ, not stop anything.
                    await redis.lpush(Keys(VENUE).pool, "not-a-real-job")
                    junk_pushed = True
                view = await venue_view(redis, VENUE)
                printed = view.counts.get("printed", 0)
                script.step(printed / badges)
                recent = await tail_events(redis, VENUE, 8)
                events = Text("\n".join(format_event(e) for e in recent), style="dim")
                live.update(Group(fleet_table(view), Text("recent events:"), events), refresh=True)
                settled = view.counts.get("queued", 0) == 0 and view.counts.get("printing", 0) == 0
                if queued == badges and junk_pushed and settled and printed + view.dlq >= badges + 1:
                    break
                if time.monotonic() - start > 60 + badges * 2:
                    console.print("[yellow]demo timed out; stopping[/]")
                    break
                await asyncio.sleep(0.3)
    finally:
        await redis.aclose()


def summarize(console: Console, root: Path, server: RedisServer, printers: list[DemoPrinter], badges: int) -> None:
    copies: Counter[str] = Counter()
    per_printer: Counter[str] = Counter()
    for p in printers:
        if not p.log.exists():
            continue
        for line in p.log.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry["complete"]:
                copies[entry["job_id"]] += 1
                per_printer[p.name] += 1

    async def flagged() -> tuple[dict[str, str], StaffCounts, int, int]:
        redis = make_redis(RedisConfig(url=server.unix_url), block_timeout=5)
        try:
            k = Keys(VENUE)
            flags = {}
            for job_id in copies:
                raw = await redis.hgetall(k.job(job_id))
                line = flag_line(job_id, {dec(a): dec(b) for a, b in raw.items()})
                if line:
                    flags[job_id] = line
            stats = {dec(a): int(b) for a, b in (await redis.hgetall(k.stats)).items()}
            return flags, StaffCounts.from_stats(stats), int(await redis.llen(k.dlq)), stats.get("reclaimed", 0)
        finally:
            await redis.aclose()

    flags, staff, dlq, reclaimed = run_async(flagged())
    lost = badges - len(copies)
    twice = {j for j, n in copies.items() if n > 1}
    table = Table(title="demo summary", title_justify="left")
    table.add_column("printer")
    table.add_column("what happened")
    table.add_column("badges printed", justify="right")
    fate = {
        "hall-a-1": "ran out of labels, reloaded",
        "hall-a-2": "power died for good",
        "kiosk-1": "agent killed (SIGKILL)",
    }
    for p in printers:
        table.add_row(f"{p.name} ({p.print_time:g} s/badge)", fate.get(p.name, ""), str(per_printer[p.name]))
    console.print(table)
    console.print(
        f"attendees {badges} · printed {len(copies)} · lost {lost} · {staff.line()} · "
        f"reclaimed from dead agents {reclaimed} · dead-lettered {dlq} (the junk job)",
        highlight=False,
    )
    # The printers' own logs are the truth the flags are judged by: every badge that came out twice must be flagged.
    console.print(
        f"printers' logs: {PRINTED_TWICE} {len(twice)} (flagged for staff {len(twice & set(flags))}, "
        f"unflagged {len(twice - set(flags))})",
        highlight=False,
    )
    for _, line in sorted(flags.items()):
        console.print(f"  staff: {line}", highlight=False)
