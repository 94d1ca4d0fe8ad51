"""A planned pre-print run printed on the venue's own printers (its pool): each box of the plan becomes a group of
jobs (protocol/group_*.lua) that one ready printer claims whole and prints in order, opened by a separator label, so
every printer's output stack is a box in order. A box whose printer dies or cannot print past the dead-after bound
goes on whole, from its first unconfirmed badge, opened by a "continued" label (group_back.lua).

The plan (boxes and their attendee codes in print order) is read from the run's keys; ``print_on_pool`` turns it into
groups once (a run printed twice is refused), ``pool_status`` says how far it is.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from redis.asyncio import Redis

from attendees.store import AttendeeStore
from core.errors import UserError
from layouts.model import BUILT_IN_LAYOUT
from preprint.jobs import KIND_SEPARATOR, NotPlanned, preprint_job
from preprint.keys import BadgeState, Mode, RunState
from preprint.store import PreprintStore, StoredBox
from protocol.codec import dec, enc
from protocol.jobs import parse_job
from protocol.keys import JOB_ID_RE, PRINTER_RE, Keys
from protocol.replies import GroupAddKind
from protocol.specs import GroupJob
from protocol.store import Store


def group_id(run: str, box: int) -> str:
    """The protocol group of one box of a run."""
    return f"pp:{run}:{box}"


def separator_job(run: str, box: int, first: str, last: str, count: int) -> str:
    """The payload of the label that opens a box: box number, first and last name, count. Drawn in the built-in
    design (``BUILT_IN_LAYOUT``), never a venue layout: it must not pass for a badge."""
    return parse_job(
        {
            "job_id": f"{group_id(run, box)}:sep",
            "attendee_id": f"{run} box {box}",
            "name": f"Box {box}",
            "company": f"{first} - {last}",
            "role": f"{count} badges",
            "layout": BUILT_IN_LAYOUT,
        }
    ).payload()


def continued_template(run: str, box: int, last: str) -> str:
    """The payload of the label that opens what is left of a box handed on mid-way; group_back.lua fills in its
    id, ``{first}`` (the first badge left) and ``{count}`` (how many are left)."""
    return json.dumps(
        {
            "job_id": "",
            "attendee_id": f"{run} box {box}",
            "name": f"Box {box}, continued",
            "company": "{first} - " + last,
            "role": "{count} badges",
            "layout": BUILT_IN_LAYOUT,
        },
        ensure_ascii=False,
    )


@dataclass(frozen=True)
class Started:
    run: str
    boxes: int
    badges: int


async def _hash(redis: Redis, key: str) -> dict[str, str]:
    raw = cast(dict[bytes, bytes], await redis.hgetall(key))
    return {dec(a): dec(b) for a, b in raw.items()}


async def _jobs_of(store: PreprintStore, run: str, box: StoredBox) -> list[GroupJob]:
    """A box's jobs in print order: its separator, then each attendee's pre-print badge (preprint/jobs.py)."""
    codes = await store.box_codes(run, box.number)
    if not codes:
        raise UserError(f"run {run!r}: box {box.number} has no attendees; drop the run and plan it again")
    found = await store.attendees.get_many(codes)
    missing = [code for code, a in zip(codes, found, strict=True) if a is None]
    if missing:
        raise UserError(f"run {run!r}, box {box.number}: {len(missing)} attendee(s) no longer on the list "
                        f"(first: {missing[0]!r}); drop the run and plan it again")  # fmt: skip
    # A badge void before the run printed (printed at the door, a cancel, a change) is left out: its attendee gets
    # theirs at the door, once.
    people = [a for a in found if a is not None and a.preprint_state != BadgeState.VOID]
    if not people:
        raise UserError(f"run {run!r}: every badge of box {box.number} is void; drop the run and plan it again")
    first, last = box.first or people[0].shown_name, box.last or people[-1].shown_name
    sep_fields = {"kind": KIND_SEPARATOR, "run": run, "box": str(box.number)}
    jobs: list[GroupJob] = [
        (
            enc(f"{group_id(run, box.number)}:sep"),
            enc(separator_job(run, box.number, first, last, len(people))),
            enc(json.dumps(sep_fields)),
            b"",
        )
    ]
    for attendee in people:
        try:
            planned = preprint_job(attendee)
        except NotPlanned as exc:
            raise UserError(f"run {run!r}, box {box.number}: {exc}; drop the run and plan it again") from None
        jobs.append(
            (
                enc(planned.job.job_id),
                enc(planned.payload),
                enc(json.dumps(planned.hash_fields, ensure_ascii=False)),
                enc(attendee.shown_name),
            )
        )
    return jobs


async def print_on_pool(redis: Redis, venue: str, run: str, printers: Sequence[str] = ()) -> Started:
    """Hand a planned run to the venue's printers (only ``printers`` when given): one group a box, in box order.

    Raises:
        UserError: no such run, a run already printing or printed (printing it again would print each badge
            twice), a plan that no longer matches the attendee list, an unknown printer.
    """
    store = Store(redis, venue)
    plans = PreprintStore(redis, venue, AttendeeStore(redis, venue, store))
    for name in printers:
        if not PRINTER_RE.match(name):
            raise UserError(f"--printers: {name!r} is not a printer name (lowercase letters, digits, - and _)")
    if printers:
        known = await store.printers()
        unknown = [name for name in printers if name not in known]
        if unknown:
            raise UserError(f"--printers: no printer {unknown[0]!r} has ever run in venue {venue}")
    found = await plans.need_run(run)
    if not JOB_ID_RE.match(f"{group_id(run, found.boxes)}:sep:c99"):
        raise UserError(f"run name {run!r} is too long to name its jobs")
    if found.state != RunState.PLANNED or found.mode != Mode.NONE:
        how = {Mode.PDF: " as a PDF", Mode.POOL: " on the venue's printers"}.get(found.mode, "")
        raise UserError(
            f"run {run!r} is {found.state}{how} already: printing it again would print its badges twice; "
            f"see badge-agent preprint status {run}"
        )
    if not found.listed:
        raise UserError(f"run {run!r}: its plan was cut short; drop it (badge-agent preprint rm) and plan again")
    boxes = await plans.boxes(found)
    # planned -> printing in one step (preprint_state.lua): of two `print` commands at once, one is refused here.
    # Before the attendees are read: a desk's print at the door (preprint_at_door.lua) that came first left its
    # badge void, and is left out below; one that comes after sees the run printing and flags its badge to pull.
    await plans.move(run, [RunState.PLANNED], RunState.PRINTING, Mode.POOL)
    try:
        planned = [await _jobs_of(plans, run, box) for box in boxes]
    except UserError:
        # Nothing was added: the run is as it was, planned and printed no way yet.
        await redis.hset(plans.keys.run(run), mapping={"state": RunState.PLANNED, "mode": Mode.NONE})
        raise
    await redis.hset(
        plans.keys.run(run), mapping={"printers": " ".join(printers), "started_ms": await store.server_ms()}
    )
    badges = 0
    for box, jobs in zip(boxes, planned, strict=True):
        added = await store.add_group(
            group_id(run, box.number), jobs, printers, continued_template(run, box.number, box.last or dec(jobs[-1][3]))
        )
        if added.kind is GroupAddKind.EXISTS:
            raise UserError(f"run {run!r}: box {box.number} was handed to the printers before; nothing added twice")
        if added.kind is GroupAddKind.JOB_EXISTS:
            raise UserError(f"run {run!r}, box {box.number}: job {added.detail} exists already; nothing added twice")
        badges += len(jobs) - 1
    return Started(run, len(boxes), badges)


@dataclass
class BoxStatus:
    number: int
    state: str  # waiting, claimed, printed
    printer: str
    printed: int
    count: int
    continued: int
    back_from: str


@dataclass
class PoolStatus:
    run: str
    state: str
    total: int
    printed: int
    maybe_printed: list[str] = field(default_factory=list)  # badges printed again after a dead printer may have
    boxes: list[BoxStatus] = field(default_factory=list)
    eta_s: float | None = None

    @property
    def done(self) -> bool:
        return self.total > 0 and self.printed >= self.total


async def pool_status(redis: Redis, venue: str, run: str) -> PoolStatus:
    """How far a run printed on the pool is: each box's state and printer, badges printed, an ETA from the pace so
    far. A run whose every badge printed is marked ``printed``."""
    plans = PreprintStore(redis, venue)
    k = Keys(venue)
    found = await plans.need_run(run)
    raw = await _hash(redis, plans.keys.run(run))
    status = PoolStatus(run, found.state, 0, 0)
    for number in range(1, found.boxes + 1):
        group = await _hash(redis, k.group(group_id(run, number)))
        badge_ids = [name[2:] for name, label in group.items() if name.startswith("n:") and label]
        async with redis.pipeline(transaction=False) as pipe:
            for job_id in badge_ids:
                pipe.hmget(k.job(job_id), "state", "maybe_duplicate")
            states = await pipe.execute()
        printed = sum(1 for state, _ in states if state == b"printed")
        status.maybe_printed += [j for j, (_, dup) in zip(badge_ids, states, strict=True) if dup == b"1"]
        count = len(badge_ids) or int((await _hash(redis, plans.keys.box(run, number))).get("count") or "0")
        state = "printed" if badge_ids and printed == len(badge_ids) else group.get("state", "planned")
        status.boxes.append(
            BoxStatus(
                number,
                state,
                group.get("printer", ""),
                printed,
                count,
                int(group.get("continued", "0") or 0),
                group.get("back_from", ""),
            )
        )
        status.total += count
        status.printed += printed
    started = raw.get("started_ms", "")
    if started and 0 < status.printed < status.total:
        elapsed = await Store(redis, venue).server_ms() / 1000 - int(started) / 1000
        status.eta_s = elapsed / status.printed * (status.total - status.printed)
    if status.done and found.state == RunState.PRINTING and found.mode == Mode.POOL:
        with contextlib.suppress(UserError):  # another status marked it at the same moment
            await plans.move(run, [RunState.PRINTING], RunState.PRINTED, Mode.POOL)
        status.state = RunState.PRINTED
    return status
