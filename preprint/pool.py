"""A planned pre-print run printed on the venue's own printers (its pool): each box of the plan becomes a group of
jobs (protocol/group_*.lua) that one ready printer claims whole and prints in order, opened by a separator label, so
every printer's output stack is a box in order. A box whose printer dies or cannot print past the dead-after bound
goes on whole, from its first unconfirmed badge, opened by a "continued" label (group_back.lua).

The plan (boxes and their attendee codes in print order) is read from the run's keys; ``print_on_pool`` turns it into
groups once (a run printed twice is refused), ``pool_status`` says how far it is.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from redis.asyncio import Redis
from redis.exceptions import WatchError

from attendees.store import Attendee, AttendeeStore
from core.errors import UserError
from layouts.book import BUILT_IN_LAYOUT
from protocol.codec import dec, enc
from protocol.jobs import parse_job
from protocol.keys import JOB_ID_RE, PRINTER_RE, Keys
from protocol.replies import GroupAddKind
from protocol.specs import GroupJob
from protocol.store import Store

#: Job kinds, in each job's hash ("kind"): a pre-printed badge, and a box's separator label (no badge).
KIND_BADGE = "preprint"
KIND_SEPARATOR = "separator"


class RunKeys:
    """The keys of one planned run, under the venue's hash tag."""

    def __init__(self, venue: str, run: str) -> None:
        prefix = Keys(venue).prefix
        self.runs = prefix + "preprint:runs"
        self.run = f"{prefix}preprint:run:{run}"

    def box(self, number: int) -> str:
        return f"{self.run}:box:{number}"

    def codes(self, number: int) -> str:
        return f"{self.run}:box:{number}:codes"


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


def badge_job_id(run: str, attendee: Attendee) -> str:
    return f"pp:{run}:{attendee.job_id}"


@dataclass(frozen=True)
class Box:
    number: int
    first: str
    last: str
    codes: list[str]


@dataclass(frozen=True)
class Started:
    run: str
    boxes: int
    badges: int


def _field(raw: dict[str, str], name: str) -> str:
    return raw.get(name, "")


async def _hash(redis: Redis, key: str) -> dict[str, str]:
    raw = cast(dict[bytes, bytes], await redis.hgetall(key))
    return {dec(a): dec(b) for a, b in raw.items()}


async def _read_plan(redis: Redis, keys: RunKeys, run: str, venue: str) -> tuple[dict[str, str], list[Box]]:
    raw = await _hash(redis, keys.run)
    if not raw:
        raise UserError(f"no pre-print run {run!r} is planned in venue {venue}")
    try:
        count = int(_field(raw, "boxes") or "0")
    except ValueError:
        raise UserError(f"run {run!r}: its box count {_field(raw, 'boxes')!r} is not a number; plan it again") from None
    boxes = []
    for number in range(1, count + 1):
        box = await _hash(redis, keys.box(number))
        codes = [dec(c) for c in await redis.lrange(keys.codes(number), 0, -1)]
        if not codes:
            raise UserError(f"run {run!r}: box {number} has no attendees; plan it again")
        boxes.append(Box(number, _field(box, "first"), _field(box, "last"), codes))
    return raw, boxes


async def _jobs_of(attendees: AttendeeStore, run: str, box: Box) -> list[GroupJob]:
    """A box's jobs in print order: its separator, then each attendee's badge."""
    found = await attendees.get_many(box.codes)
    missing = [code for code, a in zip(box.codes, found, strict=True) if a is None]
    if missing:
        raise UserError(f"run {run!r}, box {box.number}: {len(missing)} attendee(s) no longer on the list "
                        f"(first: {missing[0]!r}); plan the run again")  # fmt: skip
    people = [a for a in found if a is not None]
    first = box.first or people[0].shown_name
    last = box.last or people[-1].shown_name
    gid = group_id(run, box.number)
    jobs: list[GroupJob] = [
        (enc(f"{gid}:sep"), enc(separator_job(run, box.number, first, last, len(people))), enc(KIND_SEPARATOR), b"")
    ]
    for attendee in people:
        job = attendee.job().payload()
        data = json.loads(job)
        data["job_id"] = badge_job_id(run, attendee)
        payload = parse_job(data).payload()
        jobs.append((enc(data["job_id"]), enc(payload), enc(KIND_BADGE), enc(attendee.shown_name)))
    return jobs


async def print_on_pool(redis: Redis, venue: str, run: str, printers: Sequence[str] = ()) -> Started:
    """Hand a planned run to the venue's printers (only ``printers`` when given): one group a box, in box order.

    Raises:
        UserError: no such run, a run already printing or printed (printing it again would print each badge
            twice), a plan that no longer matches the attendee list, an unknown printer.
    """
    keys = RunKeys(venue, run)
    store = Store(redis, venue)
    for name in printers:
        if not PRINTER_RE.match(name):
            raise UserError(f"--printers: {name!r} is not a printer name (lowercase letters, digits, - and _)")
    if printers:
        known = await store.printers()
        unknown = [name for name in printers if name not in known]
        if unknown:
            raise UserError(f"--printers: no printer {unknown[0]!r} has ever run in venue {venue}")
    if not JOB_ID_RE.match(f"{group_id(run, 1)}:sep:c99"):
        raise UserError(f"run name {run!r} cannot name its jobs (letters, digits and . _ - only)")
    raw, boxes = await _read_plan(redis, keys, run, venue)
    state = _field(raw, "state")
    if state != "planned":
        mode = _field(raw, "mode")
        how = f" ({mode})" if mode else ""
        raise UserError(
            f"run {run!r} is {state or 'in an unknown state'}{how} already: printing it again would print its badges "
            f"twice; see badge-agent preprint status {run}"
        )
    attendees = AttendeeStore(redis, venue, store)
    planned = [await _jobs_of(attendees, run, box) for box in boxes]
    await _mark_printing(redis, keys, run, printers)
    badges = 0
    for box, jobs in zip(boxes, planned, strict=True):
        added = await store.add_group(
            group_id(run, box.number),
            jobs,
            printers,
            continued_template(run, box.number, box.last or dec(jobs[-1][3])),
        )
        if added.kind is GroupAddKind.EXISTS:
            raise UserError(f"run {run!r}: box {box.number} was handed to the printers before; nothing added twice")
        if added.kind is GroupAddKind.JOB_EXISTS:
            raise UserError(f"run {run!r}, box {box.number}: job {added.detail} exists already; nothing added twice")
        badges += len(jobs) - 1
    return Started(run, len(boxes), badges)


async def _mark_printing(redis: Redis, keys: RunKeys, run: str, printers: Sequence[str]) -> None:
    """planned -> printing, once: of two ``print`` commands at the same moment one wins, the other is told."""
    async with redis.pipeline(transaction=True) as pipe:
        try:
            await pipe.watch(keys.run)
            if await pipe.hget(keys.run, "state") != b"planned":
                raise UserError(f"run {run!r} was started by someone else just now; see badge-agent preprint status")
            pipe.multi()  # type: ignore[no-untyped-call]
            pipe.hset(
                keys.run,
                mapping={
                    "state": "printing",
                    "mode": "pool",
                    "printers": " ".join(printers),
                    "started_ms": str(int(time.time() * 1000)),
                },
            )
            await pipe.execute()
        except WatchError:
            raise UserError(
                f"run {run!r} was started by someone else just now; see badge-agent preprint status"
            ) from None


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
    keys = RunKeys(venue, run)
    k = Keys(venue)
    raw = await _hash(redis, keys.run)
    if not raw:
        raise UserError(f"no pre-print run {run!r} is planned in venue {venue}")
    status = PoolStatus(run, _field(raw, "state"), 0, 0)
    boxes = int(_field(raw, "boxes") or "0")
    for number in range(1, boxes + 1):
        group = await _hash(redis, k.group(group_id(run, number)))
        badge_ids = [name[2:] for name, label in group.items() if name.startswith("n:") and label]
        async with redis.pipeline(transaction=False) as pipe:
            for job_id in badge_ids:
                pipe.hmget(k.job(job_id), "state", "maybe_duplicate")
            states = await pipe.execute()
        printed = sum(1 for state, _ in states if state == b"printed")
        status.maybe_printed += [j for j, (_, dup) in zip(badge_ids, states, strict=True) if dup == b"1"]
        count = len(badge_ids) or int(_field(await _hash(redis, keys.box(number)), "count") or "0")
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
    started = _field(raw, "started_ms")
    if started and 0 < status.printed < status.total:
        elapsed = time.time() - int(started) / 1000
        status.eta_s = elapsed / status.printed * (status.total - status.printed)
    if status.done and status.state == "printing":
        await redis.hset(keys.run, "state", "printed")
        status.state = "printed"
    return status
