"""The webhooks an admin added: name -> URL, events, filters, format and where the signing secret is.

Only these URLs are ever called (the sender posts to nothing else: no open relay). A URL with a user or password in
it is refused: such a credential would be shown by ``webhooks list`` and stored where every venue user may read it;
the secret that proves a delivery is the venue's goes in ``--secret-file``, a file on the sender's machine whose
path alone is stored (every venue user, kiosks included, may read the venue's keys, so a secret in Redis would be
theirs too).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

from redis.asyncio import Redis

from core.errors import UserError
from protocol.codec import dec, enc
from protocol.jobs import BUILT_IN
from protocol.printed import PrintedRecord
from webhooks.keys import CONSUMER, WebhookKeys

#: What a webhook can be told (docs/webhooks.md).
EVENTS = ("printed", "handed_over", "failed", "alert")
#: ``json``: the signed body; ``text``: ``{"text": ...}`` for Slack, Mattermost and Matrix hooks; ``ntfy``: the same
#: line as a plain-text body, which an ntfy topic shows as its message.
FORMATS = ("json", "text", "ntfy")

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
#: An event's own field name, as a job's ``fields`` may hold it (protocol/jobs.py): no other name can ever match.
FIELD_RE = re.compile(r"^[a-z0-9_]{1,40}$")
#: The delivery's own fields a ``--when`` may name, with the values each can have. Only ``printed`` and
#: ``handed_over`` carry them; they are read from the delivery before the job (so the speaker room can ask for
#: arrivals only: ``arrival=true``, never a reprint).
DELIVERY_FIELDS: dict[str, tuple[str, ...]] = {
    "arrival": ("true", "false"),
    "reprint": ("true", "false"),
    "kind": ("badge", "reprint", "handed_over"),
}
#: The events whose deliveries carry ``DELIVERY_FIELDS``.
DELIVERY_EVENTS = ("printed", "handed_over")
#: The job's own fields a filter may name (its list of printers is no single value to compare).
_JOB_FIELDS = tuple(f for f in BUILT_IN if f != "zone_printers")
MAX_URL = 2000


@dataclass(frozen=True)
class Webhook:
    name: str
    url: str
    events: tuple[str, ...]
    #: field -> value: every one must equal the delivery's field (``DELIVERY_FIELDS``) or the job's for the webhook
    #: to fire
    when: tuple[tuple[str, str], ...] = ()
    format: str = "json"
    #: the signing secret's file on the sender's machine; "" sends unsigned (a chat hook whose URL is its secret)
    secret_file: str = ""

    def to_json(self) -> str:
        data = asdict(self)
        data["when"] = dict(self.when)
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, name: str, raw: str | bytes) -> Webhook:
        data = json.loads(raw)
        return cls(
            name=name,
            url=str(data.get("url", "")),
            events=tuple(str(e) for e in data.get("events", ())),
            when=tuple((str(k), str(v)) for k, v in dict(data.get("when") or {}).items()),
            format=str(data.get("format") or "json"),
            secret_file=str(data.get("secret_file") or ""),
        )

    def wants(self, event: str, job: dict[str, Any], delivery: Mapping[str, Any] | None = None) -> bool:
        """True when this webhook is told of ``event`` for a job with these fields (its payload); ``delivery``:
        the data to be sent, whose ``DELIVERY_FIELDS`` a filter reads instead of the job's."""
        if event not in self.events:
            return False
        for name, value in self.when:
            if name in DELIVERY_FIELDS:
                found = None if delivery is None else delivery.get(name)
                if found is None or _text(found) != value:
                    return False
            elif _field(job, name) != value:
                return False
        return True


def _field(job: dict[str, Any], name: str) -> str | None:
    """A job's field: one of its own (name, company, ...) or of the event's (``fields``: ticket_type, ...)."""
    value = job.get(name)
    if value is None:
        extra = job.get("fields")
        value = extra.get(name) if isinstance(extra, dict) else None
    if value is None:
        return None
    return _text(value)


def _text(value: object) -> str:
    """A value as a ``--when`` compares it: text as it is, anything else as JSON (``true``, ``3``)."""
    return value if isinstance(value, str) else json.dumps(value)


def check_name(name: str) -> str:
    if not NAME_RE.match(name):
        raise UserError(f"webhook name {name!r}: lowercase letters, digits, - and _ (at most 63)")
    return name


def check_url(url: str) -> str:
    """The URL as given, or a UserError naming what is wrong (never echoing a password)."""
    if len(url) > MAX_URL:
        raise UserError(f"URL: at most {MAX_URL} characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise UserError(f"URL: not a URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise UserError("URL: must start with https:// (or http://)")
    if parts.username is not None or parts.password is not None:
        raise UserError(
            "URL: a user or password in the URL is refused (it would be stored where every venue user can read it); "
            "the receiver checks the Badge-Signature made with --secret-file instead"
        )
    if not parts.hostname:
        raise UserError("URL: no host")
    if port == 0:
        raise UserError("URL: port 0")
    if any(c.isspace() for c in url):
        raise UserError("URL: contains a space")
    return url


def parse_events(text: str) -> tuple[str, ...]:
    names = [e.strip() for e in text.split(",") if e.strip()]
    unknown = [e for e in names if e not in EVENTS]
    if unknown or not names:
        raise UserError(f"--events: {', '.join(unknown) or 'none given'}: choose from {', '.join(EVENTS)}")
    return tuple(dict.fromkeys(names))


def parse_when(items: tuple[str, ...], events: tuple[str, ...] = DELIVERY_EVENTS) -> tuple[tuple[str, str], ...]:
    """The ``--when FIELD=VALUE`` filters of a webhook told of ``events``; a UserError naming the first that could
    never match: an unknown field, a value a delivery's field never has, or a delivery's field asked of an event
    that has none."""
    found: dict[str, str] = {}
    for item in items:
        field, sep, value = item.partition("=")
        if not sep:
            raise UserError(f"--when {item!r}: FIELD=VALUE (e.g. ticket_type=Speaker or arrival=true)")
        if field in DELIVERY_FIELDS:
            allowed = DELIVERY_FIELDS[field]
            if value not in allowed:
                raise UserError(f"--when {item!r}: {field} is {' or '.join(allowed)}")
            without = [e for e in events if e not in DELIVERY_EVENTS]
            if without:
                raise UserError(
                    f"--when {item!r}: {', '.join(without)} events have no {field} (only "
                    f"{' and '.join(DELIVERY_EVENTS)}): add a second webhook for them"
                )
        elif not FIELD_RE.match(field):
            raise UserError(
                f"--when {item!r}: unknown field {field!r}: name one of the delivery's "
                f"({', '.join(DELIVERY_FIELDS)}), the job's own ({', '.join(_JOB_FIELDS)}) "
                "or an event field (ticket_type, ...: 1-40 of a-z, 0-9 and _)"
            )
        found[field] = value
    return tuple(found.items())


class Hooks:
    """The venue's webhooks on one Redis client (``decode_responses=False``)."""

    def __init__(self, redis: Redis, venue: str) -> None:
        self.redis = redis
        self.venue = venue
        self.keys = WebhookKeys(venue)

    async def add(self, hook: Webhook) -> bool:
        """Store ``hook`` (replacing one of its name: True when it was new). The webhooks join the printed record
        first, so every print confirmed from now on is kept for the sender, even one not running yet."""
        await PrintedRecord(self.redis, self.venue).join(CONSUMER)
        await self.redis.set(enc(self.keys.events_cursor), enc(await self.events_end()), nx=True)
        return bool(await self.redis.hset(enc(self.keys.hooks), enc(hook.name), enc(hook.to_json())))

    async def events_end(self) -> str:
        """The id of the events stream's last entry: dead letters after it are told (none from before)."""
        last = await self.redis.xrevrange(enc(self.keys.venue_keys.events), count=1)
        return dec(last[0][0]) if last else "0-0"

    async def all(self) -> list[Webhook]:
        raw = await self.redis.hgetall(enc(self.keys.hooks))
        hooks = []
        for name, value in raw.items():
            try:
                hooks.append(Webhook.from_json(dec(name), value))
            except (ValueError, TypeError, AttributeError):
                continue  # a value written by hand that is not a webhook: never called
        return sorted(hooks, key=lambda h: h.name)

    async def get(self, name: str) -> Webhook | None:
        raw = await self.redis.hget(enc(self.keys.hooks), enc(name))
        return None if raw is None else Webhook.from_json(name, raw)

    async def remove(self, name: str) -> bool:
        """Remove the webhook and its pending deliveries. The last one gone, the webhooks leave the printed record
        (no entries kept for a reader that has nothing to tell)."""
        removed = bool(await self.redis.hdel(enc(self.keys.hooks), enc(name)))
        await self.redis.delete(enc(self.keys.pending(name)), enc(self.keys.queue(name)), enc(self.keys.gaveup(name)))
        if not await self.redis.hlen(enc(self.keys.hooks)):
            await self.redis.hdel(enc(self.keys.venue_keys.printed_consumers), enc(CONSUMER))
        return removed
