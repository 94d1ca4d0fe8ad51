"""Alerts: what needs a person, told to the webhooks (event ``alert``) once when it starts and once when it clears.

The sender (webhooks/sender.py) evaluates the rules every ``interval`` seconds while it holds its lease, from the
venue's state in Redis: the fleet view (each printer's health and heartbeat, the DLQ's length), the Redis server's
``run_id`` (a failover or a restart puts another server behind the venue's address), and each zone's wait where a
function that computes it is given (``ZoneWaits``). A rule's condition must hold ``hold`` seconds before its alert
starts, and be gone ``clear_after`` seconds before it clears: a printer that flaps (down a few seconds, back, down
again) stays in one episode, so an episode is at most two deliveries.

Each episode's state is kept in Redis (``P alerts``, rule:subject -> JSON, under the sender's lease) and written in
the same pipeline as the deliveries it queues, after them: a restarted sender, or a second one taking the lease
over, sees what was sent and sends nothing twice, and the delivery ids (derived from the episode's start) are the
same whoever queues. (No MULTI: the webhooks' Redis user may write only its keys, and a key-less MULTI is no key's.)
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from msgspec import Meta
from redis.asyncio import Redis

from core.settings import Strict
from protocol.codec import dec, enc
from protocol.fleet import FleetView, fleet
from protocol.keys import Keys

#: A zone's wait: given the venue's Redis and name, each zone's current wait in seconds (the board computes it).
ZoneWaits = Callable[[Redis, str], Awaitable[dict[str, float]]]

#: Printer states (``health.state``, or none at all) that mean the printer does not print; the agent's own absence
#: among them.
DOWN_STATES = frozenset({"device_down", "gone", "dead", "unreadable"})
AGENT_GONE = frozenset({"gone", "dead", "unreadable"})
#: Device states that are a fault a person must clear (``media_out`` has its own rule).
FAULT_STATES = frozenset({"head_open", "ribbon_out", "jam", "overheat", "error", "paused"})
#: The DLQ's lengths kept for the growth rule: (server ms, length), oldest first, within ``dlq_window``.
DLQ_SAMPLES_KEPT = 1000


def _positive(value: float) -> float:
    if value <= 0:
        raise ValueError(f"must be more than 0 (got {value:g}): 0 would alert on every blip, with nothing held back")
    return value


def _at_least_one(value: int) -> int:
    if value < 1:
        raise ValueError(f"must be at least 1 (got {value}): 0 would alert while the DLQ does not grow at all")
    return value


Seconds = Annotated[float, Meta(extra={"check": _positive})]
Count = Annotated[int, Meta(extra={"check": _at_least_one})]


class AlertsConfig(Strict, kw_only=True):
    """The ``alerts:`` section of ``webhooks run``'s config file (docs/configuration.md lists the defaults)."""

    #: Alerts evaluated at all (false: the sender sends the other events only).
    enabled: bool = True
    #: Seconds a printer is down (declared down, its agent gone or dead) before the alert.
    printer_down: Seconds = 60.0
    #: Seconds a printer is out of labels before the alert.
    out_of_labels: Seconds = 30.0
    #: Seconds a printer has any other fault (head open, jam, ribbon out, paused, ...) before the alert.
    fault: Seconds = 120.0
    #: Minutes a zone's wait must exceed for the alert.
    zone_wait: Seconds = 15.0
    #: Dead letters added within ``dlq_window`` seconds for the alert.
    dlq_growth: Count = 5
    dlq_window: Seconds = 600.0
    #: Seconds the alert of a Redis failover (another server behind the venue's address) stays before it clears.
    redis_failover: Seconds = 300.0
    #: Seconds a condition must be gone before its alert clears (a flapping printer stays in one episode).
    clear_after: Seconds = 30.0
    #: Seconds between two evaluations.
    interval: Seconds = 5.0


@dataclass(frozen=True)
class Condition:
    """One rule holding for one subject now."""

    rule: str
    subject: str
    #: seconds it must hold before the alert starts
    hold: float
    summary: str
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.rule}:{self.subject}"


@dataclass
class Episode:
    rule: str
    subject: str
    #: server ms the condition was first seen (the episode's id)
    since: int
    #: server ms the start was queued; 0 before
    fired: int = 0
    #: server ms the condition was last seen gone, 0 while it holds
    gone: int = 0
    summary: str = ""
    detail: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True)

    @classmethod
    def from_json(cls, raw: bytes | str) -> Episode | None:
        try:
            v = json.loads(raw)
            return cls(
                str(v["rule"]),
                str(v["subject"]),
                int(v["since"]),
                int(v.get("fired") or 0),
                int(v.get("gone") or 0),
                str(v.get("summary") or ""),
                dict(v.get("detail") or {}),
            )
        except (ValueError, KeyError, TypeError):
            return None  # written by hand: forgotten, and the rule starts a fresh episode


def alerts_key(venue: str) -> str:
    return Keys(venue).prefix + "alerts"


def dlq_samples_key(venue: str) -> str:
    return Keys(venue).prefix + "alerts:dlq"


def redis_key(venue: str) -> str:
    return Keys(venue).prefix + "alerts:redis"


def printer_conditions(view: FleetView, config: AlertsConfig) -> list[Condition]:
    """The printer rules: down, out of labels, another fault (one per printer: what a person must do about it)."""
    found = []
    for p in view.printers:
        where = f" ({p.location})" if p.location else ""
        detail: dict[str, Any] = {"printer": p.name, "location": p.location, "state": p.state, "device": p.device}
        if p.reasons:
            detail["reasons"] = p.reasons
        if p.state in ("drained", "stopped"):
            continue  # taken out of service on purpose: nobody needs telling
        # An agent gone or dead says nothing current about its printer: down. Otherwise the device's own words come
        # first: a printer out of labels is soon declared down too (its probes fail), but what a person must do is
        # load labels.
        if p.state in AGENT_GONE:
            rule, hold, what = "printer_down", config.printer_down, "is down (its agent is not heard)"
        elif p.device == "media_out" or p.labels_remaining == 0:
            rule, hold, what = "out_of_labels", config.out_of_labels, "is out of labels"
        elif p.device in FAULT_STATES:
            rule, hold, what = "fault", config.fault, ": " + (", ".join(p.reasons) or p.device.replace("_", " "))
        elif p.state in DOWN_STATES:
            rule, hold, what = "printer_down", config.printer_down, "is down"
        else:
            continue
        summary = f"printer {p.name}{where}{'' if what.startswith(':') else ' '}{what}"
        found.append(Condition(rule, p.name, hold, summary, detail))
    return found


def zone_conditions(waits: dict[str, float], config: AlertsConfig) -> list[Condition]:
    limit = config.zone_wait * 60
    return [
        Condition(
            "zone_wait",
            zone,
            0.0,
            f"zone {zone}: the wait is {seconds / 60:.0f} min (over {config.zone_wait:g})",
            {"zone": zone, "wait_seconds": round(seconds, 1)},
        )
        for zone, seconds in sorted(waits.items())
        if seconds > limit
    ]


class Alerts:
    """The venue's alert rules, evaluated by the webhooks' sender."""

    def __init__(
        self, redis: Redis, venue: str, config: AlertsConfig | None = None, zone_waits: ZoneWaits | None = None
    ) -> None:
        self.redis = redis
        self.venue = venue
        self.config = config or AlertsConfig()
        self.zone_waits = zone_waits
        self.key = enc(alerts_key(venue))

    async def conditions(self, view: FleetView) -> list[Condition]:
        """Every rule's conditions holding now (the DLQ's and Redis's read and remembered as a side effect)."""
        found = printer_conditions(view, self.config)
        found += await self._dlq(view)
        found += await self._failover(view.server_ms)
        if self.zone_waits is not None:
            found += zone_conditions(await self.zone_waits(self.redis, self.venue), self.config)
        return found

    async def _dlq(self, view: FleetView) -> list[Condition]:
        """The DLQ grew by ``dlq_growth`` letters or more within ``dlq_window``: its length is sampled every round
        (``P alerts:dlq``, a zset of "ms:length" by ms), and the smallest length of the window is the base."""
        key = enc(dlq_samples_key(self.venue))
        now = view.server_ms
        window_ms = int(self.config.dlq_window * 1000)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(key, {enc(f"{now}:{view.dlq}"): now})
            pipe.zremrangebyscore(key, "-inf", now - window_ms - 1)
            pipe.zremrangebyrank(key, 0, -DLQ_SAMPLES_KEPT - 1)
            pipe.zrange(key, 0, -1)
            *_, samples = await pipe.execute()
        lengths = [int(dec(s).partition(":")[2] or 0) for s in samples]
        base = min(lengths, default=view.dlq)
        grown = view.dlq - base
        if grown < self.config.dlq_growth:
            return []
        minutes = self.config.dlq_window / 60
        return [
            Condition(
                "dlq_growing",
                "dlq",
                0.0,
                f"the DLQ grew by {grown} dead letter(s) within {minutes:g} min (now {view.dlq})",
                {"dlq": view.dlq, "grown": grown},
            )
        ]

    async def _failover(self, now: int) -> list[Condition]:
        """Another Redis server answers at the venue's address (its ``run_id`` changed: a failover, or a restart):
        the alert holds for ``redis_failover`` seconds after the change."""
        info = await self.redis.info("server")
        run_id = str(info.get("run_id", ""))
        replication = await self.redis.info("replication")
        role = str(replication.get("role", ""))
        key = enc(redis_key(self.venue))
        stored = {dec(k): dec(v) for k, v in (await self.redis.hgetall(key)).items()}
        if stored.get("run_id") != run_id:
            changed = stored.get("run_id") is not None
            await self.redis.hset(
                key,
                mapping={
                    "run_id": run_id,
                    "role": role,
                    "changed_ms": str(now if changed else 0),
                    "previous": stored.get("run_id", ""),
                },
            )
            # The server answering now has this venue's keys (we just read them), but none of the state written
            # on the old one after its last replication: the hash is written again here, on the new one.
            if not changed:
                return []
            stored = {"run_id": run_id, "role": role, "changed_ms": str(now), "previous": stored["run_id"]}
        changed_ms = int(stored.get("changed_ms") or 0)
        if not changed_ms or now - changed_ms >= self.config.redis_failover * 1000:
            return []
        return [
            Condition(
                "redis_failover",
                "redis",
                0.0,
                "Redis failed over: another server answers for the venue",
                {"run_id": run_id, "previous": stored.get("previous", ""), "role": role, "changed_ms": changed_ms},
            )
        ]

    async def episodes(self) -> dict[str, Episode]:
        raw = await self.redis.hgetall(self.key)
        found = {}
        for name, value in raw.items():
            episode = Episode.from_json(value)
            if episode is not None:
                found[dec(name)] = episode
        return found

    async def evaluate(self, view: FleetView | None = None) -> list[tuple[Episode, str]]:
        """One evaluation: the episodes whose start or clear is due now, each with "start" or "clear". The caller
        queues the deliveries and stores the episode (``store``) in one pipeline; episodes that changed otherwise
        (seen first, back within ``clear_after``, gone before they fired) are stored here."""
        view = view or await fleet(self.redis, self.venue)
        now = view.server_ms
        holding = {c.key: c for c in await self.conditions(view)}
        episodes = await self.episodes()
        due: list[tuple[Episode, str]] = []
        writes: dict[str, Episode] = {}
        dropped: list[str] = []
        for key, condition in holding.items():
            episode = episodes.get(key)
            if episode is None:
                episode = Episode(condition.rule, condition.subject, now)
                writes[key] = episode
            elif episode.gone:
                episode.gone = 0
                writes[key] = episode
            episode.summary, episode.detail = condition.summary, condition.detail
            if not episode.fired and now - episode.since >= condition.hold * 1000:
                due.append((episode, "start"))
                writes.pop(key, None)
        clear_ms = self.config.clear_after * 1000
        for key, episode in episodes.items():
            if key in holding:
                continue
            if not episode.gone:
                episode.gone = now
                writes[key] = episode
            if now - episode.gone >= clear_ms:
                writes.pop(key, None)
                if episode.fired:
                    due.append((episode, "clear"))
                else:
                    dropped.append(key)  # never alerted (it did not hold long enough): nothing to clear
        if writes or dropped:
            async with self.redis.pipeline(transaction=False) as pipe:
                for key, episode in writes.items():
                    pipe.hset(self.key, enc(key), enc(episode.to_json()))
                if dropped:
                    pipe.hdel(self.key, *[enc(k) for k in dropped])
                await pipe.execute()
        return due

    def store(self, pipe: Any, episode: Episode, what: str, now: int) -> None:
        """Add to ``pipe`` the episode's new state after its ``what`` is queued."""
        key = enc(f"{episode.rule}:{episode.subject}")
        if what == "start":
            episode.fired = now
            pipe.hset(self.key, key, enc(episode.to_json()))
        else:
            pipe.hdel(self.key, key)


def alert_data(venue: str, episode: Episode, what: str, now_iso: str, since_iso: str) -> dict[str, Any]:
    """The body of an ``alert`` delivery (without its ``id``)."""
    return {
        "event": "alert",
        "time": now_iso,
        "venue": venue,
        "alert": episode.rule,
        "subject": episode.subject,
        "status": "firing" if what == "start" else "resolved",
        "since": since_iso,
        "summary": episode.summary,
        **{k: v for k, v in episode.detail.items() if k in ("printer", "location", "zone")},
        "detail": episode.detail,
    }
