"""The attendee list in the venue's Redis: read, search, refresh, badge, correct, cancel, count, purge.

Every write is one script (put, badge, edit, status, checkin: one atomic step each). A write that depends on what
the caller read (the terms of a name, the payload of a badge) carries the record's version; a record changed in
between answers "stale" and the step is made again from a fresh read.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec
from redis.asyncio import Redis

from attendees import specs
from attendees.keys import AttendeeKeys
from attendees.terms import index_terms, query_words
from preprint.keys import PreprintKeys, run_of
from protocol.codec import dec, enc
from protocol.jobs import Job, parse_job
from protocol.replies import CancelKind
from protocol.store import Store, Zoned, zone_args

#: Fields of an attendee hash, in the order ``_FIELDS`` reads them.
_FIELDS = ("n", "c", "r", "f", "o", "e", "s", "st", "j", "t", "v", "en", "ec", "ef", "i", "at", "preprint", "bs")
_FIELD_NAMES = tuple(enc(f) for f in _FIELDS)
#: The job hash fields a badge state is made of.
_JOB_FIELDS = ("state", "printer", "printed_ms", "printed_at", "reprints")
_JOB_FIELD_NAMES = tuple(enc(f) for f in _JOB_FIELDS)
#: Job ids of the attendees this process read lately, by code, at most this many (``AttendeeStore.found``).
JOB_IDS_KEPT = 4096
#: What a lookup reads of both the attendee's hash and its job's, in one call (each answers the other's as nil).
_LOOKUP_FIELD_NAMES = _FIELD_NAMES + _JOB_FIELD_NAMES
SEARCH_LIMIT = 50
#: Distinct terms of one word's prefix range a search looks at (``ma`` may start thousands of names).
SEARCH_TERMS = 500
#: Retries of a step whose record changed between the read and the script.
STALE_RETRIES = 5
NO_TYPE = "-"
#: Hex digits of a handle's MAC: 96 bits, too many to guess at any rate the intake answers.
HANDLE_MAC_HEX = 24
#: An attendee's handle (``AttendeeStore.handle``): a ref (base 36) and its MAC.
HANDLE_RE = re.compile(rf"[0-9a-z]{{1,13}}\.[0-9a-f]{{{HANDLE_MAC_HEX}}}")


@dataclass(frozen=True)
class Attendee:
    code: str
    name: str
    company: str
    role: str
    fields: dict[str, str]
    order_code: str
    email: str
    source: str
    status: str
    job_id: str
    ticket_type: str
    version: str
    #: Staff corrections ("name", "company", "fields"), shown instead of the source's values.
    edits: dict[str, Any] = field(default_factory=dict)
    #: The search terms the record is indexed under now (read by writers only: ``AttendeeStore.with_terms``).
    indexed: str = ""
    #: The short ref the search index names the attendee by (its ``attendees:refs`` entry holds the terms).
    ref: str = ""
    #: Why a kiosk sends this attendee to the help desk instead of printing ("" for none; ``Record.attention``).
    attention: str = ""
    #: Where a pre-printed badge of this attendee is (JSON, preprint/keys.py), and its state ("": none, planned).
    preprint: str = ""
    preprint_state: str = ""

    @property
    def shown_name(self) -> str:
        return str(self.edits.get("name") or self.name)

    @property
    def shown_company(self) -> str:
        return str(self.edits.get("company") or self.company)

    @property
    def shown_fields(self) -> dict[str, str]:
        edited = self.edits.get("fields")
        return dict(edited) if isinstance(edited, dict) else dict(self.fields)

    def terms(self) -> str:
        return " ".join(index_terms(self.shown_name, self.shown_company, self.order_code, self.email))

    def job(self, printer: str | None = None, zone: Zoned | None = None) -> Job:
        """The attendee's badge job, with what the list shows (a staff correction included); ``zone``: the zone of
        the token that asks, and its printers."""
        return parse_job(
            {
                "job_id": self.job_id,
                "attendee_id": self.code,
                "name": self.shown_name,
                "company": self.shown_company,
                "role": self.role,
                "fields": self.shown_fields,
                "printer": printer,
                "zone": zone[0] if zone else None,
                "zone_printers": list(zone[1]) if zone else None,
            }
        )


@dataclass(frozen=True)
class BadgeState:
    """Where an attendee's badge is: ``none`` (never asked for), or its job's state, printer and place."""

    state: str
    printer: str = ""
    location: str = ""
    printed_ms: int = 0
    reprints: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "printer": self.printer,
            "location": self.location,
            "printed_ms": self.printed_ms or None,
            "reprints": self.reprints,
        }


@dataclass(frozen=True)
class Counts:
    expected: int
    checked_in: int
    cancelled: int
    #: ticket type -> (expected, checked in); "-" for attendees without one.
    by_type: dict[str, tuple[int, int]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "expected": self.expected,
            "checked_in": self.checked_in,
            "cancelled": self.cancelled,
            "by_ticket_type": {t: {"expected": e, "checked_in": c} for t, (e, c) in sorted(self.by_type.items())},
        }


_JSON = msgspec.json.Decoder()


def _attendee(code: str, raw: Sequence[bytes | str | None]) -> Attendee | None:
    """An attendee from its hash's ``_FIELDS`` as HMGET answers them (None: the hash does not exist)."""
    (n, c, r, f, o, e, s, st, j, t, v, en, ec, ef, i, at, pp, bs) = [
        None if x is None else x.decode("utf-8", "surrogateescape") if isinstance(x, bytes) else x for x in raw
    ]  # dec() inlined: a search decodes 800 of these
    if v is None and all(x is None for x in raw):  # no such hash (every listed attendee has a version)
        return None
    edits: dict[str, Any] = {}
    if en:
        edits["name"] = en
    if ec:
        edits["company"] = ec
    if ef:
        edits["fields"] = _JSON.decode(ef)
    return Attendee(
        code=code,
        name=n or "",
        company=c or "",
        role=r or "",
        fields=_JSON.decode(f) if f else {},
        order_code=o or "",
        email=e or "",
        source=s or "",
        status=st or "valid",
        job_id=j or "",
        ticket_type=t or NO_TYPE,
        version=v or "",
        edits=edits,
        ref=i or "",
        attention=at or "",
        preprint=pp or "",
        preprint_state=bs or "",
    )


class AttendeeStore:
    """One venue's attendee list on one Redis client (``decode_responses=False``)."""

    def __init__(self, redis: Redis, venue: str, venue_store: Store | None = None) -> None:
        self.redis = redis
        self.keys = AttendeeKeys(venue)
        self.venue = venue_store or Store(redis, venue)
        self.scripts = self.venue.scripts  # the venue's function library holds the list's scripts too
        self._secret: bytes | None = None
        #: code -> job id of the attendees read lately (oldest first): an attendee's job id never changes while it
        #: is listed, so a lookup of one of them reads the attendee and its badge in one round trip.
        self._job_ids: dict[str, str] = {}

    @staticmethod
    async def exists(redis: Redis, venue: str) -> bool:
        """Whether the venue has an attendee list (it has counts from its first import on)."""
        return bool(await redis.exists(enc(AttendeeKeys(venue).counts)))

    # -- reading -------------------------------------------------------------------------------------------------

    async def get(self, code: str) -> Attendee | None:
        # One command, not a pipeline of one: a kiosk's lookup is the list's most frequent request.
        attendee = _attendee(code, await self.redis.hmget(enc(self.keys.attendee(code)), _FIELD_NAMES))
        if attendee is not None:
            self._remember(attendee)
        return attendee

    def _remember(self, attendee: Attendee) -> None:
        ids = self._job_ids
        if attendee.code not in ids and len(ids) >= JOB_IDS_KEPT:
            del ids[next(iter(ids))]  # the oldest
        ids[attendee.code] = attendee.job_id

    async def found(self, code: str) -> tuple[Attendee, BadgeState] | None:
        """The attendee and their badge (None: not listed): a lookup. One round trip when this process read the
        attendee lately (a kiosk following the badge it just asked for looks its code up every second, the badge
        request read it): the attendee and the job it had are read together, and the record read says whether that
        is still its job (a list purged and loaded again may give the code another). Else two: the job id is in the
        attendee's record."""
        job_id = self._job_ids.get(code)
        if job_id is None:
            attendee = await self.get(code)
        else:
            # One script call (attendee_read.lua) reading both hashes: cheaper for the intake than a pipeline of two.
            keys = [enc(self.keys.attendee(code)), self.venue.encoded_keys.job(enc(job_id))]
            both = await self.scripts.run(specs.READ.call(keys, _LOOKUP_FIELD_NAMES))
            raw, job_raw = both[0][: len(_FIELDS)], both[1][len(_FIELDS) :]
            attendee = _attendee(code, raw)
            if attendee is not None and attendee.job_id == job_id:
                return attendee, (await self._states([job_raw]))[0]
            if attendee is not None:
                self._remember(attendee)
        if attendee is None:
            self._job_ids.pop(code, None)
            return None
        (state,) = await self.badge_states([attendee])
        return attendee, state

    async def get_many(self, codes: Sequence[str]) -> list[Attendee | None]:
        """Many attendees in one script call (attendee_read.lua): one command to send and one reply to parse, where
        a pipeline of one HMGET each costs the intake a command object and a reply callback per attendee."""
        if not codes:
            return []
        keys = [enc(self.keys.attendee(code)) for code in codes]
        raws = await self.scripts.run(specs.READ.call(keys, _FIELD_NAMES))
        return [_attendee(code, raw) for code, raw in zip(codes, raws, strict=True)]

    async def badge_states(self, attendees: Sequence[Attendee]) -> list[BadgeState]:
        """Each attendee's badge, in one round trip (two when a badge is queued or printing: where it is)."""
        k = self.venue.encoded_keys
        if not attendees:
            return []
        if len(attendees) == 1:  # a lookup: one plain command
            raws = [await self.redis.hmget(k.job(enc(attendees[0].job_id)), _JOB_FIELD_NAMES)]
        else:  # a search's fifty: one script call (see get_many)
            keys = [k.job(enc(attendee.job_id)) for attendee in attendees]
            raws = await self.scripts.run(specs.READ.call(keys, _JOB_FIELD_NAMES))
        return await self._states(raws)

    async def _states(self, raws: Sequence[Sequence[bytes | str | None]]) -> list[BadgeState]:
        """Badge states from their jobs' ``_JOB_FIELDS`` as read (and where a queued or printing one is)."""
        rows = [dict(zip(_JOB_FIELDS, (dec(v) if v is not None else None for v in raw), strict=True)) for raw in raws]
        printers = sorted({r["printer"] for r in rows if r["state"] and r["state"] != "printed" and r["printer"]})
        locations = await self._locations(printers)
        states = []
        for row in rows:
            if row["state"] is None:
                states.append(BadgeState("none"))
                continue
            printer = row["printer"] or ""
            where = row["printed_at"] if row["state"] == "printed" and row["printed_at"] else locations.get(printer, "")
            states.append(
                BadgeState(row["state"], printer, where or "", int(row["printed_ms"] or 0), int(row["reprints"] or 0))
            )
        return states

    async def _locations(self, printers: Sequence[str]) -> dict[str, str]:
        if not printers:
            return {}
        raws = await self.redis.mget([enc(self.venue.keys.health(p)) for p in printers])
        out = {}
        for printer, raw in zip(printers, raws, strict=True):
            try:
                out[printer] = str(json.loads(raw).get("location", "")) if raw else ""
            except (ValueError, AttributeError):
                out[printer] = ""
        return out

    async def search(self, query: str, limit: int = SEARCH_LIMIT) -> list[Attendee]:
        """At most ``limit`` attendees each of whose shown name, company, order code or e-mail matches every word of
        ``query`` (folded: case and accents ignored; a word's prefix; an order code or e-mail whole), by name.

        One round trip reads the range of distinct terms of the most selective word (the longest), one script
        (attendee_search.lua) gathers its attendees and keeps those whose terms have every other word, one more
        reads the attendees found.
        """
        words = query_words(query)
        if not words:
            return []
        codes = await self._codes_of(words, limit)
        legacy = query_words(query, legacy=True)
        if legacy != words:
            # Also as a list indexed before Latin letters were transliterated holds its terms (attendees/terms.py):
            # such a list is found as it was until it is imported again.
            codes = list(dict.fromkeys(codes + await self._codes_of(legacy, limit)))
        found = [a for a in await self.get_many(codes) if a is not None]
        found.sort(key=lambda a: (a.shown_name.casefold(), a.code))
        return found[:limit]

    async def _codes_of(self, words: list[str], limit: int) -> list[str]:
        """The codes of at most ``limit`` attendees with every one of ``words`` (query_words)."""
        words = sorted(words, key=len, reverse=True)  # the longest word is the most selective: the others filter it
        low = enc(words[0])
        ranged = await self.redis.zrangebylex(enc(self.keys.terms), b"[" + low, b"[" + low + b"\xff", 0, SEARCH_TERMS)
        codes: list[str] = await self.scripts.run(specs.SEARCH.call(self.keys, words[0], ranged, words[1:], limit))
        return codes

    async def with_terms(self, attendees: Sequence[Attendee | None]) -> list[Attendee | None]:
        """The attendees with the terms each is indexed under (``indexed``: its ``attendees:refs`` entry, after the
        code), in one command: what a write that changes the index must say it read."""
        refs = [enc(a.ref) for a in attendees if a is not None and a.ref]
        entries = iter(await self.redis.hmget(enc(self.keys.refs), refs) if refs else [])
        out: list[Attendee | None] = []
        for attendee in attendees:
            if attendee is None or not attendee.ref:
                out.append(attendee)
                continue
            entry = next(entries)
            terms = dec(entry).partition(" ")[2] if entry is not None else ""
            out.append(Attendee(**{**attendee.__dict__, "indexed": terms}))
        return out

    async def codes(self) -> AsyncIterator[str]:
        """Every attendee's code (SCAN: for export, prune and purge, never on a desk's path)."""
        prefix = len(self.keys.attendee(""))
        async for key in self.redis.scan_iter(match=enc(self.keys.attendee_pattern), count=1000):
            yield dec(key)[prefix:]

    # -- job ids ---------------------------------------------------------------------------------------------------

    async def _key(self) -> bytes:
        """The venue's list secret (``attendees:key``), made once (SET NX) and kept by this process."""
        if self._secret is None:
            await self.redis.set(enc(self.keys.secret), secrets.token_hex(32).encode(), nx=True)
            raw = await self.redis.get(enc(self.keys.secret))
            if raw is None:
                raise RuntimeError("the attendee list's secret vanished while it was read")
            self._secret = enc(raw) if isinstance(raw, str) else bytes(raw)
        return self._secret

    async def job_id_for(self, code: str) -> str:
        """A job id made from the code with the venue's secret (HMAC-SHA256): stable, and no one who sees it in a log
        or on the board can work back to the ticket code."""
        digest = hmac.new(await self._key(), code.encode("utf-8"), hashlib.sha256).hexdigest()
        return f"att-{digest[:20]}"

    # -- handles ---------------------------------------------------------------------------------------------------

    async def handle(self, attendee: Attendee) -> str:
        """The name a desk and a kiosk act on this attendee by instead of the ticket code (docs/design.md, "The
        attendee list"): ``<ref>.<mac>``, the attendee's ref in the search index (which ``attendees:refs`` maps back
        to the code) and an HMAC of ref and code under the venue's secret. Stable while the attendee is listed; not
        forgeable nor made for another ref without the secret; after a purge (a new secret) no old handle works."""
        return f"{attendee.ref}.{self._mac(await self._key(), attendee.ref, attendee.code)}"

    @staticmethod
    def _mac(key: bytes, ref: str, code: str) -> str:
        message = f"handle\0{ref}\0{code}".encode("utf-8", "surrogateescape")
        return hmac.new(key, message, hashlib.sha256).hexdigest()[:HANDLE_MAC_HEX]

    async def code_of(self, handle: str) -> str | None:
        """The ticket code a handle names, or None when it is not one of this list's handles."""
        if not HANDLE_RE.fullmatch(handle):
            return None
        ref, _, mac = handle.partition(".")
        entry = await self.redis.hget(enc(self.keys.refs), enc(ref))
        if entry is None:
            return None
        code = dec(entry).partition(" ")[0]
        if not hmac.compare_digest(mac, self._mac(await self._key(), ref, code)):
            return None
        return code

    # -- writing -------------------------------------------------------------------------------------------------

    async def put_many(self, rows: Sequence[tuple[str, specs.Record]], generation: str = "") -> list[specs.Put]:
        """Add or refresh attendees (one script each, in one round trip). A row whose record changed while this ran
        is read and sent again."""
        results: list[specs.Put | None] = [None] * len(rows)
        pending = list(range(len(rows)))
        for attempt in range(STALE_RETRIES):
            # The first attempt takes every row for new (a first import reads nothing); a row already listed answers
            # "stale" and is sent again with what its record holds.
            current: list[Attendee | None] = [None] * len(pending)
            if attempt:
                current = await self.with_terms(await self.get_many([rows[i][0] for i in pending]))
            calls = []
            for i, attendee in zip(pending, current, strict=True):
                code, record = rows[i]
                calls.append(
                    specs.PUT.call(
                        self.keys,
                        self.venue.encoded_keys,
                        code,
                        attendee.version if attendee else "",
                        generation,
                        _as_shown(record, attendee),
                        attendee.indexed if attendee else "",
                        self.venue.events_maxlen,
                        run_of(attendee.preprint) if attendee else "",
                    )
                )
            if not calls:
                break
            if self.scripts.functions is None:
                await self.scripts.prepare("attendee_put")
            replies = await self.scripts.run_together(calls)
            retry = []
            for i, reply in zip(pending, replies, strict=True):
                if reply.kind is specs.PutKind.STALE:
                    retry.append(i)
                else:
                    results[i] = reply
            pending = retry
            if not pending:
                break
        return [r if r is not None else specs.Put(specs.PutKind.STALE) for r in results]

    async def badge(
        self,
        code: str,
        created_by: str,
        printer: str | None = None,
        at_desk: bool = True,
        zone: Zoned | None = None,
        owned: bool = False,
    ) -> tuple[specs.Badged, Attendee | None]:
        """Create this attendee's badge job unless it exists: ("queued"), ("exists", state), ("cancelled"),
        ("unknown"). Exactly one job, however many desks and kiosks ask at once. Not ``at_desk`` (a kiosk): an
        attendee flagged for the help desk (``attention``) whose badge does not exist yet answers ("attention").
        ``zone``: the zone of the token that asks and its printers, recorded on the job (``Job.zoned``); ``owned``:
        ``created_by`` is an intake token, whose set of jobs (its outstanding count) a new badge joins."""
        k = self.venue.encoded_keys
        for _ in range(STALE_RETRIES):
            attendee = await self.get(code)
            if attendee is None:
                return specs.Badged(specs.BadgeKind.UNKNOWN), None
            if attendee.attention and not at_desk and attendee.status == "valid":
                # Read at this version: the script below would answer "stale" for a record changed since.
                state = await self.redis.hget(k.job(enc(attendee.job_id)), "state")
                if state is None:
                    return specs.Badged(specs.BadgeKind.ATTENTION), attendee
                return specs.Badged(specs.BadgeKind.EXISTS, dec(state)), attendee
            job = attendee.job(printer, zone)
            reply = await self.scripts.run(
                specs.BADGE.call(
                    self.keys,
                    k,
                    code,
                    attendee.version,
                    attendee.job_id,
                    job.payload(),
                    k.printer(job.printer) if job.printer else None,
                    self.venue.events_maxlen,
                    created_by,
                    zone_args(job.zoned),
                    k.owned(enc(created_by)) if owned else None,
                )
            )
            if reply.kind is not specs.BadgeKind.STALE:
                return reply, attendee
        return specs.Badged(specs.BadgeKind.STALE), None

    async def badge_listed(
        self, jobs: Sequence[tuple[int, Job]], created_by: str
    ) -> dict[int, tuple[str, specs.Badged]]:
        """For the jobs whose attendee id is a listed ticket code: that attendee's badge instead (``badge``), by the
        caller's number -> (the attendee's job id, the answer). A job of an unlisted code is left to the caller."""
        if not jobs:
            return {}
        async with self.redis.pipeline(transaction=False) as pipe:
            for _, job in jobs:
                pipe.exists(enc(self.keys.attendee(job.attendee_id)))
            present = await pipe.execute()
        out: dict[int, tuple[str, specs.Badged]] = {}
        for (number, job), listed in zip(jobs, present, strict=True):
            if listed:
                reply, attendee = await self.badge(job.attendee_id, created_by, job.printer, zone=job.zoned)
                out[number] = (attendee.job_id if attendee else job.job_id, reply)
        return out

    async def edit(self, code: str, changes: dict[str, Any]) -> Attendee | None:
        """Correct ``name``, ``company`` or ``fields`` (a key present in ``changes``); a value equal to what the source
        says (or empty) drops the correction. Returns the attendee as now shown, or None for an unknown code."""
        for _ in range(STALE_RETRIES):
            (attendee,) = await self.with_terms([await self.get(code)])
            if attendee is None:
                return None
            edits = dict(attendee.edits)
            for key, source_value in (("name", attendee.name), ("company", attendee.company)):
                if key in changes:
                    value = str(changes[key] or "").strip()
                    if value and value != source_value:
                        edits[key] = value
                    else:
                        edits.pop(key, None)
            if "fields" in changes:
                if changes["fields"] and changes["fields"] != attendee.fields:
                    edits["fields"] = changes["fields"]
                else:
                    edits.pop("fields", None)
            shown = Attendee(**{**attendee.__dict__, "edits": edits})
            shown.job()  # every value checked as a badge's (raises JobError naming the field)
            fields_json = json.dumps(edits["fields"], ensure_ascii=False) if "fields" in edits else ""
            reply = await self.scripts.run(
                specs.EDIT.call(
                    self.keys,
                    self.venue.encoded_keys,
                    code,
                    attendee.version,
                    str(edits.get("name", "")),
                    str(edits.get("company", "")),
                    fields_json,
                    shown.terms(),
                    attendee.indexed,
                    self.venue.events_maxlen,
                    (self.venue.encoded_keys, run, attendee.job_id) if (run := run_of(attendee.preprint)) else None,
                )
            )
            if reply == "unknown":
                return None
            if reply == "edited":
                return await self.get(code)
        raise RuntimeError(f"attendee kept changing while it was corrected ({STALE_RETRIES} tries)")

    async def refresh_payload(self, attendee: Attendee) -> str:
        """Put what the list now shows on the attendee's badge job, unless a printer is printing it (then the next
        round takes it: a reprint). Returns the job's state ("" when there is no job yet)."""
        job = attendee.job()
        return await self.scripts.run(specs.PAYLOAD.call(self.venue.encoded_keys, job.job_id, job.payload()))

    async def set_status(self, code: str, status: str, by: str) -> tuple[str, str]:
        """Mark a ticket ``valid`` or ``cancelled``. A cancelled ticket's badge that no printer has taken yet is
        cancelled with it (a cancelled ticket never prints); made valid again (an undo), a badge the cancel withdrew
        is as never asked for (state "none": the next badge request prints it). Returns (changed | same | unknown,
        job state)."""
        for _ in range(STALE_RETRIES):
            attendee = await self.get(code)
            if attendee is None:
                return "unknown", ""
            kind, job_id, restored = await self.scripts.run(
                specs.STATUS.call(
                    self.keys,
                    self.venue.encoded_keys,
                    code,
                    status,
                    attendee.job_id,
                    self.venue.events_maxlen,
                    run_of(attendee.preprint),
                )
            )
            if kind != "stale":
                break
        else:
            raise RuntimeError(f"attendee kept changing while its status was set ({STALE_RETRIES} tries)")
        if restored:
            return kind, "none"
        state = ""
        if kind != "unknown" and status == "cancelled" and job_id:
            reply = await self.venue.cancel(job_id, by)
            state = "cancelled" if reply.kind is CancelKind.CANCELLED else reply.detail
        return kind, state

    # -- counts ----------------------------------------------------------------------------------------------------

    async def counts(self, fold: bool = True) -> Counts:
        """Expected, checked in (first badge confirmed printed) and cancelled, and per ticket type.

        ``fold``: badges printed since the last look are folded into the stored counts first (the checkin script,
        once each), so the next look reads less. Without it (the read-only views: status, the board) they are
        looked at and added, changing nothing: the same numbers either way.
        """
        pending = {dec(j): dec(t) for j, t in (await self.redis.hgetall(enc(self.keys.badging))).items()}
        ids = list(pending)
        printed: dict[str, int] = {}
        if fold:
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                await self.scripts.run(
                    specs.CHECKIN.call(self.keys, self.venue.encoded_keys, chunk, self.venue.events_maxlen)
                )
        elif ids:
            async with self.redis.pipeline(transaction=False) as pipe:
                for job_id in ids:
                    pipe.exists(self.venue.encoded_keys.done(enc(job_id)))
                done = await pipe.execute()
            for job_id, present in zip(ids, done, strict=True):
                if present:
                    printed["checked_in"] = printed.get("checked_in", 0) + 1
                    key = "checked_in:" + pending[job_id]
                    printed[key] = printed.get(key, 0) + 1
        # A count that is no whole number (written by hand) reads as 0 here; the list's next step that counts it
        # restarts it with an integrity_fault event (prelude.lua's bump).
        raw = {dec(k): _count(v) for k, v in (await self.redis.hgetall(enc(self.keys.counts))).items()}
        for key, value in printed.items():
            raw[key] = raw.get(key, 0) + value
        by_type: dict[str, tuple[int, int]] = {}
        for key, value in raw.items():
            what, _, ticket_type = key.partition(":")
            if not ticket_type:
                continue
            expected, checked = by_type.get(ticket_type, (0, 0))
            if what == "expected":
                expected = value
            elif what == "checked_in":
                checked = value
            by_type[ticket_type] = (expected, checked)
        by_type = {t: v for t, v in by_type.items() if v != (0, 0)}
        return Counts(raw.get("expected", 0), raw.get("checked_in", 0), raw.get("cancelled", 0), by_type)

    # -- after the event -------------------------------------------------------------------------------------------

    async def purge(self) -> dict[str, int]:
        """Remove the list, its index and counts, the pre-print runs (and the groups their boxes printed as), and
        every personal field of the venue's job records (the payload: name, company, role, fields, ticket code;
        staff's reprint reasons), and the event stream. Refused while a badge or a box is still queued or printing
        (it would print without a name)."""
        k = self.venue.keys
        waiting = await self.redis.llen(enc(k.pool))
        async for _ in self.redis.scan_iter(match=enc(k.inflight("*")), count=1000):
            waiting += 1
        async for _ in self.redis.scan_iter(match=enc(k.queue("*")), count=1000):
            waiting += 1
        # A box of a pre-print run still waiting for a printer, or held by one, would print without names too.
        waiting += await self.redis.llen(enc(k.groups))
        async for _ in self.redis.scan_iter(match=enc(k.group_held("*")), count=1000):
            waiting += 1
        if waiting:
            raise PurgeRefused("badges are still waiting or printing: let them print or cancel them, then purge")
        removed = 0
        batch: list[bytes] = []
        async for code in self.codes():
            batch.append(enc(self.keys.attendee(code)))
            if len(batch) >= 1000:
                removed += await self.redis.unlink(*batch)
                batch = []
        if batch:
            removed += await self.redis.unlink(*batch)
        mine = self.keys
        listed = (mine.terms, mine.exact, mine.refs, mine.counts, mine.badging, mine.secret)
        await self.redis.unlink(*(enc(key) for key in listed))
        async for key in self.redis.scan_iter(match=enc(mine.posting_pattern), count=1000):
            await self.redis.unlink(key)
        # The pre-print runs too: their boxes list attendee codes in print order, and their labels and void lists
        # name people. Every key of every run, listed or cut short.
        runs = await self.redis.scard(enc(PreprintKeys(self.keys.venue).runs))
        async for key in self.redis.scan_iter(match=enc(PreprintKeys(self.keys.venue).pattern), count=1000):
            await self.redis.unlink(key)
        # The groups' hashes name each badge they held (the label a box's continuation names its first badge by).
        async for key in self.redis.scan_iter(match=enc(k.group("*")), count=1000):
            await self.redis.unlink(key)
        jobs = 0
        prefix = k.job("")
        async for key in self.redis.scan_iter(match=enc(k.job("*")), count=1000):
            job_id = dec(key)[len(prefix) :]
            await self.redis.hset(key, mapping={"payload": json.dumps({"job_id": job_id, "purged": True})})
            await self.redis.hdel(key, "reprint_reason", "reason", "error")
            jobs += 1
        await self.redis.unlink(enc(k.events))
        self._secret = None
        self._job_ids.clear()
        return {"attendees": removed, "jobs": jobs, "runs": runs}


class PurgeRefused(Exception):
    """Purge would blank the badge of a job still to print."""


def _as_shown(record: specs.Record, current: Attendee | None) -> specs.Record:
    """The record as ``put`` writes it: the search terms of what will be shown (a staff correction wins), and the
    job id the attendee already has (its badge may exist)."""
    if current is None:
        return record
    name = str(current.edits.get("name") or record.name)
    company = str(current.edits.get("company") or record.company)
    terms = " ".join(index_terms(name, company, record.order_code, record.email))
    return record._replace(terms=terms, job_id=current.job_id or record.job_id)


def record_for(job: Job, order_code: str, email: str, source: str, status: str) -> specs.Record:
    """A list record from a checked job (the name, company, role and fields a badge will carry)."""
    ticket_type = job.fields.get("ticket_type") or NO_TYPE
    fields = json.dumps(job.fields, ensure_ascii=False, sort_keys=True) if job.fields else ""
    terms = " ".join(index_terms(job.name, job.company, order_code, email))
    return specs.Record(
        job.name, job.company, job.role, fields, order_code, email, source, status, job.job_id, ticket_type, terms
    )


async def list_counts(redis: Redis, venue: str) -> dict[str, Any] | None:
    """The attendee list's counts, read only; None without a list."""
    if not await AttendeeStore.exists(redis, venue):
        return None
    return (await AttendeeStore(redis, venue).counts(fold=False)).as_dict()


def _count(raw: bytes | str) -> int:
    try:
        return int(raw)
    except ValueError:
        return 0
