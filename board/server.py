"""The fleet board: one live page for the venue (printers, pool, DLQ, events, badges that may exist twice).

One poller reads Redis for every viewer (a venue may have a dozen phones on it) and pushes a snapshot to each page
over Server-Sent Events when something changed: no page refresh, and EventSource reconnects by itself after a
Wi-Fi drop. The page builds its DOM with ``textContent`` only: names, reasons and job ids are attendee-controlled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from importlib import resources
from typing import Any

from aiohttp import web
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from board.venue_view import venue_view
from board.wire import merge_patch, wire
from core.logs import kv, safe_json, shown
from core.page_headers import add_page_headers
from eventday.counts import event_day
from protocol.codec import dec, enc
from protocol.connection import stop_if_cancelled
from protocol.fleet import events_after, tail_events
from protocol.keys import Keys
from protocol.vocabulary import BOARD_WORDS, DUPLICATE_WORDS, StaffCounts

log = logging.getLogger("board")

#: Events staff must act on: find the badge that may exist twice and pull it (their ``reason`` says where).
DUPLICATE_EVENTS = tuple(DUPLICATE_WORDS)
ASSETS = {"/": "index.html", "/board.js": "board.js", "/board.css": "board.css"}
CONTENT_TYPES = {"html": "text/html", "js": "text/javascript", "css": "text/css"}
#: An SSE comment this often keeps proxies and phones from dropping an idle stream.
KEEPALIVE = 15.0
#: Open streams at once: a venue has a dozen screens; beyond this a page gets 503 (and EventSource retries).
MAX_VIEWERS = 100
#: One send that takes longer than this means the viewer stopped reading (or reads too slowly): it is dropped, so
#: its unread snapshots do not pile up in the board's memory. Its page reconnects when it reads again.
SEND_TIMEOUT = 10.0
#: What one string (a job id, a name, a reason) may carry into a snapshot: Redis holds whatever a tool wrote.
MAX_FIELD_CHARS = 200
#: A Redis error that lasts is logged again this often, not once per poll.
LOG_EVERY = 30.0
#: ``/updates`` sends a viewer at most one patch this often: a busy venue's changes are merged into one (board/wire.py).
PUSH_EVERY = 2.0
#: The event day's numbers (eventday/) are read again this often, not every poll: they move by the minute.
DAY_EVERY = 2.0
#: The window a printer's busy share is averaged over (its share of polls with a badge in flight), in seconds.
BUSY_WINDOW = 600.0
POLLER = web.AppKey("poller", asyncio.Task[None])


class Board:
    """Polls one venue and keeps the latest snapshot; viewers wait on ``version`` to change."""

    def __init__(
        self, redis: Redis, venue: str, interval: float = 0.5, recent: int = 40, duplicates: int = 200
    ) -> None:
        self.redis = redis
        self.venue = venue
        self.interval = interval
        self.recent: deque[dict[str, str]] = deque(maxlen=recent)
        self.duplicates: deque[dict[str, str]] = deque(maxlen=duplicates)
        self.last_event = ""  # stream id of the newest event seen; "" until the first successful read
        self.snapshot: dict[str, Any] = {"venue": venue, "printers": [], "error": "connecting to Redis"}
        self.version = 0
        self.payload = safe_json(self.snapshot, separators=(",", ":")).encode()  # the snapshot, encoded once
        self.viewers = 0
        self.wire: dict[str, Any] = wire(self.snapshot)  # the page's form of the snapshot (board/wire.py)
        self.patches: dict[int, bytes] = {}  # version seen -> the patch to the current one, made once for all viewers
        self.day: dict[str, Any] | None = None
        self.day_read = 0.0  # monotonic time of the last read of the event day
        self.busy: dict[str, float] = {}  # printer -> share of recent polls with a badge in flight
        self.clock = (0, 0.0)  # (Redis server ms, monotonic time) at the last poll: the pages' clock for ages
        self.changed = asyncio.Condition()
        self.closing = asyncio.Event()  # set at server shutdown: open streams end

    async def run(self) -> None:
        """Poll until cancelled; a Redis outage shows on the page and is retried every interval."""
        logged: tuple[str, float] = ("", 0.0)  # the last error logged and when: once per LOG_EVERY, not per poll
        while True:
            try:
                snapshot = bounded(await self.poll())
            except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
                stop_if_cancelled()
                snapshot = {**self.snapshot, "error": shown(f"Redis unreachable: {exc}")}
            except RedisError as exc:
                stop_if_cancelled()
                # Reachable but refusing (a key of the wrong type, NOPERM): a venue fault to fix, not an outage.
                snapshot = {**self.snapshot, "error": shown(f"venue fault in Redis: {exc}")}
            error, now = snapshot.get("error") or "", time.monotonic()
            if error and (error != logged[0] or now - logged[1] >= LOG_EVERY):
                log.warning("board cannot read Redis", extra=kv(error=error))
                logged = (error, now)
            await self.publish(snapshot)
            stop_if_cancelled()  # redis-py may have retried a read the cancel cut short: the cancel is not lost
            await asyncio.sleep(self.interval)

    async def publish(self, snapshot: dict[str, Any]) -> None:
        comparable = {k: v for k, v in snapshot.items() if k != "server_ms"}
        if comparable == {k: v for k, v in self.snapshot.items() if k != "server_ms"}:
            return
        async with self.changed:
            self.snapshot = snapshot
            self.payload = safe_json(snapshot, separators=(",", ":")).encode()
            self.wire = wire(snapshot)
            self.patches = {}
            self.version += 1
            self.changed.notify_all()

    async def next_version(self, seen: int, timeout: float) -> int:
        """Wait until the snapshot is newer than ``seen``, the board closes, or ``timeout``; the current version."""
        async with self.changed:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):  # not wait_for: it can swallow a cancel on Python 3.11
                    await self.changed.wait_for(lambda: self.version != seen or self.closing.is_set())
        return self.version

    async def poll(self) -> dict[str, Any]:
        if not self.last_event:
            await self._load_history()
        for event in await events_after(self.redis, self.venue, self.last_event, 1000, block_ms=None):
            self._add_event(event)
        view = await venue_view(self.redis, self.venue)
        now = time.monotonic()
        self.clock = (view.server_ms, now)
        if self.day is None or now - self.day_read >= DAY_EVERY:
            self.day, self.day_read = (await event_day(self.redis, self.venue, view)).as_dict(), now
        weight = min(1.0, self.interval / BUSY_WINDOW)
        for p in view.printers:
            self.busy[p.name] = self.busy.get(p.name, 0.0) * (1 - weight) + (weight if p.inflight else 0.0)
        data = view.as_dict()
        for printer in data["printers"]:
            # In steps of 5%: a share that wobbles by one point would be sent again and again for nothing.
            printer["busy"] = 5 * round(20 * self.busy.get(printer["name"], 0.0))
        data["day"] = self.day
        counts = data["counts"]
        data["duplicates_count"] = StaffCounts.from_stats(counts).to_find
        data["words"] = BOARD_WORDS
        data["events"] = list(reversed(self.recent))  # newest first
        data["duplicates"] = list(reversed(self.duplicates))
        data["error"] = None
        return data

    async def _load_history(self) -> None:
        """Recent events, and every possible duplicate still in the (capped) stream, once at start."""
        k = Keys(self.venue)
        start = "-"
        while True:
            page: Any = await self.redis.xrange(enc(k.events), min=start, count=1000)
            for entry_id, fields in page:
                if dec(fields.get(b"event")) in DUPLICATE_EVENTS:
                    event = {"id": dec(entry_id), **{dec(a): dec(b) for a, b in fields.items()}}
                    self.duplicates.append(bounded(event))
            if len(page) < 1000:
                break
            start = "(" + dec(page[-1][0])
        for event in await tail_events(self.redis, self.venue, self.recent.maxlen or 40):
            self.recent.append(bounded(event))
        self.last_event = self.recent[-1]["id"] if self.recent else "0-0"

    def _add_event(self, raw: dict[str, str]) -> None:
        event: dict[str, str] = bounded(raw)
        self.recent.append(event)
        if event.get("event") in DUPLICATE_EVENTS:
            self.duplicates.append(event)
        self.last_event = event["id"]


def bounded(value: Any) -> Any:
    """``value`` with every string cut to ``MAX_FIELD_CHARS`` and made printable (escapes for control bytes and
    for the non-UTF-8 bytes Redis may hold), so no id, however long or strange, can stall or swell the feed."""
    if isinstance(value, str):
        return shown(value, MAX_FIELD_CHARS)
    if isinstance(value, dict):
        return {shown(str(k), MAX_FIELD_CHARS): bounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [bounded(v) for v in value]
    return value


def server_ms(board: Board) -> int:
    """Redis server time now, as the last poll read it plus what has passed since: a page measures ages against it
    (a phone's clock may be off by minutes)."""
    at_ms, at = board.clock
    return at_ms + int((time.monotonic() - at) * 1000) if at_ms else 0


def patch_since(board: Board, seen: int, sent: dict[str, Any]) -> bytes:
    """The message that brings a viewer from ``sent`` (the form it has, of version ``seen``) to the current one."""
    cached = board.patches.get(seen)
    if cached is None:
        if len(board.patches) > 64:  # viewers are at a few versions; a new snapshot's cache starts empty anyway
            board.patches.clear()
        patch = {"t": server_ms(board), "patch": merge_patch(sent, board.wire)}
        cached = board.patches[seen] = safe_json(patch, separators=(",", ":")).encode()
    return cached


def make_board_app(board: Board) -> web.Application:
    """The board's aiohttp app: the page, its assets, ``/events`` (SSE, each snapshot whole), ``/updates`` (SSE,
    the snapshot once and then merge patches: what the page reads) and ``/snapshot.json``."""

    async def asset(request: web.Request) -> web.Response:
        name = ASSETS[request.path]
        body = resources.files("board").joinpath(name).read_bytes()
        kind = CONTENT_TYPES[name.rsplit(".", 1)[1]]
        return web.Response(body=body, content_type=kind, charset="utf-8", headers={"Cache-Control": "no-cache"})

    async def snapshot(_request: web.Request) -> web.Response:
        return web.Response(body=board.payload, content_type="application/json")

    def viewer_stream() -> web.StreamResponse:
        """A new viewer's event stream (not yet counted in ``board.viewers``), or 503 past ``MAX_VIEWERS``."""
        if board.viewers >= MAX_VIEWERS:
            log.warning("board refused a viewer: too many open", extra=kv(viewers=board.viewers))
            raise web.HTTPServiceUnavailable(text="too many viewers", headers={"Retry-After": "10"})
        return web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        )

    async def events(request: web.Request) -> web.StreamResponse:
        resp = viewer_stream()
        board.viewers += 1
        try:
            await resp.prepare(request)
            seen = -1
            while not board.closing.is_set():
                if board.version != seen:
                    seen = board.version
                    await send(resp, b"data: " + board.payload + b"\n\n")
                    continue
                await board.next_version(seen, KEEPALIVE)
                if board.version == seen:
                    await send(resp, b": keepalive\n\n")
        except (ConnectionError, TimeoutError):
            pass  # the viewer went away (phone locked, tab closed) or stopped reading
        finally:
            board.viewers -= 1
        return resp

    async def updates(request: web.Request) -> web.StreamResponse:
        resp = viewer_stream()
        board.viewers += 1
        try:
            await resp.prepare(request)
            seen, sent = board.version, board.wire
            whole = {"t": server_ms(board), "full": sent}
            await send(resp, b"data: " + safe_json(whole, separators=(",", ":")).encode() + b"\n\n")
            while not board.closing.is_set():
                await board.next_version(seen, KEEPALIVE)
                if board.closing.is_set():
                    break
                if board.version == seen:
                    await send(resp, b": keepalive\n\n")
                    continue
                message = patch_since(board, seen, sent)
                seen, sent = board.version, board.wire
                await send(resp, b"data: " + message + b"\n\n")
                # Changes until the next push are merged into one patch: a busy venue costs each phone a patch a
                # PUSH_EVERY, however many polls changed something.
                await asyncio.sleep(PUSH_EVERY)
        except (ConnectionError, TimeoutError):
            pass
        finally:
            board.viewers -= 1
        return resp

    async def send(resp: web.StreamResponse, data: bytes) -> None:
        async with asyncio.timeout(SEND_TIMEOUT):  # write waits while the viewer's socket buffer is full
            await resp.write(data)

    async def start_poller(app: web.Application) -> None:
        app[POLLER] = asyncio.create_task(board.run(), name="board-poller")

    async def stop_streams(_app: web.Application) -> None:
        # Open SSE streams never end by themselves: wake them so the server can shut down.
        board.closing.set()
        async with board.changed:
            board.changed.notify_all()

    async def stop_poller(app: web.Application) -> None:
        app[POLLER].cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await app[POLLER]

    app = web.Application()
    add_page_headers(app)
    for path in ASSETS:
        app.router.add_get(path, asset)
    app.router.add_get("/events", events)
    app.router.add_get("/updates", updates)
    app.router.add_get("/snapshot.json", snapshot)
    app.on_startup.append(start_poller)
    app.on_shutdown.append(stop_streams)
    app.on_cleanup.append(stop_poller)
    return app


async def serve_board(redis: Redis, venue: str, host: str, port: int, interval: float = 0.5) -> None:
    """Serve the board until cancelled; prints the address it listens on (port 0 picks a free one)."""
    # shutdown_timeout: a stopping board (its streams end at shutdown) waits at most this for what still runs,
    # never the 60 s aiohttp waits by default.
    runner = web.AppRunner(make_board_app(Board(redis, venue, interval)), access_log=None, shutdown_timeout=2.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound = runner.addresses[0][1] if runner.addresses else port
        shown = f"[{host}]" if ":" in host else host
        # stdout, not the log: the CLI's one line for the operator (and for tests that start it on port 0).
        print(f"board for venue {venue} on http://{shown}:{bound}/", flush=True)  # noqa: T201
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
