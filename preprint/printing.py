"""A planned run written as a PDF (preprint/pdf.py) from the venue's Redis: who is on it, drawn with which layout.

Attendees whose badge is void (changed since the plan) or handed over are left out; so is one whose record is gone.
A badge that cannot be drawn is made void (preprint_undrawn.lua) so the door prints it. The run's mode becomes
``pdf``: from then on only ``preprint done`` marks its badges printed, and it is never printed on the venue's
printers too.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import UserError
from layouts.store import LayoutStore
from preprint import pdf, specs
from preprint.keys import BadgeState, Mode, RunState
from preprint.plan import box_label
from preprint.store import PreprintStore, parse_where
from protocol.codec import dec


@dataclass
class PdfReport:
    run: str
    out: Path
    pages: int = 0
    badges: int = 0
    #: (code, name, why) of each attendee left out: void, handed over, gone, or not drawable.
    left_out: list[tuple[str, str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run, "file": str(self.out), "pages": self.pages, "badges": self.badges,
            "left_out": [{"code": c, "name": n, "why": w} for c, n, w in self.left_out],
        }  # fmt: skip


async def write_pdf(
    store: PreprintStore,
    name: str,
    out: Path,
    *,
    sheet: str = "a4",
    per_sheet: int | None = None,
    dpi: int = 300,
    butterfly: bool = False,
    stock: str = pdf.DEFAULT_STOCK,
    workers: int | None = None,
) -> PdfReport:
    run = await store.need_run(name)
    if run.mode == Mode.POOL:
        raise UserError(f"run {name!r} is printed on the venue's printers: it is not written as a PDF too")
    if run.state != RunState.PLANNED:
        raise UserError(
            f"run {name!r} is {run.state}: its badges were printed (preprint done) and are in their boxes; "
            "a PDF would print them twice"
        )
    if not run.listed:
        raise UserError(f"run {name!r} was cut short while it was planned: drop it (preprint rm) and plan again")
    pdf.grid(sheet, stock, dpi, per_sheet, butterfly)  # a sheet or size that cannot work says so before any drawing
    # The mode first, before the attendees are read: a desk's print at the door from now on flags the badge to pull
    # (it may be on the sheets); one before it left the badge void, and it is left out below.
    await store.move(name, [RunState.PLANNED], RunState.PLANNED, Mode.PDF)
    report = PdfReport(name, out)
    layouts_store = LayoutStore(store.redis, store.venue)
    layouts: dict[str, Any] = {}
    for layout in run.layout_versions:
        if not layout:
            continue
        found = await layouts_store.variant(layout, stock)
        if found is None:
            raise UserError(f"layout {layout!r} has no variant for {stock} mm badges (badge-agent layout list)")
        layouts[layout] = found[1]
    boxes: list[tuple[pdf.Separator, list[pdf.Cell]]] = []
    async for number, codes in store.codes(run):
        box = await store.redis.hmget(store.keys.box(name, number), ["first", "last"])
        first, last = (dec(v) if v is not None else "" for v in box)
        cells = []
        for code, attendee in zip(codes, await store.attendees.get_many(codes), strict=True):
            if attendee is None:
                report.left_out.append((code, "", "no longer on the list"))
                continue
            where = parse_where(attendee.preprint, attendee.preprint_state)
            if where is None or where.run != name:
                report.left_out.append((code, attendee.shown_name, "no longer in this run"))
                continue
            if where.state in (BadgeState.VOID, BadgeState.HANDED_OVER):
                report.left_out.append((code, attendee.shown_name, where.state.replace("_", " ")))
                continue
            job = attendee.job()
            payload = {
                "job_id": job.job_id, "attendee_id": job.attendee_id, "name": job.name, "company": job.company,
                "role": job.role, "fields": dict(job.fields),
            }  # fmt: skip
            cells.append(pdf.Cell(code, attendee.shown_name, payload, where.layout if where.layout in layouts else ""))
        lines = (f"run {name}", f"{len(cells)} badges", f"pick-up: {run.pickup}")
        boxes.append((pdf.Separator(box_label(number, first, last), lines), cells))
    written = await asyncio.to_thread(
        pdf.write, out, f"{name} badges", boxes, layouts, sheet=sheet, per_sheet=per_sheet, dpi=dpi, stock=stock,
        butterfly=butterfly, workers=workers,
    )  # fmt: skip
    report.pages, report.badges = written.pages, written.badges
    names = {cell.code: cell.name for _, cells in boxes for cell in cells}
    for code, why in written.failed:
        await store.scripts.run(specs.UNDRAWN.call(store.keys, store.attendees.keys, name, code, why))
        report.left_out.append((code, names.get(code, ""), f"cannot be drawn: {why}"))
    await store.move(name, [RunState.PLANNED], RunState.PLANNED, Mode.PDF)
    return report
