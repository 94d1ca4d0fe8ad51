"""The outbox: confirmed prints of pretix attendees, sent to pretix by one sync process at a time.

The pretix sync is a consumer of the venue's printed record (protocol/printed.py): it registers before it loads
any attendee (pretix_sync/listing.py), so ``confirm`` writes every print from then on into the record in the same
atomic step that marks the badge printed. ``pretix_pump.lua`` moves the record's entries of pretix's attendees into
``P pretix:outbox`` (a stream, never capped): what job, which print (its epoch), whether it was the attendee's first
badge (check in, then log the print) or a reprint (log only), the printer, where, when; the record drops an entry
once every consumer has taken it. Nothing can confirm a print without its record entry, so none is missed, whatever
happens to the process that sends them; entries an earlier version wrote into the outbox itself are sent as any.

Sending: the process that holds the sender's lease (``P pretix:sender``, ``pretix_lease.lua``) reads the oldest entries,
sends them ``CONCURRENCY`` at a time (a wave), each with :func:`pretix_sync.push.send_print` (the job id as pretix's
redeem nonce; a print log only when the ticket lacks it) and removes it only once pretix answered (``pretix_sent.lua``,
which removes nothing for a process whose lease has run out). A second sync process finds the lease held and sends
nothing; it takes over when the holder stops renewing (it died). The lease is renewed before every wave and one send may
take at most ``SEND_TIMEOUT``, well inside it, so two processes never send at the same time. pretix unreachable: the
entry stays, and is sent when pretix answers again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from redis.asyncio import Redis

from pretix_sync import specs
from pretix_sync.client import PretixClient
from pretix_sync.errors import PretixConfigError, PretixRefused, PretixUnavailable
from pretix_sync.keys import CONSUMER, PretixKeys
from pretix_sync.push import PrintedBadge, send_print
from pretix_sync.walk_ins import walk_in_status
from protocol.codec import dec, enc
from protocol.printed import PrintedRecord
from protocol.scripts import Scripts

#: How long the sender's lease lasts without renewal (a crashed sender is replaced after this).
LEASE_MS = 60_000
#: The longest one entry's send may take (well inside the lease, which is renewed before each entry).
SEND_TIMEOUT = 20.0
#: Entries read per look.
BATCH = 50
#: Entries sent to pretix at once (each two requests, a reprint's one more): pretix on PostgreSQL answers them side
#: by side, so a backlog drains in a fraction of the time one at a time takes.
CONCURRENCY = 4
#: Entries of the printed record the pump moves per call (one script call each: short, so Redis never waits long).
PUMP_BATCH = 200

Report = Callable[[str], None]


@dataclass(frozen=True)
class Entry:
    """One confirmed print waiting to be told to pretix."""

    id: str
    job_id: str
    epoch: str
    first: bool
    printer: str
    location: str
    printed_ms: int
    #: The ticket code, for an entry that has no badge job behind it (the desk's hand-over of a pre-printed badge).
    code: str = ""

    @classmethod
    def parse(cls, entry_id: Any, raw: dict[Any, Any]) -> Entry:
        values = {dec(k): dec(v) for k, v in raw.items()}
        return cls(
            id=dec(entry_id),
            job_id=values.get("job_id", ""),
            epoch=values.get("epoch", ""),
            first=values.get("first") == "1",
            printer=values.get("printer", ""),
            location=values.get("location", ""),
            printed_ms=int(values.get("printed_ms") or 0),
            code=values.get("code", ""),
        )

    @property
    def printed_at(self) -> str:
        return datetime.fromtimestamp(self.printed_ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def waves(entries: list[Entry], size: int) -> list[list[Entry]]:
    """``entries`` in order, cut into waves of at most ``size``, never two prints of one job in a wave (a badge and
    its reprint are told in the order they happened)."""
    found: list[list[Entry]] = []
    jobs: set[str] = set()
    for entry in entries:
        if not found or len(found[-1]) >= size or entry.job_id in jobs:
            found.append([])
            jobs = set()
        found[-1].append(entry)
        jobs.add(entry.job_id)
    return found


def sender_name() -> str:
    """This process, as the lease names its holder."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Outbox:
    """One venue's outbox on one Redis client (``decode_responses=False``)."""

    def __init__(self, redis: Redis, venue: str, scripts: Scripts | None = None) -> None:
        self.redis = redis
        self.keys = PretixKeys(venue)
        self.record = PrintedRecord(redis, venue)
        self.scripts = scripts or Scripts(redis)

    async def waiting(self) -> int:
        """How many confirmed prints wait to be told to pretix: in the outbox, and in the record not moved yet."""
        return int(await self.redis.xlen(enc(self.keys.outbox))) + await self.in_record()

    async def in_record(self, look: int = PUMP_BATCH) -> int:
        """Prints of pretix's attendees in the printed record that the pump has not moved yet (looking at most at
        ``look`` entries: a sender moves them within a round)."""
        entries = await self.record.after(CONSUMER, look)
        if not entries:
            return 0
        positions = await self.redis.hmget(enc(self.keys.jobs), [enc(e.job_id) for e in entries])
        return sum(position is not None for position in positions)

    async def pump(self) -> int:
        """Move the printed record's prints of pretix's attendees into the outbox; the prints added."""
        added = 0
        while True:
            pumped = await self.scripts.run(specs.PUMP.call(self.keys, PUMP_BATCH))
            added += pumped.added
            if pumped.read < PUMP_BATCH:
                return added

    async def entries(self, count: int = BATCH) -> list[Entry]:
        raw: list[tuple[bytes, dict[bytes, bytes]]] = await self.redis.xrange(  # type: ignore[assignment]
            enc(self.keys.outbox), count=count
        )
        return [Entry.parse(entry_id, fields) for entry_id, fields in raw]

    async def lease(self, me: str, lease_ms: int = LEASE_MS) -> specs.Lease:
        return await self.scripts.run(specs.LEASE.call(self.keys, me, lease_ms))

    async def sent(self, me: str, entry_id: str) -> bool:
        return await self.scripts.run(specs.SENT.call(self.keys, me, entry_id))

    async def badge_of(self, entry: Entry) -> PrintedBadge | None:
        """What pretix is told: the ticket's secret from the job (its attendee id; a hand-over's entry names it
        itself), its position from the sync's register. None when either is gone (the list purged)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(enc(self.keys.venue_keys.job(entry.job_id)), "payload")
            pipe.hget(enc(self.keys.jobs), enc(entry.job_id))
            payload, position = await pipe.execute()
        if position is None or (payload is None and not entry.code):
            return None
        code = entry.code or json.loads(payload).get("attendee_id")
        if not code:
            return None
        return PrintedBadge(
            job_id=entry.job_id,
            print_id=f"{entry.job_id}#{entry.epoch}",
            code=str(code),
            position_id=int(position),
            first=entry.first,
            printed_at=entry.printed_at,
            printer=entry.printer,
            location=entry.location,
        )


@dataclass
class Round:
    """One look at the outbox: what was sent, and why it stopped."""

    sent: int = 0
    refused: int = 0
    dropped: int = 0
    #: the lease is another process's
    holder: str = ""
    #: pretix could not be reached: what it said
    unavailable: str = ""
    seconds: float = 0.0
    results: list[str] = field(default_factory=list)


class Sender:
    """Sends the outbox to one pretix check-in list while it holds the lease."""

    def __init__(
        self,
        outbox: Outbox,
        client: PretixClient,
        list_id: int,
        me: str | None = None,
        report: Report | None = None,
        lease_ms: int = LEASE_MS,
        send_timeout: float = SEND_TIMEOUT,
        concurrency: int = CONCURRENCY,
    ) -> None:
        self.outbox = outbox
        self.concurrency = concurrency
        self.client = client
        self.list_id = list_id
        self.me = me or sender_name()
        self.lease_ms = lease_ms
        self.send_timeout = send_timeout
        self._report = report or (lambda text: None)

    async def send_waiting(self) -> Round:
        """Send what waits, oldest first, until none is left, pretix cannot be reached, or the lease is lost."""
        started = time.monotonic()
        done = Round()
        while True:
            lease = await self.outbox.lease(self.me, self.lease_ms)
            if not lease.held:
                done.holder = lease.holder
                break
            await self.outbox.pump()
            entries = await self.outbox.entries()
            if not entries:
                break
            if not await self._send(entries, done):
                break
        done.seconds = time.monotonic() - started
        return done

    async def _send(self, entries: list[Entry], done: Round) -> bool:
        """Send ``entries`` a wave of ``concurrency`` at a time (pretix answers them side by side: a backlog drains
        in a fraction of the time one at a time takes), renewing the lease before each wave; each wave is done
        within ``send_timeout``, well inside the lease. False once pretix is away or the lease is lost."""
        for wave in waves(entries, self.concurrency):
            if not (await self.outbox.lease(self.me, self.lease_ms)).held:
                return False
            try:
                async with asyncio.TaskGroup() as group:
                    tasks = [group.create_task(self._send_one(entry)) for entry in wave]
            except* PretixConfigError as errors:
                # The token or the list is wrong: the entries wait for a sync that can send them.
                raise errors.exceptions[0] from None
            results = [task.result() for task in tasks]
            if any(outcome == "unavailable" for outcome, _ in results) and any(
                outcome != "unavailable" for outcome, _ in results
            ):
                # pretix answered some and failed others (a pretix on SQLite refuses concurrent writes with a
                # 500): those are tried again one at a time now, before pretix is taken to be away.
                for i, (entry, (outcome, _)) in enumerate(zip(wave, results, strict=True)):
                    if outcome == "unavailable":
                        results[i] = await self._send_one(entry)
            away = ""
            for entry, (outcome, detail) in zip(wave, results, strict=True):
                if outcome == "unavailable":
                    away = away or detail
                    continue  # stays in the outbox: sent again when pretix answers
                if outcome in ("gone", "refused"):
                    self._report(f"{entry.job_id}: {detail}")
                    done.dropped += await self._drop(entry)
                    continue
                if outcome == "checkin refused":
                    done.refused += 1
                    self._report(f"{entry.job_id}: printed, but pretix refused the check-in ({detail})")
                if not await self.outbox.sent(self.me, entry.id):
                    return False  # the lease ran out meanwhile: the holder sends it again (safe to repeat)
                done.sent += 1
            if away:
                done.unavailable = away
                return False
        return True

    async def _send_one(self, entry: Entry) -> tuple[str, str]:
        """One entry told to pretix: ("sent" | "checkin refused" | "gone" | "refused" | "unavailable", detail)."""
        badge = await self.outbox.badge_of(entry)
        if badge is None:
            return "gone", "its job or pretix position is gone (list purged?): not sent"
        try:
            async with asyncio.timeout(self.send_timeout):
                result = await send_print(self.client, self.list_id, badge)
        except (PretixUnavailable, TimeoutError) as exc:
            return "unavailable", str(exc) or f"no answer within {self.send_timeout:g} s"
        except PretixRefused as exc:
            return "refused", f"pretix refused it ({exc}): not sent again"
        if result.checkin == "refused":
            return "checkin refused", result.reason
        return "sent", ""

    async def _drop(self, entry: Entry) -> int:
        return 1 if await self.outbox.sent(self.me, entry.id) else 0

    async def run(self, stop: asyncio.Event, poll: float = 0.5) -> None:
        """Send until ``stop``: look every ``poll`` seconds, and while pretix is away every few seconds more."""
        away_since: float | None = None
        while not stop.is_set():
            done = await self.send_waiting()
            if done.sent or done.refused or done.dropped:
                self._report(
                    f"pretix: sent {done.sent} confirmed print(s)"
                    + (f", {done.refused} check-in(s) refused" if done.refused else "")
                    + (f", {done.dropped} dropped" if done.dropped else "")
                    + f" ({done.seconds:.1f} s)"
                )
            pause = poll
            if done.unavailable:
                if away_since is None:
                    away_since = time.monotonic()
                    left = await self.outbox.waiting()
                    self._report(f"pretix unreachable, {left} print(s) wait to be sent: {done.unavailable}")
                pause = max(poll, 2.0)
            elif away_since is not None and not done.holder:
                self._report(f"pretix answers again after {time.monotonic() - away_since:.0f} s")
                away_since = None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=pause)


async def outbox_status(redis: Redis, venue: str) -> dict[str, Any] | None:
    """How many confirmed prints wait to be told to pretix, and the sync process sending them (None: none is); the
    walk-ins waiting for their pretix order and those pretix refused (None: none); None without a pretix sync."""
    k = PretixKeys(venue)
    if not await redis.exists(enc(k.jobs)):
        return None
    sender = await redis.get(enc(k.sender))
    waiting = await Outbox(redis, venue).waiting()
    return {
        "waiting": waiting,
        "sender": dec(sender) if sender is not None else None,
        "walk_ins": await walk_in_status(redis, venue),
    }
