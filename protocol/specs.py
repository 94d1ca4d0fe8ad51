"""One spec per Lua script: the only place its KEYS and ARGV are put in order, and where its reply becomes a type.

``SPEC.call(...)`` builds a ``ScriptCall``: the spec (the script's name and the parser of its reply), and its KEYS and
ARGV as sent (bytes).
``Scripts.run`` sends one call, ``Scripts.run_together`` several in one round trip; both parse the reply through the
call's spec, so a single and a pipelined call of a script cannot differ. Each .lua file names its KEYS and ARGV in two
header lines (``-- KEYS ...``, ``-- ARGV ...``) that tests/core/test_protocol.py checks against these builders.

Keys come from ``EncodedKeys`` (built once per venue, a printer's keys once per printer), names and ids as bytes: the
pull loop's calls (take, begin, confirm) build their lists from ready bytes only.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any, ClassVar, Generic, Literal, TypeVar

from protocol.codec import dec, enc
from protocol.keys import EncodedKeys, PrinterKeys
from protocol.replies import (
    Beat,
    BeginKind,
    Begun,
    CancelKind,
    Cancelled,
    Confirmed,
    ConfirmKind,
    DeadLetterKind,
    Enqueued,
    GroupAdded,
    GroupAddKind,
    GroupBack,
    GroupBackKind,
    GroupClaimed,
    GroupClaimKind,
    HandedOn,
    HandOnKind,
    Reclaimed,
    ReclaimKind,
    ReflagKind,
    Released,
    ReleaseKind,
    Reprinted,
    ReprintKind,
    RequeueKind,
    Source,
    StealKind,
    Stole,
    Taken,
)

R = TypeVar("R")
E = TypeVar("E", bound=StrEnum)

Args = list[bytes | int]

ReleaseOutcome = Literal["failed", "unknown", "unsent"]


class Spec(Generic[R]):
    """A script's name and reply type; each subclass adds ``call(...)``, the one builder of its KEYS and ARGV."""

    name: ClassVar[str]
    #: One of the pull loop's round trips: sent on its own connection when the store keeps one (scripts.Lane).
    pull_loop: ClassVar[bool] = False

    def parse(self, reply: Any) -> R:
        raise NotImplementedError


#: One script call as sent: (its spec, KEYS, ARGV). A plain tuple: the pull loop builds three per badge, and a
#: NamedTuple's constructor costs a Python call each (bench/hot_path.py).
ScriptCall = tuple[Spec[R], list[bytes], Args]


def _by_value(kind: type[E]) -> dict[bytes | str, E]:
    """A reply's first element -> its member, whether the client decodes replies or not (a dict look-up: the hot
    path parses a reply per call)."""
    table: dict[bytes | str, E] = {}
    for member in kind:
        table[member.value] = member
        table[member.value.encode()] = member
    return table


class _Word(Spec[E]):
    """A script that answers one word (``{"released"}``): a member of ``kind``."""

    def __init__(self, kind: type[E]) -> None:
        self._kinds = _by_value(kind)

    def parse(self, reply: Any) -> E:
        return self._kinds[reply[0]]


def _flag(on: bool) -> bytes:
    return b"1" if on else b"0"


def _detail(reply: Any) -> str:
    return dec(reply[1]) if len(reply) > 1 else ""


def _zone_tail(k: EncodedKeys, printers: Sequence[str]) -> tuple[list[bytes], list[bytes]]:
    """The keys and names of zone printers as a step takes them (prelude.lua, ``zone_peers``): four keys each, in
    this order, at the end of KEYS; the names at the end of ARGV."""
    keys: list[bytes] = []
    for name in printers:
        p = k.printer(name)
        keys += [p.health, p.control, p.queue, p.inflight]
    return keys, [enc(name) for name in printers]


def _queue_tail(k: EncodedKeys, ids: Sequence[bytes]) -> tuple[list[bytes], Args]:
    """A pinned queue as the caller read it (prelude.lua, ``queue_read``): the job key of each id in KEYS; their
    number, then the ids, in ARGV."""
    return [k.job(i) for i in ids], [len(ids), *ids]


class Enqueue(Spec[Enqueued]):
    name = "enqueue"

    def call(
        self,
        k: EncodedKeys,
        job_id: bytes,
        payload: bytes,
        pinned: PrinterKeys | None,
        maxlen: int,
        creator: bytes = b"",
        zone: tuple[bytes, bytes] | None = None,
        only: bool = False,
    ) -> ScriptCall[Enqueued]:
        """``creator``: the intake token asking (its set of jobs is then a key too), or b"" (the CLI); ``zone``: the
        job's zone and its printers (names apart by spaces), when it has one; ``only``: ``pinned`` alone may print
        it (a test badge): no peer steals it, and a step that would hand it on cancels it."""
        queue, printer = (pinned.queue, pinned.name) if pinned is not None else (k.pool, b"")
        keys = [k.job(job_id), queue, k.events, k.stats, k.pinned]
        if creator:
            keys.append(k.owned(creator))
        args: Args = [job_id, payload, printer, maxlen, creator, *(zone or ())]
        if only:
            if zone is None:
                args += [b"", b""]
            args.append(b"1")
        return (self, keys, args)

    def parse(self, reply: Any) -> Enqueued:
        return Enqueued(bool(reply[0]), dec(reply[1]))


_SOURCES = _by_value(Source)


class Take(Spec[Taken | None]):
    name = "take"
    pull_loop = True

    def call(self, k: EncodedKeys, me: PrinterKeys, room: int = 1) -> ScriptCall[Taken | None]:
        """``room``: how many jobs the printer may hold at once (2: the next badge waits at the printer)."""
        args: list[bytes | int] = [me.name] if room == 1 else [me.name, room]
        return (self, [me.queue, k.pool, me.inflight, me.control, k.pinned, me.group_held], args)

    def parse(self, reply: Any) -> Taken | None:
        return Taken(_SOURCES[reply[0]], dec(reply[1])) if reply else None


_BEGIN_KINDS = _by_value(BeginKind)


class Begin(Spec[Begun]):
    name = "begin"
    pull_loop = True

    def call(self, k: EncodedKeys, me: PrinterKeys, job_id: bytes, location: bytes, maxlen: int) -> ScriptCall[Begun]:
        return (
            self,
            [me.inflight, k.job(job_id), k.done(job_id), k.events, k.dlq, k.stats],
            [job_id, me.name, location, maxlen],
        )

    def parse(self, reply: Any) -> Begun:
        kind = _BEGIN_KINDS[reply[0]]
        if kind is BeginKind.PRINT:
            return Begun(kind, bytes(reply[1]), int(reply[2]), int(reply[3]), dec(reply[4]))
        return Begun(kind, detail=_detail(reply))


_CONFIRM_KINDS = _by_value(ConfirmKind)


class Confirm(Spec[Confirmed]):
    name = "confirm"
    pull_loop = True

    def call(
        self,
        k: EncodedKeys,
        me: PrinterKeys,
        job_id: bytes,
        location: bytes,
        epoch: int,
        maxlen: int,
        layout: tuple[str, int] | None = None,
        waits: PrinterKeys | None = None,
        confirmed_by: str | None = None,
    ) -> ScriptCall[Confirmed]:
        drawn: list[Any] = []
        if layout is not None or waits is not None or confirmed_by is not None:
            drawn = [enc(layout[0]), str(layout[1]).encode()] if layout is not None else [b"", b""]
            drawn.append(waits.name if waits is not None else b"")
        if confirmed_by is not None:
            # Whose word the print is on ("device" or "spooler"): the last, optional ARGV.
            drawn.append(enc(confirmed_by))
        # The queue a job no longer held waits in (the script's "waits" answer named it): voided with the confirm.
        queue = [waits.queue, k.pinned] if waits is not None else []
        return (
            self,
            [
                me.inflight,
                k.job(job_id),
                k.done(job_id),
                k.events,
                k.pool,
                k.stats,
                k.printed_consumers,
                k.printed,
                k.printers,
                k.minutes,
                *queue,
            ],
            [job_id, me.name, location, str(epoch).encode(), maxlen, *drawn],
        )

    def parse(self, reply: Any) -> Confirmed:
        return Confirmed(_CONFIRM_KINDS[reply[0]], dec(reply[1]))


_RELEASE_KINDS = _by_value(ReleaseKind)


class Release(Spec[Released]):
    name = "release"

    def call(
        self,
        k: EncodedKeys,
        me: PrinterKeys,
        job_id: bytes,
        location: bytes,
        outcome: ReleaseOutcome,
        reason: bytes,
        max_attempts: int,
        maxlen: int,
        dead_after_ms: int,
        zone: Sequence[str] = (),
    ) -> ScriptCall[Released]:
        """``zone``: the printers of the job's zone, when the script asked for their keys (``zones``);
        ``dead_after_ms``: how old a zone printer's beat may be for it to take the job."""
        zone_keys, zone_args = _zone_tail(k, zone)
        return (
            self,
            [
                me.inflight,
                k.job(job_id),
                k.done(job_id),
                k.pool,
                k.dlq,
                k.events,
                k.stats,
                k.pinned,
                me.group_held,
                *zone_keys,
            ],
            [job_id, me.name, location, outcome.encode(), reason, max_attempts, maxlen, dead_after_ms, *zone_args],
        )

    def parse(self, reply: Any) -> Released:
        kind = _RELEASE_KINDS[reply[0]]
        if kind is ReleaseKind.ZONES:
            return Released(kind, printers=tuple(dec(x) for x in reply[1:]))
        return Released(kind, dec(reply[1]) if len(reply) > 1 else "")


class Reflag(_Word[ReflagKind]):
    name = "reflag"

    def call(
        self, k: EncodedKeys, me: PrinterKeys, job_id: bytes, location: bytes, epoch: int, maxlen: int
    ) -> ScriptCall[ReflagKind]:
        return (self, [k.job(job_id), k.events, k.stats], [job_id, me.name, location, str(epoch).encode(), maxlen])


class DeadLetter(_Word[DeadLetterKind]):
    name = "dead_letter"

    def call(
        self, k: EncodedKeys, me: PrinterKeys, job_id: bytes, reason: bytes, maxlen: int
    ) -> ScriptCall[DeadLetterKind]:
        return (self, [me.inflight, k.job(job_id), k.dlq, k.events, k.stats], [job_id, me.name, reason, maxlen])


class BeatSpec(Spec[Beat]):
    name = "beat"

    def call(
        self, k: EncodedKeys, me: PrinterKeys, health: bytes, ttl_ms: int, maxlen: int, first: bool, location: bytes
    ) -> ScriptCall[Beat]:
        return (
            self,
            [k.hb, me.health, me.queue, me.inflight, k.printers, k.events, me.control],
            [me.name, health, ttl_ms, maxlen, _flag(first), location],
        )

    def parse(self, reply: Any) -> Beat:
        return Beat(int(reply[0]), bool(int(reply[1])), int(reply[2]), dec(reply[3]), dec(reply[4]))


class Sweep(Spec[list[str]]):
    name = "sweep"

    def call(
        self, k: EncodedKeys, me: PrinterKeys, dead_after_ms: int, lease_ms: int, limit: int
    ) -> ScriptCall[list[str]]:
        return (self, [k.hb, k.sweep_lease], [me.name, dead_after_ms, lease_ms, limit])

    def parse(self, reply: Any) -> list[str]:
        return [dec(x) for x in reply or []]  # false: another agent holds this interval's lease


_RECLAIM_KINDS = _by_value(ReclaimKind)


class Reclaim(Spec[Reclaimed]):
    name = "reclaim"

    def call(
        self,
        k: EncodedKeys,
        victim: PrinterKeys,
        dead_after_ms: int | None,
        held: bytes | Sequence[bytes],
        by: bytes,
        maxlen: int,
        dead_ttl_ms: int,
        zone_dead_after_ms: int,
        queue: Sequence[bytes] = (),
        zone: Sequence[str] = (),
    ) -> ScriptCall[Reclaimed]:
        """``dead_after_ms=None`` forces it; ``held``: the jobs the caller saw the victim hold (its in-flight list,
        LRANGE: two where the next badge waited at the printer), one job, or b"" (then no held job's keys are in
        KEYS); ``queue``: the victim's pinned queue as the caller read it (LRANGE);
        ``zone``: the zone printers whose keys the script asked for; ``zone_dead_after_ms``: how old a zone
        printer's beat may be for it to take a zone's job."""
        keys = [k.hb, victim.inflight, victim.queue, k.pool, victim.health, k.events, k.stats, k.printers, k.pinned]
        held_ids = [held] if isinstance(held, bytes) else list(held)
        for job_id in held_ids:
            if job_id:
                keys += [k.job(job_id), k.done(job_id)]
        staleness: bytes | int = b"force" if dead_after_ms is None else dead_after_ms
        queue_keys, queue_args = _queue_tail(k, queue)
        zone_keys, zone_args = _zone_tail(k, zone)
        return (
            self,
            keys + queue_keys + zone_keys,
            [
                victim.name,
                staleness,
                b" ".join(held_ids),
                by,
                maxlen,
                dead_ttl_ms,
                zone_dead_after_ms,
                *queue_args,
                *zone_args,
            ],
        )

    def parse(self, reply: Any) -> Reclaimed:
        kind = _RECLAIM_KINDS[reply[0]]
        if kind is ReclaimKind.RECLAIMED:
            return Reclaimed(kind, dec(reply[1]), int(reply[2]), int(reply[3]))
        if kind is ReclaimKind.ZONES:
            return Reclaimed(kind, printers=tuple(dec(x) for x in reply[1:]))
        return Reclaimed(kind)


_STEAL_KINDS = _by_value(StealKind)


class Steal(Spec[Stole]):
    name = "steal"

    def call(
        self,
        k: EncodedKeys,
        me: PrinterKeys,
        owner: PrinterKeys,
        job_id: bytes,
        affinity_ms: int,
        maxlen: int,
        dead_after_ms: int,
        zone: Sequence[str] = (),
    ) -> ScriptCall[Stole]:
        """``zone``: the printers of the job's zone, when the script asked for their keys (``zones``)."""
        zone_keys, zone_args = _zone_tail(k, zone)
        return (
            self,
            [owner.queue, me.inflight, k.job(job_id), k.events, me.control, k.pinned, *zone_keys],
            [me.name, owner.name, job_id, affinity_ms, maxlen, dead_after_ms, *zone_args],
        )

    def parse(self, reply: Any) -> Stole:
        # {"stolen", id} or {"no", why, ...}: the why is the answer, then the zone printers it asks for
        if _STEAL_KINDS.get(reply[0]) is StealKind.STOLEN:
            return Stole(StealKind.STOLEN)
        return Stole(_STEAL_KINDS[reply[1]], tuple(dec(x) for x in reply[2:]))


_HAND_ON_KINDS = _by_value(HandOnKind)


def _handed_on(reply: Any) -> HandedOn:
    kind = _HAND_ON_KINDS[reply[0]]
    if kind is HandOnKind.MOVED:
        return HandedOn(kind, int(reply[1]), int(reply[2]))
    return HandedOn(kind, printers=tuple(dec(x) for x in reply[1:]))


class Drain(Spec[HandedOn]):
    name = "drain"

    def call(
        self,
        k: EncodedKeys,
        printer: PrinterKeys,
        order: Literal["drain", "resume"],
        by: bytes,
        maxlen: int,
        dead_after_ms: int,
        queue: Sequence[bytes] = (),
        zone: Sequence[str] = (),
    ) -> ScriptCall[HandedOn]:
        """``queue``, ``zone``, ``dead_after_ms``: as ``Handback.call``'s."""
        queue_keys, queue_args = _queue_tail(k, queue)
        zone_keys, zone_args = _zone_tail(k, zone)
        return (
            self,
            [printer.control, printer.queue, k.pool, k.events, k.pinned, *queue_keys, *zone_keys],
            [printer.name, order.encode(), by, maxlen, dead_after_ms, *queue_args, *zone_args],
        )

    def parse(self, reply: Any) -> HandedOn:
        return _handed_on(reply)


class Requeue(_Word[RequeueKind]):
    name = "requeue"

    def call(self, k: EncodedKeys, job_id: bytes, by: bytes, maxlen: int) -> ScriptCall[RequeueKind]:
        return (self, [k.dlq, k.job(job_id), k.pool, k.events, k.done(job_id)], [job_id, by, maxlen])


_REPRINT_KINDS = _by_value(ReprintKind)


class Reprint(Spec[Reprinted]):
    name = "reprint"

    def call(
        self,
        k: EncodedKeys,
        job_id: bytes,
        reason: bytes,
        by: bytes,
        cap: int,
        force: bool,
        maxlen: int,
        inflight: Sequence[bytes] = (),
        pinned: PrinterKeys | None = None,
        zone: tuple[bytes, bytes] | None = None,
    ) -> ScriptCall[Reprinted]:
        """``inflight``: every printer's in-flight list (a stale copy of the printed job is removed: reprint.lua);
        ``pinned``: the printer the round waits for (None: the pool); ``zone``: the round's zone and its printers
        (names apart by spaces), as enqueue takes them."""
        queue, printer = (pinned.queue, pinned.name) if pinned is not None else (k.pool, b"")
        return (
            self,
            [k.job(job_id), k.done(job_id), queue, k.dlq, k.events, k.stats, k.pinned, *inflight],
            [job_id, reason, by, cap, _flag(force), maxlen, printer, *(zone or ())],
        )

    def parse(self, reply: Any) -> Reprinted:
        return Reprinted(_REPRINT_KINDS[reply[0]], _detail(reply))


_CANCEL_KINDS = _by_value(CancelKind)


class Cancel(Spec[Cancelled]):
    name = "cancel"

    def call(
        self, k: EncodedKeys, job_id: bytes, pinned: PrinterKeys | None, by: bytes, maxlen: int
    ) -> ScriptCall[Cancelled]:
        """``pinned``: the printer the caller read on the job (the script answers retry if that changed)."""
        queue, printer = (pinned.queue, pinned.name) if pinned is not None else (k.pool, b"")
        return (self, [k.job(job_id), k.pool, queue, k.pinned, k.events, k.stats], [job_id, printer, by, maxlen])

    def parse(self, reply: Any) -> Cancelled:
        return Cancelled(_CANCEL_KINDS[reply[0]], _detail(reply))


class Handback(Spec[HandedOn]):
    name = "handback"

    def call(
        self,
        k: EncodedKeys,
        me: PrinterKeys,
        reason: bytes,
        maxlen: int,
        dead_after_ms: int,
        queue: Sequence[bytes] = (),
        zone: Sequence[str] = (),
    ) -> ScriptCall[HandedOn]:
        """``queue``: the pinned queue as the caller read it (LRANGE); ``zone``: the zone printers whose keys the
        script asked for; ``dead_after_ms``: how old a zone printer's beat may be for it to take a zone's job."""
        queue_keys, queue_args = _queue_tail(k, queue)
        zone_keys, zone_args = _zone_tail(k, zone)
        return (
            self,
            [me.queue, k.pool, k.events, k.pinned, *queue_keys, *zone_keys],
            [me.name, reason, maxlen, dead_after_ms, *queue_args, *zone_args],
        )

    def parse(self, reply: Any) -> HandedOn:
        return _handed_on(reply)


#: One job of a group as ``group_add`` takes it: its id, payload, more fields for its hash (a JSON object: its
#: "kind", say) and the name a continuation label gives it.
GroupJob = tuple[bytes, bytes, bytes, bytes]

_GROUP_ADD_KINDS = _by_value(GroupAddKind)


class GroupAdd(Spec[GroupAdded]):
    name = "group_add"

    def call(
        self,
        k: EncodedKeys,
        group_id: bytes,
        printers: Sequence[str],
        cont: bytes,
        maxlen: int,
        jobs: Sequence[GroupJob],
    ) -> ScriptCall[GroupAdded]:
        """``printers``: who may claim the group (none: any); ``cont``: the continuation label's payload, or b"";
        ``jobs``: in print order."""
        keys = [k.groups, k.group(group_id), k.group_queue(group_id), k.events, k.stats, k.pinned]
        args: Args = [group_id, enc(" ".join(printers)), cont, maxlen, len(jobs)]
        for job_id, payload, fields, label in jobs:
            keys.append(k.job(job_id))
            args += [job_id, payload, fields, label]
        return (self, keys, args)

    def parse(self, reply: Any) -> GroupAdded:
        kind = _GROUP_ADD_KINDS[reply[0]]
        if kind is GroupAddKind.ADDED:
            return GroupAdded(kind, int(reply[1]))
        return GroupAdded(kind, detail=_detail(reply))


_GROUP_CLAIM_KINDS = _by_value(GroupClaimKind)


class GroupClaim(Spec[GroupClaimed]):
    name = "group_claim"

    def call(self, k: EncodedKeys, me: PrinterKeys, group_id: bytes, maxlen: int) -> ScriptCall[GroupClaimed]:
        return (
            self,
            [k.groups, k.group(group_id), k.group_queue(group_id), me.group_held, me.group_claim, me.control, k.events],
            [me.name, group_id, maxlen],
        )

    def parse(self, reply: Any) -> GroupClaimed:
        kind = _GROUP_CLAIM_KINDS[reply[0]]
        if kind is GroupClaimKind.CLAIMED:
            return GroupClaimed(kind, int(reply[1]))
        return GroupClaimed(kind, why=_detail(reply))


_GROUP_BACK_KINDS = _by_value(GroupBackKind)


class GroupBackSpec(Spec[GroupBack]):
    name = "group_back"

    def call(
        self,
        k: EncodedKeys,
        printer: PrinterKeys,
        dead_after_ms: int | None,
        group_id: bytes,
        held: bytes | Sequence[bytes],
        cont_id: bytes,
        by: bytes,
        maxlen: int,
        reason: bytes,
    ) -> ScriptCall[GroupBack]:
        """``dead_after_ms=None``: hand back whatever the printer's heartbeat says (its own agent asks); ``held``:
        the jobs the caller saw in its in-flight list (LRANGE, newest first; two where a badge waits at the
        printer), each job's key named; one job, or b"" for none."""
        keys = [
            k.hb,
            printer.inflight,
            printer.group_held,
            printer.group_claim,
            k.groups,
            k.group(group_id),
            k.group_queue(group_id),
            k.events,
            k.stats,
            k.pinned,
            k.printers,
            k.job(cont_id),
        ]
        held_ids = ([held] if held else []) if isinstance(held, bytes) else list(held)
        keys += [k.job(job_id) for job_id in held_ids]
        staleness: bytes | int = b"force" if dead_after_ms is None else dead_after_ms
        return (self, keys, [printer.name, staleness, group_id, b" ".join(held_ids), cont_id, by, maxlen, reason])

    def parse(self, reply: Any) -> GroupBack:
        kind = _GROUP_BACK_KINDS[reply[0]]
        if kind is GroupBackKind.BACK:
            return GroupBack(kind, int(reply[1]) > 0, int(reply[2]), dec(reply[3]))
        return GroupBack(kind)


ENQUEUE = Enqueue()
TAKE = Take()
BEGIN = Begin()
CONFIRM = Confirm()
RELEASE = Release()
REFLAG = Reflag(ReflagKind)
DEAD_LETTER = DeadLetter(DeadLetterKind)
BEAT = BeatSpec()
HANDBACK = Handback()
SWEEP = Sweep()
RECLAIM = Reclaim()
STEAL = Steal()
DRAIN = Drain()
REQUEUE = Requeue(RequeueKind)
# staff operations, run by the intake service and the CLI
REPRINT = Reprint()


class PrintedTook(Spec[bool]):
    name = "printed_took"

    def call(self, k: EncodedKeys, consumer: str, entry_id: str) -> ScriptCall[bool]:
        return (self, [k.printed_consumers, k.printed], [enc(consumer), enc(entry_id)])

    def parse(self, reply: Any) -> bool:
        return int(reply) == 1


CANCEL = Cancel()
PRINTED_TOOK = PrintedTook()
GROUP_ADD = GroupAdd()
GROUP_CLAIM = GroupClaim()
GROUP_BACK = GroupBackSpec()

SPECS: tuple[Spec[Any], ...] = (
    ENQUEUE, TAKE, BEGIN, CONFIRM, RELEASE, REFLAG, DEAD_LETTER, BEAT, HANDBACK, SWEEP, RECLAIM, STEAL, DRAIN, REQUEUE,
    REPRINT, CANCEL, PRINTED_TOOK, GROUP_ADD, GROUP_CLAIM, GROUP_BACK,
)  # fmt: skip
