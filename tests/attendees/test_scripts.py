"""The attendee list's scripts: each is a function of the venue's library with a spec, each header names the KEYS
and ARGV its spec sends, and every key it touches is passed in KEYS under the venue's hash tag."""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

from attendees import specs
from attendees.keys import AttendeeKeys
from protocol.keys import EncodedKeys, Keys
from protocol.library import default_library
from protocol.scripts import plain_source
from protocol.specs import ScriptCall


def _calls() -> dict[str, ScriptCall[Any]]:
    k, v = AttendeeKeys("v"), EncodedKeys(Keys("v"))
    record = specs.Record("N", "C", "R", "", "O", "E", "import", "valid", "J", "-", "ann =e@x #o acme")
    return {
        # with the optional pre-print run (its two keys come last), so every ARGV the header names is sent
        "attendee_put": specs.PUT.call(k, v, "<code>", "1", "g", record, "ann bob #o", 9, "night"),
        "attendee_badge": specs.BADGE.call(
            k, v, "<code>", "1", "J", "{}", None, 1, "t", (b"z", b"p1 p2"), v.owned(b"t")
        ),
        "attendee_edit": specs.EDIT.call(k, v, "<code>", "1", "N", "", "", "ann acme", "bob", 9, (v, "night", "J")),
        "attendee_status": specs.STATUS.call(k, v, "<code>", "cancelled", "J", 9, "night"),
        "attendee_checkin": specs.CHECKIN.call(k, v, ["J1", "J2"], 9),
        "attendee_payload": specs.PAYLOAD.call(v, "J", "{}"),
        "attendee_search": specs.SEARCH.call(k, "an", [b"ann", b"anna"], ["ac"], 50),
        "attendee_read": specs.READ.call([k.attendee("<code>").encode(), v.job(b"J")], (b"n", b"state")),
    }


def _header(source: str, field: str) -> list[str]:
    (line,) = [line for line in source.splitlines() if line.startswith(f"-- {field} ")]
    return line.split()[2:]


def test_every_script_has_a_spec_and_its_header_matches_what_the_spec_sends() -> None:
    files = {p.name.removesuffix(".lua") for p in resources.files("attendees").iterdir() if p.name.endswith(".lua")}
    assert files - {"prelude"} == {spec.name for spec in specs.SPECS} == set(_calls())
    assert files - {"prelude"} <= set(default_library().scripts)
    for name, (spec, keys, args) in _calls().items():
        assert spec.name == name
        source = plain_source(name)
        head_keys, head_args = _header(source, "KEYS"), _header(source, "ARGV")
        fixed = [token for token in head_keys if not token.endswith("...")]
        named = [key.decode().removeprefix("badge:{v}:") for key in keys]
        for key, token in zip(named, fixed, strict=False):
            assert re.fullmatch(re.sub(r"<\w+>", ".+", token), key), (name, key, token)
        assert len(named) >= len(fixed) and (len(named) == len(fixed) or head_keys[-1].endswith("...")), name
        assert all(key.startswith(b"badge:{v}:") for key in keys), name
        fixed_args = [token for token in head_args if not token.endswith("...")]
        assert len(args) >= len(fixed_args), (name, args, head_args)
        used = {int(n) for n in re.findall(r"ARGV\[(\d+)\]", source)}
        assert not used or max(used) <= max(len(head_args), len(args)), name


def test_put_passes_a_postings_key_for_each_word_of_the_old_and_new_terms() -> None:
    _, keys, _ = _calls()["attendee_put"]
    assert [key.decode().removeprefix("badge:{v}:") for key in keys[8:]] == [
        "attendees:p:ann", "attendees:p:bob", "attendees:p:ann", "attendees:p:acme",
        "preprint:run:night:voids", "done:J:pp",
    ]  # fmt: skip
