"""One delivery: the POST of a body to a webhook's URL, signed, with a bounded wait and a bounded answer.

The body is made once, when the delivery is queued, and sent byte for byte the same on every try: its ``id`` is
the idempotency key (the same for every try of one delivery, so a receiver that saw it already can say 200 and do
nothing). Each try signs ``"<t>.<body>"`` with HMAC-SHA256 and the webhook's secret, ``t`` the try's Unix time:
``Badge-Signature: t=<t>,v1=<hex>``, so a receiver can refuse a replay outside its window (docs/webhooks.md).

A receiver may misbehave: a redirect is not followed (the admin added one URL, and only that one is called), the
answer's body is read up to ``ANSWER_CAP`` bytes and the connection closed, the whole try is bounded by
``TIMEOUT`` seconds. Anything but a 2xx is a failed try, retried later by the sender.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp

from core.errors import UserError
from core.logs import masked, shown
from webhooks.hooks import Webhook

#: The longest one try may take, connecting and reading the answer included.
TIMEOUT = 10.0
#: Bytes of a receiver's answer read at most (for the log line); the rest is never read.
ANSWER_CAP = 4096
USER_AGENT = "badge-agent-webhooks"
SIGNATURE_HEADER = "Badge-Signature"
DELIVERY_HEADER = "Badge-Delivery"


def delivery_id(venue: str, webhook: str, source: str) -> str:
    """The idempotency key of one delivery: the same for the same venue, webhook and source (a printed-record
    entry, an events-stream entry), whoever computes it and however often."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"badge-agent:{venue}:{webhook}:{source}"))


def iso_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def signature(secret: bytes, t: int, body: bytes) -> str:
    """The ``Badge-Signature`` header's value for ``body`` sent at Unix time ``t``."""
    mac = hmac.new(secret, str(t).encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def read_secret(path: str) -> bytes:
    """The secret in the file (stripped); a UserError naming the file when it cannot be read or is empty."""
    try:
        secret = Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise UserError(f"secret file {path}: {exc.strerror or exc}") from None
    if not secret:
        raise UserError(f"secret file {path} is empty")
    return secret.encode("utf-8")


def text_of(data: dict[str, Any]) -> str:
    """The one line a chat hook shows for a delivery."""
    job = data.get("job") or {}
    who = job.get("name") or job.get("attendee_id") or data.get("job_id", "")
    where = data.get("location") or data.get("printer") or ""
    event = data.get("event")
    if event == "printed":
        what = "Badge reprinted" if data.get("reprint") else "Badge printed"
        return f"{what}: {who}" + (f" at {where}" if where else "")
    if event == "handed_over":
        return f"Badge handed over: {who}" + (f" at {where}" if where else "")
    if event == "failed":
        return f"Badge could not be printed: {who} ({data.get('reason') or 'no reason given'})"
    if event == "alert":
        state = "ALERT" if data.get("status") == "firing" else "Resolved"
        return f"{state}: {data.get('summary') or data.get('alert', '')} (venue {data.get('venue', '')})"
    if event == "test":
        return f"Test from badge-agent (venue {data.get('venue', '')})"
    return f"{event}: {who}"


def body_of(hook: Webhook, data: dict[str, Any]) -> bytes:
    """What is posted: the data as JSON; for a ``text`` webhook ``{"text": ...}`` (with the id alongside), which
    Slack, Mattermost and Matrix hooks show as it is; for an ``ntfy`` topic the line itself, as plain text (ntfy
    would show a JSON body as its raw characters)."""
    if hook.format == "ntfy":
        return text_of(data).encode("utf-8")
    if hook.format == "text":
        data = {"text": text_of(data), "id": data["id"]}
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def content_type(hook: Webhook) -> str:
    return "text/plain; charset=utf-8" if hook.format == "ntfy" else "application/json"


@dataclass(frozen=True)
class Outcome:
    ok: bool
    #: the HTTP status (0: none: refused, timed out, not reachable)
    status: int
    #: what happened, for a log line (the answer's start, the error, a redirect's target)
    detail: str

    def line(self) -> str:
        return f"HTTP {self.status}: {self.detail}" if self.status else self.detail


async def post(
    session: aiohttp.ClientSession,
    hook: Webhook,
    delivery: str,
    body: bytes,
    secret: bytes | None,
    timeout: float = TIMEOUT,
) -> Outcome:
    """One try: POST ``body`` to the webhook's URL. Never raises for what the receiver or the network does."""
    headers = {
        "Content-Type": content_type(hook),
        "User-Agent": USER_AGENT,
        DELIVERY_HEADER: delivery,
    }
    if secret is not None:
        headers[SIGNATURE_HEADER] = signature(secret, int(time.time()), body)
    try:
        async with session.post(
            hook.url,
            data=body,
            headers=headers,
            allow_redirects=False,
            timeout=aiohttp.ClientTimeout(total=timeout),
        ) as response:
            answer = await response.content.read(ANSWER_CAP)
            status = response.status
            location = response.headers.get("Location", "")
            # The rest of a huge answer is never read: the connection is dropped, not drained.
            response.close()
    except TimeoutError:
        return Outcome(False, 0, f"no answer within {timeout:g} s")
    except aiohttp.ClientError as exc:
        return Outcome(False, 0, shown(masked(f"not reached: {type(exc).__name__}: {exc}"), 300))
    if 300 <= status < 400:
        return Outcome(False, status, shown(masked(f"redirect to {location or '?'} not followed: add that URL"), 300))
    text = shown(answer.decode("utf-8", "replace").strip() or "(empty answer)", 200)
    return Outcome(200 <= status < 300, status, text)


def session() -> aiohttp.ClientSession:
    """The sender's HTTP client: no cookies kept, no proxy from the environment, one connection per try."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(force_close=True, limit=16),
        cookie_jar=aiohttp.DummyCookieJar(),
        trust_env=False,
    )
