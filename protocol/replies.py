"""What the scripts answer, as types: a StrEnum for each script's kinds of answer, a small record where it says more.

The members are the strings the .lua files return, so a reply compares equal to its plain string too (``begun.kind
== "print"``) and prints as one (metrics labels, logs). ``specs.py`` turns a raw reply into these.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple


class Source(StrEnum):
    """Where ``take`` found the job it answers with (take.lua)."""

    HELD = "held"  # in-flight already holds it: a printer holds at most one
    QUEUE = "q"  # this printer's pinned queue
    POOL = "pool"
    GROUP = "group"  # the rest of the group this printer claimed (group_claim)
    DRAINED = "drained"  # an operator drained this printer: nothing was moved (the id is "")


class Taken(NamedTuple):
    source: Source
    job_id: str


class Enqueued(NamedTuple):
    added: bool
    state: str  # "queued" when added, else the state of the job already under this id


class BeginKind(StrEnum):
    PRINT = "print"
    NOT_OWNER = "not_owner"  # a peer reclaimed it: do not print
    DONE = "done"  # already printed: dropped
    DEAD = "dead"  # dead-lettered (no record, or one that contradicts the protocol)
    DROPPED = "dropped"  # another printer is printing it: this copy of the id was removed


@dataclass(frozen=True)
class Begun:
    """The reply of ``begin``: what to print, or why not (``detail``)."""

    kind: BeginKind
    payload: bytes = b""
    attempts: int = 0
    epoch: int = 0
    maybe_printed_where: str = ""
    detail: str = ""


class ConfirmKind(StrEnum):
    PRINTED = "printed"
    DUPLICATE = "duplicate"
    WAITS = "waits"  # Store only: the job waits in this printer's queue; confirm again naming it (confirm.lua)


class Confirmed(NamedTuple):
    kind: ConfirmKind
    where: str  # printed: where an earlier attempt may also have printed ("" if nowhere); duplicate: the first printer


class ReflagKind(StrEnum):
    FLAGGED = "flagged"  # marked maybe printed here again (a failover had lost release's flag)
    DUPLICATE = "duplicate"  # printed elsewhere meanwhile: that copy flagged maybe_duplicate
    UNCHANGED = "unchanged"  # no such job, an earlier round, this very print, or flagged already


class ReleaseKind(StrEnum):
    RELEASED = "released"
    DEAD = "dead"  # out of attempts: dead-lettered
    DONE = "done"  # it had been printed already
    NOT_OWNER = "not_owner"
    ZONES = "zones"  # a job of a zone: the keys of these zone printers are needed (``printers``); nothing changed


class Released(NamedTuple):
    kind: ReleaseKind
    to: str = ""  # released: the zone printer whose queue it went to, "" for the pool
    printers: tuple[str, ...] = ()


class DeadLetterKind(StrEnum):
    DEAD = "dead"
    NOT_OWNER = "not_owner"


@dataclass(frozen=True)
class Beat:
    server_ms: int
    was_declared_dead: bool
    depth: int
    inflight: str
    order: str  # an operator's order to this agent ("drain"), or ""


class ReclaimKind(StrEnum):
    RECLAIMED = "reclaimed"
    ALIVE = "alive"  # it beat since the sweep: left alone
    GONE = "gone"  # already reclaimed
    RETRY = "retry"  # its held job or its pinned queue changed since the caller looked
    ZONES = "zones"  # the keys of these zone printers are needed (``printers``): nothing changed


@dataclass(frozen=True)
class Reclaimed:
    """What ``reclaim`` did: the jobs it held (their ids apart by spaces: two where the next badge waited at the
    printer; "" for none) and the number of pinned jobs moved, when reclaimed; of the held and pinned jobs, how many
    went to a printer of their zone (``to_zone``) rather than the pool."""

    kind: ReclaimKind
    held: str = ""
    pinned: int = 0
    to_zone: int = 0
    printers: tuple[str, ...] = ()  # zones: the zone printers whose keys the script needs


class HandOnKind(StrEnum):
    """What ``handback`` and ``drain`` answer."""

    MOVED = "moved"
    RETRY = "retry"  # the pinned queue changed since the caller read it: nothing changed
    ZONES = "zones"  # the keys of these zone printers are needed (``printers``): nothing changed


@dataclass(frozen=True)
class HandedOn:
    """The pinned jobs ``handback`` or ``drain`` handed on, and how many of them to a printer of their zone."""

    kind: HandOnKind
    moved: int = 0
    to_zone: int = 0
    printers: tuple[str, ...] = ()


class StealKind(StrEnum):
    STOLEN = "stolen"
    BUSY = "busy"  # we hold a job
    DRAINED = "drained"  # we are drained
    YOUNG = "young"  # it has not waited long enough
    MOVED = "moved"  # no longer the oldest of its queue
    STALE = "stale"  # not in its queue at all (a hand edit): its index entry was dropped
    ZONE = "zone"  # a job of a zone this printer is not in, and a printer of the zone can print it
    ONLY = "only"  # a job for its printer alone (a test badge): no peer takes it
    ZONES = "zones"  # a job of a zone: the keys of its printers are needed (``Stole.printers``); nothing changed


class Stole(NamedTuple):
    kind: StealKind
    printers: tuple[str, ...] = ()  # zones: the zone printers whose keys the script needs


class RequeueKind(StrEnum):
    REQUEUED = "requeued"
    NOT_IN_DLQ = "not_in_dlq"
    NO_RECORD = "no_record"  # a garbage id: it stays in the DLQ
    PRINTED_ALREADY = "printed_already"  # confirmed after it was dead-lettered: out of the DLQ, not printed again


class ReprintKind(StrEnum):
    REPRINT = "reprint"
    NO_JOB = "no_job"
    REFUSED = "refused"  # not printed or dead
    CAP = "cap"  # as many reprints as allowed already


class Reprinted(NamedTuple):
    kind: ReprintKind
    detail: str  # reprint, cap: the number of reprints; refused: the job's state


class CancelKind(StrEnum):
    CANCELLED = "cancelled"
    NO_JOB = "no_job"
    REFUSED = "refused"
    RETRY = "retry"  # its pin is not what the caller read


class Cancelled(NamedTuple):
    kind: CancelKind
    detail: str  # refused: the job's state, or "taken" (a printer has it), or "changing" (kept changing)


class GroupAddKind(StrEnum):
    ADDED = "added"
    EXISTS = "exists"  # a group of this id was added before: nothing changed
    JOB_EXISTS = "job_exists"  # a job of one of its ids exists (``detail``): nothing changed


@dataclass(frozen=True)
class GroupAdded:
    kind: GroupAddKind
    count: int = 0
    detail: str = ""


class GroupClaimKind(StrEnum):
    CLAIMED = "claimed"
    NO = "no"  # not claimed: ``why`` says (drained, busy, gone, printers, empty)


@dataclass(frozen=True)
class GroupClaimed:
    kind: GroupClaimKind
    count: int = 0
    why: str = ""


class GroupBackKind(StrEnum):
    BACK = "back"
    ALIVE = "alive"  # the printer beat within the dead-after window: left alone
    NONE = "none"  # no group claimed, or nothing of it left
    RETRY = "retry"  # the claim, the job in hand or the label's id changed since the caller looked


@dataclass(frozen=True)
class GroupBack:
    """What ``group_back`` did: whether the job in hand went back with the group, how many jobs went back, and the
    id of the continuation label it made ("" for none)."""

    kind: GroupBackKind
    held: bool = False
    count: int = 0
    continued: str = ""
