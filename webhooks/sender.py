"""The one sender of a venue's webhooks: a consumer of the printed record with a queue of deliveries per webhook.

Queuing: the sender reads the printed record's entries after its cursor (protocol/printed.py; the webhooks joined
the record when the first one was added, so no print confirmed since is missed, whatever the sender's downtime),
and the events stream's ``dead`` entries after its own cursor (``P webhooks:events``: a dead letter is ``failed``),
and queues one delivery for each webhook that wants it (``Webhook.wants``: its events and ``--when`` filters, read
from the delivery's ``arrival``, ``reprint`` and ``kind`` and from the job's payload): the delivery's data (with
its ``id``, ``delivery_id``) in ``P webhooks:pending:<name>`` and its place (the time of the stream entry it came
from) in ``P webhooks:q:<name>``, both written only if absent, then the cursor moves past what was read.
A sender that dies between the two queues the same entries again with the same ids: nothing is added twice.

Sending: each webhook's deliveries in their order, one at a time (a receiver sees them in order); a 2xx removes
the delivery, anything else (an error status, no answer, a redirect) keeps it for a later try, sooner first and
then every ``max_delay`` (exponential backoff with jitter), for ``retry_for`` (24 h: at least a whole event day);
past that it is given up: listed in ``P webhooks:gaveup:<name>`` (the last ``GAVEUP_KEPT``) and logged. A webhook
whose try failed waits for its next try before any of its other deliveries (the try time is kept with the delivery,
so a restarted sender waits too). A sender killed mid-try leaves the
delivery queued: it is sent again, with the same id (at least once, never under two ids).

One sender at a time: the lease ``P webhooks:sender`` (a string with an expiry), taken with ``SET NX`` and renewed
with ``SET XX GET`` (no script: the webhooks need no function of their own), before every try; a second sender
sends nothing, and never extends the holder's lease, so it takes over once the holder stops renewing (it died).
Every time comes from Redis ``TIME`` (a Pi may have no clock).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from redis.asyncio import Redis
from redis.exceptions import RedisError

from core.errors import UserError
from core.logs import masked
from protocol.codec import dec, enc
from protocol.printed import PrintedEntry, PrintedRecord
from webhooks.alerts import Alerts, alert_data
from webhooks.delivery import TIMEOUT, Outcome, body_of, delivery_id, iso_ms, post, read_secret, session
from webhooks.hooks import Hooks, Webhook
from webhooks.keys import CONSUMER, WebhookKeys

Report = Callable[[str], None]

#: How long the sender's lease lasts without renewal (a dead sender is replaced after this).
LEASE_MS = 60_000
#: Deliveries are tried again for this long after their first try, then given up (at least the 6 h of a day's doors).
RETRY_FOR_MS = 24 * 3600 * 1000
#: The first retry's wait, and the longest wait between two tries.
FIRST_DELAY = 1.0
MAX_DELAY = 300.0
#: Entries read from the printed record or the events stream per look.
BATCH = 200
#: Given-up deliveries kept per webhook for an admin to look at.
GAVEUP_KEPT = 1000


def sender_name() -> str:
    """This process, as the lease names its holder."""
    return f"{socket.gethostname()}:{os.getpid()}"


def order_of(entry_id: str) -> float:
    """Where a delivery from a stream entry stands in its webhook's queue: the entry's time (ms), then its sequence
    within that ms (a fraction: distinct at today's ms values while the sequence stays under a thousand)."""
    ms, _, seq = entry_id.partition("-")
    return int(ms) + min(int(seq or 0), 999) / 1000


@dataclass
class Pending:
    id: str
    data: dict[str, Any]
    attempts: int
    first_ms: int
    #: server ms before which it is not tried (and, at the head of its queue, neither is any after it)
    next_ms: int
    last_error: str = ""

    def to_json(self) -> str:
        return json.dumps(
            {"data": self.data, "attempts": self.attempts, "first_ms": self.first_ms, "next_ms": self.next_ms}
            | {"last_error": self.last_error}
        )

    @classmethod
    def from_json(cls, delivery: str, raw: bytes | str) -> Pending:
        v = json.loads(raw)
        return cls(
            delivery, dict(v["data"]), int(v["attempts"]), int(v["first_ms"]), int(v["next_ms"]), v["last_error"]
        )


@dataclass
class Round:
    """One look: what was queued and delivered, and why it stopped."""

    queued: int = 0
    delivered: int = 0
    failed: int = 0
    gave_up: int = 0
    #: the lease is another process's
    holder: str = ""
    lines: list[str] = field(default_factory=list)


async def server_ms(redis: Redis) -> int:
    seconds, micros = await redis.time()
    return int(seconds) * 1000 + int(micros) // 1000


def event_of(kind: str) -> str | None:
    """The webhook event of a printed-record entry of this kind; None for a kind no webhook is told of."""
    if kind in ("badge", "reprint"):
        return "printed"
    if kind == "handed_over":
        return "handed_over"
    return None


def _payload(raw: bytes | None) -> dict[str, Any]:
    if raw is None:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class Sender:
    """Sends one venue's webhooks while it holds the lease."""

    def __init__(
        self,
        redis: Redis,
        venue: str,
        me: str | None = None,
        report: Report | None = None,
        lease_ms: int = LEASE_MS,
        timeout: float = TIMEOUT,
        first_delay: float = FIRST_DELAY,
        max_delay: float = MAX_DELAY,
        retry_for_ms: int = RETRY_FOR_MS,
        alerts: Alerts | None = None,
    ) -> None:
        self.redis = redis
        self.venue = venue
        self.keys = WebhookKeys(venue)
        self.hooks = Hooks(redis, venue)
        self.record = PrintedRecord(redis, venue)
        self.me = me or sender_name()
        self.lease_ms = lease_ms
        self.timeout = timeout
        self.first_delay = first_delay
        self.max_delay = max_delay
        self.retry_for_ms = retry_for_ms
        self._report = report or (lambda text: None)
        #: webhook name -> the failure last reported (a line when it starts and when it clears, not per try)
        self._failing: dict[str, str] = {}
        self.alerts = alerts
        #: server ms of the last evaluation of the alert rules
        self._alerts_ms = 0

    # --- the lease ---------------------------------------------------------------------------------------------

    async def lease(self) -> tuple[bool, str]:
        """Take or keep the lease: (True, me) when this sender holds it now, else (False, the holder or "")."""
        key, me = enc(self.keys.sender), enc(self.me)
        if await self.redis.set(key, me, nx=True, px=self.lease_ms):
            return True, self.me
        holder = await self.redis.get(key)
        if holder != me:
            return False, dec(holder)  # another's (never extended here: a dead holder's runs out), or just gone
        # Ours: renewed only if it still is (XX, and GET tells who held it when it was set).
        before = await self.redis.set(key, me, xx=True, px=self.lease_ms, get=True)
        if before == me:
            return True, self.me
        if before is not None:
            # Ours ran out between the two commands and another sender took it just now (it is alive): theirs again.
            await self.redis.set(key, before, px=self.lease_ms)
        return False, dec(before)

    async def release(self) -> None:
        """Give the lease up at a clean stop, so a successor starts at once (only when it is still ours)."""
        key = enc(self.keys.sender)
        if await self.redis.get(key) == enc(self.me):
            await self.redis.delete(key)

    # --- queuing -----------------------------------------------------------------------------------------------

    def _queue_in(self, pipe: Any, hook: Webhook, source: str, order: float, data: dict[str, Any], now: int) -> None:
        """Add to ``pipe`` the delivery of ``data`` from ``source`` to ``hook``, each part only if absent."""
        delivery = delivery_id(self.venue, hook.name, source)
        pending = Pending(delivery, {"id": delivery, **data}, 0, now, now)
        pipe.hsetnx(enc(self.keys.pending(hook.name)), enc(delivery), enc(pending.to_json()))
        pipe.zadd(enc(self.keys.queue(hook.name)), {enc(delivery): order}, nx=True)

    async def _queue(self, hook: Webhook, source: str, order: float, data: dict[str, Any], now: int) -> int:
        async with self.redis.pipeline(transaction=False) as pipe:
            self._queue_in(pipe, hook, source, order, data, now)
            added, _ = await pipe.execute()
        return int(added)

    async def _jobs(self, job_ids: list[str]) -> list[dict[str, Any]]:
        if not job_ids:
            return []
        k = self.keys.venue_keys
        async with self.redis.pipeline(transaction=False) as pipe:
            for job_id in job_ids:
                pipe.hget(enc(k.job(job_id)), "payload")
            return [_payload(raw) for raw in await pipe.execute()]

    def _printed_data(self, event: str, entry: PrintedEntry, job: dict[str, Any]) -> dict[str, Any]:
        return {
            "event": event,
            "time": iso_ms(entry.printed_ms),
            "venue": self.venue,
            "kind": entry.kind,
            "reprint": entry.kind == "reprint",
            # An attendee arrived: their first badge printed, or a pre-printed one handed over (never a reprint).
            "arrival": entry.kind in ("badge", "handed_over"),
            "job_id": entry.job_id,
            "epoch": entry.epoch,
            "printer": entry.printer,
            "location": entry.location,
            "layout": entry.layout,
            "layout_version": entry.layout_version,
            "job": job,
        }

    async def queue_printed(self, hooks: list[Webhook], now: int) -> int:
        """Queue the printed record's new entries for the webhooks that want them: kinds ``badge`` and ``reprint``
        as ``printed``, ``handed_over`` (the desk gave a pre-printed badge out) as ``handed_over``; every other kind
        (``preprint``, ``separator``: no attendee has their badge yet) is taken and told to nobody."""
        queued = 0
        while True:
            entries = await self.record.after(CONSUMER, BATCH)
            if not entries:
                return queued
            jobs = await self._jobs([e.job_id for e in entries])
            for entry, job in zip(entries, jobs, strict=True):
                event = event_of(entry.kind)
                if event is None:
                    continue
                data = self._printed_data(event, entry, job)
                for hook in hooks:
                    if hook.wants(event, job, data):
                        queued += await self._queue(hook, f"printed:{entry.id}", order_of(entry.id), data, now)
            await self.record.took(CONSUMER, entries[-1].id)
            if len(entries) < BATCH:
                return queued

    async def queue_failed(self, hooks: list[Webhook], now: int) -> int:
        """Queue the events stream's dead letters after the webhooks' cursor for the webhooks that want them."""
        cursor_key = enc(self.keys.events_cursor)
        queued = 0
        while True:
            stored = await self.redis.get(cursor_key)
            if stored is None:
                return queued  # no webhook was ever added: nothing to tell
            cursor = enc(dec(stored))
            raw: list[tuple[bytes, dict[bytes, bytes]]] = await self.redis.xrange(  # type: ignore[assignment]
                enc(self.keys.venue_keys.events), min=b"(" + cursor, count=BATCH
            )
            if not raw:
                return queued
            dead = [(dec(i), {dec(k): dec(v) for k, v in f.items()}) for i, f in raw if f.get(b"event") == b"dead"]
            jobs = await self._jobs([fields.get("job_id", "") for _, fields in dead])
            for (entry_id, fields), job in zip(dead, jobs, strict=True):
                data = {
                    "event": "failed",
                    "time": iso_ms(int(entry_id.split("-")[0])),
                    "venue": self.venue,
                    "job_id": fields.get("job_id", ""),
                    "printer": fields.get("printer", ""),
                    "reason": fields.get("reason", ""),
                    "job": job,
                }
                for hook in hooks:
                    if hook.wants("failed", job):
                        queued += await self._queue(hook, f"failed:{entry_id}", order_of(entry_id), data, now)
            await self.redis.set(cursor_key, raw[-1][0])
            if len(raw) < BATCH:
                return queued

    async def queue_alerts(self, hooks: list[Webhook], now: int) -> int:
        """Evaluate the alert rules (every ``interval`` seconds) and queue each start and clear due for the
        webhooks that want ``alert``, in one pipeline with the episode's new state after them (Redis runs a
        pipeline's commands in order, whatever becomes of this process once it is sent): sent once, whoever sends;
        should the connection break in between, the deliveries are queued again under the same ids."""
        if self.alerts is None or not self.alerts.config.enabled:
            return 0
        if not any("alert" in hook.events for hook in hooks):
            return 0
        if now - self._alerts_ms < self.alerts.config.interval * 1000:
            return 0
        self._alerts_ms = now
        queued = 0
        for episode, what in await self.alerts.evaluate():
            data = alert_data(self.venue, episode, what, iso_ms(now), iso_ms(episode.since))
            source = f"alert:{episode.rule}:{episode.subject}:{episode.since}:{what}"
            async with self.redis.pipeline(transaction=False) as pipe:
                wanting = [hook for hook in hooks if hook.wants("alert", data)]
                for hook in wanting:
                    self._queue_in(pipe, hook, source, float(now), data, now)
                self.alerts.store(pipe, episode, what, now)
                replies = await pipe.execute()
            queued += sum(int(r) for r in replies[0 : 2 * len(wanting) : 2])
            self._report(f"alert {'started' if what == 'start' else 'cleared'}: {episode.summary}")
        return queued

    # --- sending -----------------------------------------------------------------------------------------------

    def _delay_ms(self, attempts: int) -> int:
        delay = min(self.first_delay * 2 ** max(attempts - 1, 0), self.max_delay)
        return int(delay * random.uniform(0.8, 1.0) * 1000)  # jitter: many deliveries do not come back at once

    async def _secret(self, hook: Webhook) -> bytes | Outcome | None:
        if not hook.secret_file:
            return None
        try:
            return read_secret(hook.secret_file)
        except UserError as exc:
            return Outcome(False, 0, f"{exc}: not sent")

    async def send_hook(self, http: aiohttp.ClientSession, hook: Webhook, done: Round) -> None:
        """Try this webhook's deliveries in their order until one fails, the first waits for a later try, or the
        lease is lost: a receiver sees them in the order they happened."""
        k = self.keys
        queue, pending_key = enc(k.queue(hook.name)), enc(k.pending(hook.name))
        ids: list[bytes] = await self.redis.zrange(queue, 0, BATCH - 1)  # type: ignore[assignment]
        for raw_id in ids:
            raw = await self.redis.hget(pending_key, raw_id)
            if raw is None:
                await self.redis.zrem(queue, raw_id)  # removed with its webhook meanwhile
                continue
            pending = Pending.from_json(dec(raw_id), raw)
            if pending.next_ms > await server_ms(self.redis):
                return
            held, holder = await self.lease()
            if not held:
                done.holder = holder
                return
            secret = await self._secret(hook)
            if isinstance(secret, Outcome):
                outcome = secret
            else:
                outcome = await post(http, hook, pending.id, body_of(hook, pending.data), secret, self.timeout)
            if not outcome.ok:
                await self._failed(hook, pending, outcome, await server_ms(self.redis), done)
                return
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zrem(queue, raw_id)
                pipe.hdel(pending_key, raw_id)
                await pipe.execute()
            done.delivered += 1
            if self._failing.pop(hook.name, None) is not None:
                self._report(f"webhook {hook.name}: delivered again ({pending.id})")

    async def _failed(self, hook: Webhook, pending: Pending, outcome: Outcome, now: int, done: Round) -> None:
        k = self.keys
        pending.attempts += 1
        pending.last_error = outcome.line()
        done.failed += 1
        what = f"{pending.data.get('event')} {pending.data.get('job_id', '')}".strip()
        if now - pending.first_ms >= self.retry_for_ms:
            gone = json.dumps(
                {"id": pending.id, "data": pending.data, "attempts": pending.attempts, "first_ms": pending.first_ms}
                | {"gave_up_ms": now, "last_error": pending.last_error}
            )
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.lpush(enc(k.gaveup(hook.name)), enc(gone))
                pipe.ltrim(enc(k.gaveup(hook.name)), 0, GAVEUP_KEPT - 1)
                pipe.zrem(enc(k.queue(hook.name)), enc(pending.id))
                pipe.hdel(enc(k.pending(hook.name)), enc(pending.id))
                await pipe.execute()
            done.gave_up += 1
            hours = (now - pending.first_ms) / 3_600_000
            self._report(
                f"webhook {hook.name}: gave up on {pending.id} ({what}) after {pending.attempts} tries over "
                f"{hours:.1f} h; last: {pending.last_error}"
            )
            return
        next_ms = pending.next_ms = now + self._delay_ms(pending.attempts)
        await self.redis.hset(enc(k.pending(hook.name)), enc(pending.id), enc(pending.to_json()))
        line = outcome.line()
        if self._failing.get(hook.name) != line:
            self._failing[hook.name] = line
            waiting = await self.redis.zcard(enc(k.queue(hook.name)))
            self._report(
                masked(
                    f"webhook {hook.name} ({hook.url}): {line}; {waiting} delivery(ies) wait, next try in "
                    f"{(next_ms - now) / 1000:.1f} s (try {pending.attempts} of {pending.id}, {what})"
                )
            )

    async def send_waiting(self, http: aiohttp.ClientSession) -> Round:
        """One round: take the lease, queue what is new, try what waits."""
        done = Round()
        held, holder = await self.lease()
        if not held:
            done.holder = holder
            return done
        hooks = await self.hooks.all()
        now = await server_ms(self.redis)
        done.queued += await self.queue_printed(hooks, now)
        done.queued += await self.queue_failed(hooks, now)
        done.queued += await self.queue_alerts(hooks, now)
        await asyncio.gather(*(self.send_hook(http, hook, done) for hook in hooks))
        return done

    async def run(self, stop: asyncio.Event, poll: float = 0.25) -> None:
        """Send until ``stop``; Redis away is waited for (a line when it goes and when it is back)."""
        await self.record.join(CONSUMER)
        await self.redis.set(enc(self.keys.events_cursor), enc(await self.hooks.events_end()), nx=True)
        holder_seen = ""
        redis_away: float | None = None
        async with session() as http:
            try:
                while not stop.is_set():
                    pause = poll
                    try:
                        done = await self.send_waiting(http)
                    except RedisError as exc:
                        if redis_away is None:
                            redis_away = time.monotonic()
                            self._report(f"webhooks: Redis unreachable, waiting: {masked(str(exc))}")
                        pause = max(poll, 1.0)
                    else:
                        if redis_away is not None:
                            self._report(f"webhooks: Redis answers again after {time.monotonic() - redis_away:.0f} s")
                            redis_away = None
                        if done.holder != holder_seen:
                            holder_seen = done.holder
                            if done.holder:
                                self._report(f"webhooks: {done.holder} sends them; this sender waits for its lease")
                            else:
                                self._report(f"webhooks: {self.me} sends them")
                        if done.holder:
                            pause = max(poll, 1.0)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), timeout=pause)
            finally:
                with contextlib.suppress(RedisError, OSError):
                    await self.release()


async def webhooks_status(redis: Redis, venue: str) -> dict[str, Any] | None:
    """The deliveries waiting per webhook (and prints not queued yet), the sender sending them (None: none is),
    deliveries given up; None without any webhook."""
    k = WebhookKeys(venue)
    hooks = await Hooks(redis, venue).all()
    if not hooks:
        return None
    async with redis.pipeline(transaction=False) as pipe:
        for hook in hooks:
            pipe.zcard(enc(k.queue(hook.name)))
            pipe.llen(enc(k.gaveup(hook.name)))
        pipe.get(enc(k.sender))
        replies = await pipe.execute()
    sender = replies[-1]
    per_hook = {hook.name: int(replies[2 * i]) for i, hook in enumerate(hooks)}
    gave_up = sum(int(replies[2 * i + 1]) for i in range(len(hooks)))
    unread = len(await PrintedRecord(redis, venue).after(CONSUMER, 1000))
    return {
        "waiting": sum(per_hook.values()) + unread,
        "hooks": per_hook,
        "unread": unread,
        "gave_up": gave_up,
        "sender": dec(sender) if sender is not None else None,
    }
