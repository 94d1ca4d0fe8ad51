"""One reader of the venue's events stream for the whole intake process; every SSE stream and long-poll listens here.

A stream or a long-poll of its own would hold a Redis connection in a blocking ``XREAD`` (or poll the job hash) per
client: a hundred kiosk streams would empty the connection pool every other request needs. Instead one task reads the
stream (one connection, one ``XREAD`` at a time) and hands each event to the listeners of its job. It also keeps the
recent events of each job (``history``), so a new SSE stream is sent its job's past without scanning the venue's
stream: the index is filled from the stream once at start, then by the same reader.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from collections import OrderedDict, deque
from collections.abc import Iterator
from typing import Any, NamedTuple

from redis.asyncio import Redis
from redis.exceptions import RedisError

from protocol.codec import dec
from protocol.connection import stop_if_cancelled

log = logging.getLogger("badge_agent.intake")

#: How long one XREAD blocks; the reader also notices a closed hub this often.
BLOCK_MS = 5000
#: Entries read per round trip (the backfill at start and each XREAD).
PAGE = 1000


class Event(NamedTuple):
    """One event of a job, ready to send: the stream entry id, the event's name, and the entry as JSON."""

    entry_id: str
    name: str
    data: str


def _entry_id_key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


class Listener:
    """What one SSE stream or long-poll of one job is handed: the job's new events, and a wake-up per event."""

    def __init__(self, job_id: str, limit: int) -> None:
        self.job_id = job_id
        self.events: deque[Event] = deque()
        self.limit = limit
        #: More events arrived than ``limit`` unread: the client is not reading; its stream ends.
        self.overflowed = False
        self.wake = asyncio.Event()

    def put(self, event: Event) -> None:
        if len(self.events) >= self.limit:
            self.overflowed = True
        else:
            self.events.append(event)
        self.wake.set()

    async def wait(self, timeout: float) -> bool:
        """True when an event came within ``timeout`` seconds (the wake-up is then reset)."""
        try:
            async with asyncio.timeout(timeout):
                await self.wake.wait()
        except TimeoutError:
            return False
        self.wake.clear()
        return True


class Hub:
    """The venue's events, read once for every listener of this process."""

    def __init__(
        self, redis: Redis, stream: bytes, keep_events: int = 50_000, per_job: int = 32, listener_limit: int = 256
    ) -> None:
        """``keep_events``: the index's size (a few hundred bytes an event; the jobs seen least recently go first);
        ``per_job``: a job's newest events kept; ``listener_limit``: events a listener may leave unread."""
        self.redis = redis
        self.stream = stream
        self.keep_events, self.per_job, self.listener_limit = keep_events, per_job, listener_limit
        self._history: OrderedDict[str, list[Event]] = OrderedDict()
        self._kept = 0  # events in _history
        self._listeners: dict[str, set[Listener]] = {}
        self.last = "0-0"
        #: Set once the backfill has read the stream as it was at start.
        self.ready = asyncio.Event()
        #: XREAD calls made (for tests and /metrics: one reader, however many listeners).
        self.reads = 0
        #: Set when the intake stops: every long-poll answers what it has and every stream ends, at once.
        self.closing = False

    @property
    def listening(self) -> int:
        return sum(len(s) for s in self._listeners.values())

    def _add(self, entry_id: Any, fields: Any) -> None:
        data = {dec(k): dec(v) for k, v in fields.items()}
        self.last = eid = dec(entry_id)
        job_id = data.get("job_id")
        if not job_id:
            return
        # An event's name is one of a few words: one copy of each, not one an event.
        event = Event(eid, sys.intern(data.get("event", "")), json.dumps({"id": eid, **data}, ensure_ascii=False))
        past = self._history.get(job_id)
        if past is None:
            past = self._history[job_id] = []  # a list: a deque costs 600 bytes, more than a job's few events
        else:
            self._history.move_to_end(job_id)
        past.append(event)
        if len(past) > self.per_job:
            del past[0]
        else:
            self._kept += 1
        while self._kept > self.keep_events:
            _, oldest = self._history.popitem(last=False)
            self._kept -= len(oldest)
        for listener in self._listeners.get(job_id, ()):
            listener.put(event)

    def history(self, job_id: str, after: str = "") -> list[Event]:
        """The job's recent events, oldest first (only those after entry id ``after`` when given)."""
        past = list(self._history.get(job_id, ()))  # a copy: the reader appends to it
        if after:
            try:
                floor = _entry_id_key(after)
            except ValueError:
                return past
            past = [e for e in past if _entry_id_key(e.entry_id) > floor]
        return past

    def close(self) -> None:
        """Wake every listener for good: the intake is stopping (SIGTERM), and a long-poll left waiting would hold
        the stop up for as long as it asked to wait."""
        self.closing = True
        for listeners in self._listeners.values():
            for listener in listeners:
                listener.wake.set()

    @contextlib.contextmanager
    def listen(self, job_id: str) -> Iterator[Listener]:
        """A listener of ``job_id`` for the ``with`` block. Taken with no await between it and a ``history`` call,
        no event is missed or sent twice."""
        listener = Listener(job_id, self.listener_limit)
        self._listeners.setdefault(job_id, set()).add(listener)
        try:
            yield listener
        finally:
            mine = self._listeners.get(job_id)
            if mine is not None:
                mine.discard(listener)
                if not mine:
                    del self._listeners[job_id]

    async def _backfill(self) -> None:
        start = "-"
        while True:
            page: Any = await self.redis.xrange(self.stream, min=start, count=PAGE)
            for entry_id, fields in page:
                self._add(entry_id, fields)
            if len(page) < PAGE:
                return
            start = "(" + self.last

    async def run(self) -> None:
        """The reader: the stream as it is, then each new entry as it comes, until cancelled."""
        pause = 0.5
        while not self.ready.is_set():
            try:
                await self._backfill()
                stop_if_cancelled()
                self.ready.set()
            except RedisError as exc:
                stop_if_cancelled()
                log.error("cannot read the venue's events (retrying in %.1f s): %s", pause, exc)
                await asyncio.sleep(pause)
                pause = min(pause * 2, 5.0)
        pause = 0.5
        while True:
            try:
                self.reads += 1
                replies: Any = await self.redis.xread({self.stream: self.last}, count=PAGE, block=BLOCK_MS)
                pause = 0.5
            except RedisError as exc:
                stop_if_cancelled()
                log.error("cannot read the venue's events (retrying in %.1f s): %s", pause, exc)
                await asyncio.sleep(pause)
                pause = min(pause * 2, 5.0)
                continue
            stop_if_cancelled()  # redis-py may have retried a read the cancel cut short: the cancel is not lost
            for _, entries in replies or ():
                for entry_id, fields in entries:
                    self._add(entry_id, fields)
