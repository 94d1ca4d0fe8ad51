"""A planned run written the way the planner stores it, the venue's attendees on the list, and ZPL emulators with
real agents (each its own process, so one can be killed) to print it on."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from redis.asyncio import Redis

from attendees.importer import Importer
from attendees.store import AttendeeStore
from drivers.emulators import EMULATORS
from drivers.emulators.core import EmulatedPrinter
from drivers.emulators.fronts import TcpFront
from preprint.keys import preprint_job_id
from preprint.pool import group_id
from preprint.store import PreprintStore
from tests.support.agents import FAST, agent_config, agent_process
from tests.support.attendee_files import rows


async def planned_run(redis: Redis, venue: str, run: str, boxes: int, per_box: int) -> None:
    """``boxes`` boxes of ``per_box`` attendees each, put on the list and planned as run ``run`` by the planner
    (preprint/store.py), sorted by name."""
    people = [
        {"attendee_id": f"code-{b}-{i:03d}", "name": f"Person {b}-{i:03d}", "company": "Co"}
        for b in range(1, boxes + 1)
        for i in range(per_box)
    ]
    summary = await Importer(AttendeeStore(redis, venue)).load(iter(rows(people)))
    assert summary.added == len(people), summary
    report = await PreprintStore(redis, venue).plan(run, sort="name", box_size=per_box)
    assert len(report.boxes) == boxes, report


async def job_ids(redis: Redis, venue: str, run: str, box: int) -> list[str]:
    """A box's job ids in print order as the run hands them to the printers: separator, then the badges."""
    store = PreprintStore(redis, venue)
    people = await store.attendees.get_many(await store.box_codes(run, box))
    return [f"{group_id(run, box)}:sep", *(preprint_job_id(p.job_id) for p in people if p is not None)]


@contextlib.asynccontextmanager
async def zpl(
    name: str, print_time: float, read_back: bool = True
) -> AsyncIterator[tuple[EmulatedPrinter, dict[str, Any]]]:
    """A ZPL emulator on loopback TCP; the driver section of an agent config that prints on it. ``read_back``:
    decode each label for the log (its texts): off where only the order of job ids matters (the bench)."""
    printer = EMULATORS["zpl"](name, print_time=print_time, read_back=read_back)
    await printer.start()
    front = TcpFront(printer, "127.0.0.1", 0)
    host, port = await front.start()
    try:
        yield printer, {"language": "zpl", "transport": "tcp", "host": host, "port": port, "io_timeout": 2.0}
    finally:
        await front.stop()
        await printer.stop()


@contextlib.contextmanager
def agent(tmp: Path, venue: str, url: str, name: str, driver: dict[str, Any]) -> Iterator[subprocess.Popen[bytes]]:
    """A real agent process on ``driver``, short timings; killed at the end if still running."""
    config = agent_config(
        tmp / f"{name}.yaml", venue, url, name, 0.0, timing=dict(FAST), driver=driver,
        overrides={"http__listen": "off"},
    )  # fmt: skip
    proc = agent_process(config)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def printed(printer: EmulatedPrinter) -> list[str]:
    """The job ids of the labels that came out whole, in the order they came out (the emulator's own log)."""
    return [str(e["job"]) for e in printer.printed()]
