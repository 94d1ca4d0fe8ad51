"""One spec per Lua script of the pre-print runs (``preprint_*.lua``, functions of the venue's library, as
protocol/specs.py does for the protocol's): the only place each script's KEYS and ARGV are put in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attendees.keys import AttendeeKeys
from preprint.keys import PreprintKeys, preprint_job_id
from protocol.codec import dec, enc
from protocol.keys import EncodedKeys
from protocol.specs import ScriptCall, Spec


def _words(reply: Any) -> list[str]:
    return [dec(x) for x in reply]


class RunCreate(Spec[list[str]]):
    name = "preprint_run"

    def call(
        self, k: PreprintKeys, run: str, sort: str, box_size: int, ticket_types: str, pickup: str, layouts: str
    ) -> ScriptCall[list[str]]:
        keys = [enc(k.runs), enc(k.run(run))]
        return (self, keys, [enc(run), enc(sort), box_size, enc(ticket_types), enc(pickup), enc(layouts)])

    def parse(self, reply: Any) -> list[str]:
        return _words(reply)


class BoxWrite(Spec[list[str]]):
    name = "preprint_box"

    def call(
        self,
        k: PreprintKeys,
        ak: AttendeeKeys,
        run: str,
        number: int,
        first: str,
        last: str,
        rows: Sequence[tuple[str, str, str]],
        events: bytes,
        maxlen: int,
    ) -> ScriptCall[list[str]]:
        """``rows``: (code, the record's version as read, the attendee's ``preprint`` JSON), in print order;
        ``events``, ``maxlen``: the venue's events stream, where a count that is no number is told as it restarts."""
        keys = [enc(k.run(run)), enc(k.box(run, number)), enc(k.box_codes(run, number)), events]
        keys += [enc(ak.attendee(code)) for code, _, _ in rows]
        args: list[bytes | int] = [enc(run), number, enc(first), enc(last), maxlen]
        for code, version, record in rows:
            args += [enc(code), enc(version), enc(record)]
        return (self, keys, args)

    def parse(self, reply: Any) -> list[str]:
        return _words(reply)


class Listed(Spec[bool]):
    name = "preprint_listed"

    def call(self, k: PreprintKeys, run: str) -> ScriptCall[bool]:
        return (self, [enc(k.runs), enc(k.run(run))], [enc(run)])

    def parse(self, reply: Any) -> bool:
        return bool(int(reply))


class Unbox(Spec[list[str]]):
    name = "preprint_unbox"

    def call(
        self, k: PreprintKeys, ak: AttendeeKeys, run: str, number: int, codes: Sequence[str]
    ) -> ScriptCall[list[str]]:
        keys = [enc(k.run(run)), enc(k.box(run, number)), enc(k.box_codes(run, number))]
        keys += [enc(ak.attendee(code)) for code in codes]
        return (self, keys, [enc(run)])

    def parse(self, reply: Any) -> list[str]:
        return _words(reply)


class Remove(Spec[list[str]]):
    name = "preprint_rm"

    def call(self, k: PreprintKeys, run: str) -> ScriptCall[list[str]]:
        return (self, [enc(k.runs), enc(k.run(run)), enc(k.voids(run))], [enc(run)])

    def parse(self, reply: Any) -> list[str]:
        return _words(reply)


class Done(Spec[list[str]]):
    name = "preprint_done"

    def call(
        self,
        k: PreprintKeys,
        ak: AttendeeKeys,
        run: str,
        number: int,
        codes: Sequence[str],
        events: bytes,
        maxlen: int,
    ) -> ScriptCall[list[str]]:
        keys = [enc(k.run(run)), enc(k.box_codes(run, number)), events, *(enc(ak.attendee(code)) for code in codes)]
        return (self, keys, [enc(run), maxlen])

    def parse(self, reply: Any) -> list[str]:
        return _words(reply)


class MoveState(Spec[list[str]]):
    name = "preprint_state"

    def call(self, k: PreprintKeys, run: str, from_states: Sequence[str], to: str, mode: str) -> ScriptCall[list[str]]:
        return (self, [enc(k.run(run))], [enc(",".join(from_states)), enc(to), enc(mode)])

    def parse(self, reply: Any) -> list[str]:
        return _words(reply)


RUN = RunCreate()
BOX = BoxWrite()
LISTED = Listed()
UNBOX = Unbox()
RM = Remove()
DONE = Done()
STATE = MoveState()


class VoidLayout(Spec[int]):
    name = "preprint_void_layout"

    def call(
        self,
        k: PreprintKeys,
        ak: AttendeeKeys,
        venue_keys: EncodedKeys,
        run: str,
        layout: str,
        version: int,
        attendees: Sequence[tuple[str, str]],
    ) -> ScriptCall[int]:
        """``attendees``: (code, job id) of each attendee of one box."""
        keys = [enc(k.voids(run)), *(enc(ak.attendee(code)) for code, _ in attendees)]
        keys += [venue_keys.done(enc(preprint_job_id(job_id))) for _, job_id in attendees]
        return (self, keys, [enc(run), enc(layout), version, *(enc(code) for code, _ in attendees)])

    def parse(self, reply: Any) -> int:
        return int(reply)


VOID_LAYOUT = VoidLayout()
SPECS: tuple[Spec[Any], ...] = (RUN, BOX, LISTED, UNBOX, RM, DONE, STATE, VOID_LAYOUT)


class Handover(Spec[list[str]]):
    name = "preprint_handover"

    def call(
        self,
        k: PreprintKeys,
        ak: AttendeeKeys,
        venue_keys: EncodedKeys,
        code: str,
        run: str,
        job_id: str,
        by: str,
        maxlen: int,
        zone: str = "",
    ) -> ScriptCall[list[str]]:
        """``zone``: where the hand-over counts as an arrival (the desk's zone; "" for none)."""
        keys = [
            enc(ak.attendee(code)), enc(k.run(run)), enc(ak.counts), venue_keys.printed_consumers,
            venue_keys.printed, venue_keys.events, venue_keys.done(enc(preprint_job_id(job_id))), venue_keys.minutes,
        ]  # fmt: skip
        return (self, keys, [enc(run), enc(job_id), enc(by), maxlen, enc(code), enc(zone)])

    def parse(self, reply: Any) -> list[str]:
        return _words(reply)


HANDOVER = Handover()
SPECS = (*SPECS, HANDOVER)


class Undrawn(Spec[bool]):
    name = "preprint_undrawn"

    def call(self, k: PreprintKeys, ak: AttendeeKeys, run: str, code: str, reason: str) -> ScriptCall[bool]:
        return (self, [enc(ak.attendee(code)), enc(k.voids(run))], [enc(run), enc(code), enc(reason)])

    def parse(self, reply: Any) -> bool:
        return bool(int(reply))


UNDRAWN = Undrawn()
SPECS = (*SPECS, UNDRAWN)


class AtDoor(Spec[list[str]]):
    name = "preprint_at_door"

    def call(
        self, k: PreprintKeys, ak: AttendeeKeys, venue_keys: EncodedKeys, code: str, run: str, job_id: str
    ) -> ScriptCall[list[str]]:
        """``job_id``: the attendee's badge job id (their pre-print job's is made from it)."""
        pp = enc(preprint_job_id(job_id))
        keys = [enc(ak.attendee(code)), enc(k.voids(run)), venue_keys.done(pp), enc(k.run(run)), venue_keys.job(pp)]
        return (self, keys, [enc(run), enc(code)])

    def parse(self, reply: Any) -> list[str]:
        return _words(reply)


AT_DOOR = AtDoor()
SPECS = (*SPECS, AT_DOOR)
