"""Pre-print runs in the venue's Redis: planned, read, dropped, and marked printed.

A plan is written a box at a time (preprint_box.lua: one atomic step per box, refusing an attendee changed since
the plan was read, who is then read again), then listed (preprint_listed.lua): a run that is listed is complete.
Every attendee of a box is told where their badge will be (``preprint`` on their record) in the same step that puts
them in the box, so the plan and the attendee records never disagree.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from attendees import specs as attendee_specs
from attendees.store import Attendee, AttendeeStore
from core.errors import UserError
from layouts.store import LayoutStore
from preprint import specs
from preprint.keys import RUN_RE, BadgeState, Mode, PreprintKeys, RunState, preprint_job_id, run_of
from preprint.plan import (
    DEFAULT_PICKUP,
    Box,
    Entry,
    SortBy,
    box_label,
    boxes,
    check_box_size,
    entry_for,
    sort_key,
)
from protocol.codec import dec, enc

#: Attendees read a script call while planning (each call one round trip, its reply a few hundred kB at most).
READ_CHUNK = 1000
#: The layout a venue's badges get when no rule picks one (layouts/book.py), and the built-in design's name here.
DEFAULT_LAYOUT = "default"
BUILT_IN = ""
#: Re-reads of a box whose attendees changed while it was written.
BOX_RETRIES = 5


#: What ``counts`` answers, in the order staff read it.
COUNTS = ("planned", "preprinted", "handed_over", "void", "printed_at_door", "in_boxes")


class PlanError(UserError):
    """A plan that cannot be made as asked: nothing was written."""


@dataclass(frozen=True)
class Run:
    name: str
    created_ms: int
    sort: str
    box_size: int
    ticket_types: list[str]
    pickup: str
    layout_versions: dict[str, int]
    state: str
    total: int
    boxes: int
    mode: str
    #: Every box written (a run cut short while planned is not: drop it with ``preprint rm``).
    listed: bool
    preprinted: int = 0
    handed_over: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "created_ms": self.created_ms,
            "sort": self.sort,
            "box_size": self.box_size,
            "ticket_types": self.ticket_types,
            "pickup": self.pickup,
            "layout_versions": self.layout_versions,
            "state": self.state,
            "total": self.total,
            "boxes": self.boxes,
            "mode": self.mode,
            "complete": self.listed,
        }


@dataclass(frozen=True)
class StoredBox:
    number: int
    first: str
    last: str
    count: int

    @property
    def label(self) -> str:
        return box_label(self.number, self.first, self.last)


@dataclass(frozen=True)
class Void:
    """A badge of a run that no longer says what the attendee's record does (or whose ticket is cancelled)."""

    code: str
    box: int
    name: str
    reason: str
    ms: int
    #: It was printed: it is in its box, to pull. Else it was never printed (the door prints the attendee's badge).
    printed: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code, "box": self.box, "name": self.name, "reason": self.reason, "ms": self.ms,
            "printed": self.printed,
        }  # fmt: skip


@dataclass(frozen=True)
class Where:
    """Where an attendee's pre-printed badge is (their record's ``preprint``), and its state."""

    run: str
    box: int
    layout: str
    layout_version: int
    fields_hash: str
    #: ``planned`` (not printed yet), ``preprinted``, ``handed_over`` or ``void``.
    state: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "box": self.box,
            "layout": self.layout,
            "layout_version": self.layout_version,
            "fields_hash": self.fields_hash,
            "state": self.state,
        }


def parse_where(raw: str, badge_state: str) -> Where | None:
    """An attendee's ``preprint`` field (None: none, or not one this version can read)."""
    if not raw:
        return None
    try:
        data = json.loads(raw)
        return Where(
            str(data["run"]),
            int(data["box"]),
            str(data.get("layout") or ""),
            int(data.get("layout_version") or 0),
            str(data.get("fields_hash") or ""),
            badge_state or "planned",
        )
    except (ValueError, KeyError, TypeError):
        return None


def record_json(run: str, box: int, entry: Entry) -> str:
    """An attendee's ``preprint`` field, as the pool's printing and the door read it."""
    return json.dumps(
        {
            "run": run,
            "box": box,
            "layout": entry.layout,
            "layout_version": entry.layout_version,
            "fields_hash": entry.fields_hash,
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )


@dataclass
class PlanReport:
    run: Run
    boxes: list[StoredBox]
    #: Attendees left out, by why (each a count): already pre-printed, has a badge, cancelled, other ticket types.
    left_out: dict[str, int] = field(default_factory=dict)


def _int(value: Any, default: int = 0) -> int:
    try:
        return int(dec(value))
    except (TypeError, ValueError):
        return default


def _run_from(name: str, raw: dict[Any, Any]) -> Run:
    values = {dec(k): dec(v) for k, v in raw.items()}

    def loads(text: str, empty: Any) -> Any:
        try:
            return json.loads(text) if text else empty
        except ValueError:
            return empty

    return Run(
        name=name,
        created_ms=_int(values.get("created_ms")),
        sort=values.get("sort", ""),
        box_size=_int(values.get("box_size")),
        ticket_types=list(loads(values.get("ticket_types", ""), [])),
        pickup=values.get("pickup") or DEFAULT_PICKUP,
        layout_versions=dict(loads(values.get("layout_versions", ""), {})),
        state=values.get("state", ""),
        total=_int(values.get("total")),
        boxes=_int(values.get("boxes")),
        mode=values.get("mode", ""),
        listed=values.get("listed") == "1",
        preprinted=_int(values.get("preprinted")),
        handed_over=_int(values.get("handed_over")),
    )


def _void_printed(raw: bytes | str | None) -> int:
    """1 when a void list's entry says its badge was printed (it is in a box, to pull)."""
    if raw is None:
        return 0
    try:
        return 1 if json.loads(raw).get("printed", True) else 0
    except (ValueError, AttributeError):
        return 1


def check_run_name(name: str) -> None:
    if not RUN_RE.fullmatch(name):
        raise UserError(
            f"run name {name!r}: 1-64 letters, digits and . _ - (starting with a letter or digit), such as night-1"
        )


class PreprintStore:
    """One venue's pre-print runs on one Redis client (``decode_responses=False``)."""

    def __init__(self, redis: Redis, venue: str, attendees: AttendeeStore | None = None) -> None:
        self.redis = redis
        self.venue = venue
        self.attendees = attendees or AttendeeStore(redis, venue)
        self.scripts = self.attendees.scripts
        self.keys = PreprintKeys(venue)

    # -- reading -------------------------------------------------------------------------------------------------

    async def names(self) -> list[str]:
        return sorted(dec(n) for n in await self.redis.smembers(enc(self.keys.runs)))

    async def run(self, name: str) -> Run | None:
        raw = await self.redis.hgetall(enc(self.keys.run(name)))
        return _run_from(name, raw) if raw else None

    async def need_run(self, name: str) -> Run:
        check_run_name(name)
        run = await self.run(name)
        if run is None:
            known = ", ".join(await self.names()) or "none"
            raise UserError(f"no pre-print run named {name!r} in this venue (runs: {known})")
        return run

    async def boxes(self, run: Run) -> list[StoredBox]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for n in range(1, run.boxes + 1):
                pipe.hmget(enc(self.keys.box(run.name, n)), [b"first", b"last", b"count"])
            raws = await pipe.execute()
        return [
            StoredBox(n, dec(r[0] or b""), dec(r[1] or b""), _int(r[2]))
            for n, r in zip(range(1, run.boxes + 1), raws, strict=True)
            if r[0] is not None or r[2] is not None
        ]

    async def box_codes(self, run: str, number: int) -> list[str]:
        return [dec(c) for c in await self.redis.lrange(enc(self.keys.box_codes(run, number)), 0, -1)]

    async def codes(self, run: Run) -> AsyncIterator[tuple[int, list[str]]]:
        """Each box's number and codes, in print order."""
        for n in range(1, run.boxes + 1):
            yield n, await self.box_codes(run.name, n)

    # -- planning ------------------------------------------------------------------------------------------------

    async def _all_attendees(self) -> list[Attendee]:
        codes = [code async for code in self.attendees.codes()]
        found: list[Attendee] = []
        for i in range(0, len(codes), READ_CHUNK):
            found += [a for a in await self.attendees.get_many(codes[i : i + READ_CHUNK]) if a is not None]
        return found

    async def _job_states(self, attendees: Sequence[Attendee]) -> list[str]:
        """Each attendee's badge job state ("" when the badge was never asked for)."""
        k = self.attendees.venue.encoded_keys
        states: list[str] = []
        for i in range(0, len(attendees), READ_CHUNK):
            chunk = attendees[i : i + READ_CHUNK]
            keys = [k.job(enc(a.job_id)) for a in chunk]
            raws = await self.scripts.run(attendee_specs.READ.call(keys, (b"state",)))
            states += [dec(r[0]) if r[0] is not None else "" for r in raws]
        return states

    async def _layouts(self) -> tuple[dict[str, int], list[tuple[str, str, str]]]:
        store = LayoutStore(self.redis, self.venue)
        stored = {name: meta.version for name, meta in (await store.all()).items()}
        rules = []
        for rule, name in (await store.rules()).items():
            key, _, value = rule.partition("=")
            rules.append((key, value.strip().casefold(), name))
        return stored, rules

    @staticmethod
    def _layout_of(attendee: Attendee, rules: list[tuple[str, str, str]], stored: dict[str, int]) -> str:
        """The layout an agent would draw this attendee's badge with (layouts/book.py, ``choose``)."""
        values = {**attendee.shown_fields, "name": attendee.shown_name, "company": attendee.shown_company}
        values |= {"role": attendee.role, "attendee_id": attendee.code, "job_id": attendee.job_id}
        for key, value, name in rules:
            if str(values.get(key, "")).strip().casefold() == value:
                return name
        return DEFAULT_LAYOUT if DEFAULT_LAYOUT in stored else BUILT_IN

    def _eligible(
        self,
        attendees: Sequence[Attendee],
        states: Sequence[str],
        ticket_types: Sequence[str],
        left_out: dict[str, int],
    ) -> list[Attendee]:
        wanted = set(ticket_types)
        out = []
        for attendee, state in zip(attendees, states, strict=True):
            why = ""
            if attendee.status != "valid":
                why = "cancelled"
            elif attendee.preprint:
                why = "in a run already"
            elif state and state != "cancelled":
                why = "have a badge"
            elif wanted and attendee.ticket_type not in wanted:
                why = "other ticket types"
            if why:
                left_out[why] = left_out.get(why, 0) + 1
            else:
                out.append(attendee)
        return out

    async def plan(
        self,
        name: str,
        *,
        ticket_types: Sequence[str] = (),
        sort: SortBy = "family",
        box_size: int = 200,
        pickup: str = "",
    ) -> PlanReport:
        """Plan run ``name``: the valid attendees without a badge and in no run, of ``ticket_types`` (all: empty),
        sorted and boxed, stored. Raises PlanError for a plan that cannot be made (nothing is then written)."""
        check_run_name(name)
        check_box_size(box_size)
        if await self.run(name) is not None or name in await self.names():
            raise PlanError(f"a pre-print run named {name!r} exists: choose another name, or drop it (preprint rm)")
        attendees = await self._all_attendees()
        if not attendees:
            raise PlanError("the venue has no attendee list: import one first (badge-agent attendees import)")
        known_types = sorted({a.ticket_type for a in attendees})
        unknown = sorted(set(ticket_types) - set(known_types))
        if unknown:
            raise PlanError(
                f"no attendee has ticket type {', '.join(map(repr, unknown))} (the list's ticket types: "
                f"{', '.join(known_types)})"
            )
        left_out: dict[str, int] = {}
        chosen = self._eligible(attendees, await self._job_states(attendees), ticket_types, left_out)
        if not chosen:
            reasons = ", ".join(f"{n} {why}" for why, n in sorted(left_out.items())) or "none listed"
            raise PlanError(f"no attendee to pre-print ({reasons})")
        stored, rules = await self._layouts()
        layout_of = {a.code: self._layout_of(a, rules, stored) for a in chosen}
        missing: dict[str, int] = {}
        for layout in layout_of.values():
            if layout != BUILT_IN and layout not in stored:
                missing[layout] = missing.get(layout, 0) + 1
        if missing:
            which = "; ".join(f"{n} attendee(s) get layout {layout!r}" for layout, n in sorted(missing.items()))
            raise PlanError(
                f"{which}, which is not set in this venue: set it (badge-agent layout set) or change the rule "
                "(badge-agent layout rules) before planning"
            )
        used = {layout: stored.get(layout, 0) for layout in set(layout_of.values())}
        entries = [entry_for(a, sort, layout_of[a.code], used[layout_of[a.code]]) for a in chosen]
        planned = boxes(entries, box_size)
        created = await self.scripts.run(
            specs.RUN.call(
                self.keys, name, sort, box_size, json.dumps(sorted(ticket_types)), pickup or DEFAULT_PICKUP,
                json.dumps(used, sort_keys=True),
            )
        )  # fmt: skip
        if created[0] != "created":
            raise PlanError(f"a pre-print run named {name!r} exists: choose another name, or drop it (preprint rm)")
        written: list[Box] = []
        for box in planned:
            kept = await self._write_box(name, Box(len(written) + 1, box.entries), sort)
            if kept.entries:
                written.append(kept)
        await self.scripts.run(specs.LISTED.call(self.keys, name))
        run = await self.need_run(name)
        return PlanReport(run, await self.boxes(run), left_out)

    async def _write_box(self, run: str, box: Box, sort: SortBy) -> Box:
        """Write one box; an attendee changed since the plan read them is read again and kept only while still
        eligible (a rename keeps their place in this box: the order within a box is a courtesy, not a promise)."""
        entries = list(box.entries)
        for _ in range(BOX_RETRIES):
            if not entries:
                return Box(box.number, ())
            current = Box(box.number, tuple(entries))
            rows = [(e.code, e.version, record_json(run, box.number, e)) for e in entries]
            reply = await self.scripts.run(
                specs.BOX.call(
                    self.keys,
                    self.attendees.keys,
                    run,
                    box.number,
                    current.first,
                    current.last,
                    rows,
                    self.attendees.venue.encoded_keys.events,
                    self.attendees.venue.events_maxlen,
                )
            )
            if reply[0] == "written":
                return current
            if reply[0] == "gone":
                raise PlanError(f"run {run!r} was dropped or changed while it was planned: nothing more was written")
            stale = set(reply[1:])
            fresh = await self.attendees.get_many(sorted(stale))
            states = await self._job_states([a for a in fresh if a is not None])
            again = {
                a.code: a
                for a in self._eligible([a for a in fresh if a is not None], states, (), {})
            }  # fmt: skip
            renewed = []
            for e in entries:
                if e.code not in stale:
                    renewed.append(e)
                elif e.code in again:
                    renewed.append(entry_for(again[e.code], sort, e.layout, e.layout_version))
            entries = renewed
        raise PlanError(f"box {box.number} of run {run!r} kept changing while it was written: plan again later")

    # -- after the plan ------------------------------------------------------------------------------------------

    async def remove(self, name: str) -> int:
        """Drop a run never printed: its attendees are in no run again. Returns how many were."""
        run = await self.need_run(name)
        if run.state != RunState.PLANNED:
            raise UserError(
                f"run {name!r} is {run.state}: its badges exist, so it cannot be dropped (its attendees' records say "
                "where their badges are)"
            )
        dropped = 0
        for n in range(1, run.boxes + 1):
            codes = await self.box_codes(name, n)
            reply = await self.scripts.run(specs.UNBOX.call(self.keys, self.attendees.keys, name, n, codes))
            if reply[0] != "dropped":
                raise UserError(f"run {name!r} is {reply[1]} now: it was not dropped (boxes before {n} were)")
            dropped += int(reply[1])
        reply = await self.scripts.run(specs.RM.call(self.keys, name))
        if reply[0] == "state":
            raise UserError(f"run {name!r} is {reply[1]} now: it was not dropped")
        return dropped

    async def move(self, name: str, from_states: Sequence[str], to: str, mode: str = Mode.NONE) -> None:
        reply = await self.scripts.run(specs.STATE.call(self.keys, name, from_states, to, mode))
        if reply[0] != "moved":
            state, run_mode = reply[1], reply[2]
            how = {Mode.PDF: " as a PDF", Mode.POOL: " on the venue's printers"}.get(run_mode, "")
            raise UserError(f"run {name!r} is {state or 'gone'}{how}: it cannot be {to} now")

    async def done(self, name: str) -> int:
        """A PDF run's sheets are printed: its attendees' badges are pre-printed (none before). Returns how many."""
        run = await self.need_run(name)
        if run.mode != Mode.PDF:
            raise UserError(
                f"run {name!r} has no PDF (write it first: badge-agent preprint pdf {name} -o badges.pdf)"
                if run.mode == Mode.NONE
                else f"run {name!r} is printed on the venue's printers, which confirm each badge themselves"
            )
        if run.state == RunState.DONE:
            raise UserError(f"run {name!r} was marked printed already: nothing changed")
        marked = 0
        for n in range(1, run.boxes + 1):
            codes = await self.box_codes(name, n)
            reply = await self.scripts.run(
                specs.DONE.call(
                    self.keys,
                    self.attendees.keys,
                    name,
                    n,
                    codes,
                    self.attendees.venue.encoded_keys.events,
                    self.attendees.venue.events_maxlen,
                )
            )
            if reply[0] != "done":
                raise UserError(f"run {name!r} is {reply[1]} now: boxes before {n} were marked printed")
            marked += int(reply[1])
        await self.move(name, [RunState.PLANNED], RunState.DONE, Mode.PDF)
        return marked

    async def counts(self, run: Run) -> dict[str, int]:
        """The run's badges by where they are: read from the attendees' records, so every view counts alike.

        ``planned``: not printed yet; ``preprinted``: every badge of the run that came out (in a box, handed over, or
        void after it was printed); ``in_boxes``: those a box holds now (not handed over, not void: the no-shows,
        once the doors close); ``handed_over``; ``void``: no longer right (``printed_at_door``: those whose
        attendee's badge came out at the door since).
        """
        counts = dict.fromkeys(COUNTS, 0)
        k = self.attendees.venue.encoded_keys
        void_printed = 0
        voids = {dec(c): v for c, v in (await self.redis.hgetall(enc(self.keys.voids(run.name)))).items()}
        async for _, codes in self.codes(run):
            if not codes:
                continue
            attendees = [a for a in await self.attendees.get_many(codes) if a is not None]
            mine = [a for a in attendees if (w := parse_where(a.preprint, "")) is not None and w.run == run.name]
            printed = await self._printed(run, mine)
            door: list[Attendee] = []
            for attendee, was_printed in zip(mine, printed, strict=True):
                state = attendee.preprint_state or (BadgeState.PREPRINTED if was_printed else "planned")
                if state == BadgeState.PREPRINTED:
                    counts["in_boxes"] += 1
                elif state in (BadgeState.HANDED_OVER, BadgeState.VOID):
                    counts[state] += 1
                else:
                    counts["planned"] += 1
                if state == BadgeState.VOID:
                    door.append(attendee)
                    void_printed += _void_printed(voids.get(attendee.code))
            if door:
                raws = await self.scripts.run(
                    attendee_specs.READ.call([k.job(enc(a.job_id)) for a in door], (b"state",))
                )
                counts["printed_at_door"] += sum(1 for r in raws if r[0] is not None and dec(r[0]) == "printed")
        counts["preprinted"] = counts["in_boxes"] + counts["handed_over"] + void_printed
        return counts

    async def _printed(self, run: Run, attendees: Sequence[Attendee]) -> list[bool]:
        """Whether each attendee's badge of a run on the venue's printers was confirmed (its pre-print job's
        completion gate): such a badge is pre-printed before anything marks it so."""
        if run.mode != Mode.POOL or not attendees:
            return [False] * len(attendees)
        k = self.attendees.venue.encoded_keys
        found = await self.redis.exists(*[k.done(enc(preprint_job_id(a.job_id))) for a in attendees])
        if found == len(attendees):
            return [True] * len(attendees)
        async with self.redis.pipeline(transaction=False) as pipe:
            for a in attendees:
                pipe.exists(k.done(enc(preprint_job_id(a.job_id))))
            return [bool(x) for x in await pipe.execute()]

    async def voids(self, name: str) -> list[Void]:
        """The run's void badges, by box then name: those ``printed`` are in a box, for staff to pull."""
        await self.need_run(name)
        raw = await self.redis.hgetall(enc(self.keys.voids(name)))
        found = []
        for code, value in raw.items():
            try:
                data = json.loads(value)
                found.append(
                    Void(
                        dec(code),
                        int(data.get("box") or 0),
                        str(data.get("name") or ""),
                        str(data.get("reason") or ""),
                        int(data.get("ms") or 0),
                        bool(data.get("printed", True)),
                    )
                )
            except (ValueError, TypeError, AttributeError):
                found.append(Void(dec(code), 0, "", "the void entry cannot be read", 0, True))
        return sorted(found, key=lambda v: (v.box, sort_key(v.name), v.code))

    async def void_layout(self, name: str, layout: str) -> tuple[int, int]:
        """Void the run's badges drawn with an older version of ``layout`` than the venue's now: (how many, the
        version now). A new version voids nothing until an admin says so."""
        run = await self.need_run(name)
        stored = await LayoutStore(self.redis, self.venue).get(layout)
        if stored is None:
            raise UserError(f"layout {layout!r} is not set in this venue (badge-agent layout list)")
        if layout not in run.layout_versions:
            used = ", ".join(sorted(n or "the built-in design" for n in run.layout_versions)) or "none"
            raise UserError(f"run {name!r} has no badge drawn with layout {layout!r} (its layouts: {used})")
        voided = 0
        async for _, codes in self.codes(run):
            attendees = [a for a in await self.attendees.get_many(codes) if a is not None]
            if not attendees:
                continue
            voided += await self.scripts.run(
                specs.VOID_LAYOUT.call(
                    self.keys, self.attendees.keys, self.attendees.venue.encoded_keys, name, layout, stored.version,
                    [(a.code, a.job_id) for a in attendees],
                )
            )  # fmt: skip
        return voided, stored.version

    async def where(self, attendee: Attendee) -> Where | None:
        """Where the attendee's pre-printed badge is, and its state (a badge a run on the venue's printers confirmed
        is pre-printed from then on, before anything marks the attendee so)."""
        where = parse_where(attendee.preprint, attendee.preprint_state)
        if where is None or where.state != "planned":
            return where
        k = self.attendees.venue.encoded_keys
        if await self.redis.exists(k.done(enc(preprint_job_id(attendee.job_id)))):
            return Where(**{**where.__dict__, "state": BadgeState.PREPRINTED})
        return where

    async def at_door(self, code: str) -> tuple[str, bool, int]:
        """The desk prints the attendee's badge at the door now: their pre-printed badge becomes void first, in one
        step (preprint_at_door.lua). Returns (``voided`` | ``void`` | ``handed_over`` | ``none``, whether the boxed
        badge may be on paper (staff pull it), its box number)."""
        attendee = await self.attendees.get(code)
        if attendee is None:
            return "none", False, 0
        run = run_of(attendee.preprint)
        if not run:
            return "none", False, 0
        reply = await self.scripts.run(
            specs.AT_DOOR.call(
                self.keys, self.attendees.keys, self.attendees.venue.encoded_keys, code, run, attendee.job_id
            )
        )
        if reply[0] == "voided":
            return "voided", reply[1] == "1", int(reply[2] or 0)
        return reply[0], False, int(reply[1]) if len(reply) > 1 and reply[1].isdigit() else 0

    async def handover(self, code: str, by: str, zone: str = "") -> tuple[str, Where | None]:
        """The desk hands the attendee their pre-printed badge: checked in, counted (an arrival of ``zone`` on the
        event day's counts, "" for none), told to the printed record's consumers, in one step. Returns
        (``handed_over`` | ``already`` | ``void`` | ``not_printed`` | ``none`` | ``unknown``, where the badge is)."""
        attendee = await self.attendees.get(code)
        if attendee is None:
            return "unknown", None
        where = parse_where(attendee.preprint, attendee.preprint_state)
        if where is None:
            return "none", None
        reply = await self.scripts.run(
            specs.HANDOVER.call(
                self.keys, self.attendees.keys, self.attendees.venue.encoded_keys, code, where.run, attendee.job_id,
                by, self.attendees.venue.events_maxlen, zone,
            )
        )  # fmt: skip
        return reply[0], await self.where(await self.attendees.get(code) or attendee)


__all__ = [
    "BadgeState", "PlanError", "PlanReport", "PreprintStore", "Run", "StoredBox", "Void", "Where", "parse_where",
]  # fmt: skip


#: (venue, run) -> (when, counts): a board's refreshes and /metrics scrapes read a big run's counts at most this often.
_COUNTED: dict[tuple[str, str], tuple[float, dict[str, int]]] = {}
COUNTS_FRESH_S = 5.0


async def preprint_status(redis: Redis, venue: str) -> dict[str, Any] | None:
    """Each run's state and counts (``PreprintStore.counts``, the same numbers ``preprint status``, /metrics and the
    attendee export give), for ``badge-agent status`` and the board; None for a venue without runs, and for a
    credential that may not read the runs (an agent's: the counts come from the attendee list, which it must not
    read; its ``status`` shows the rest)."""
    import time

    from redis.exceptions import NoPermissionError

    store = PreprintStore(redis, venue)
    try:
        names = await store.names()
    except NoPermissionError:
        return None
    if not names:
        return None
    runs = []
    for name in names:
        run = await store.run(name)
        if run is None:
            continue
        kept = _COUNTED.get((venue, name))
        if kept is not None and time.monotonic() - kept[0] < COUNTS_FRESH_S:
            counts = kept[1]
        else:
            counts = await store.counts(run)
            _COUNTED[(venue, name)] = (time.monotonic(), counts)
        runs.append({"run": name, "state": run.state, "mode": run.mode, "total": run.total, "counts": counts})
    return {"runs": runs}
