"""The pre-print runs' scripts: each is a function of the venue's library with a spec, and each header names the
KEYS and ARGV its spec sends, every key under the venue's hash tag."""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

from attendees.keys import AttendeeKeys
from preprint import specs
from preprint.keys import PreprintKeys
from protocol.keys import EncodedKeys, Keys
from protocol.library import default_library
from protocol.scripts import plain_source
from protocol.specs import ScriptCall


def _calls() -> dict[str, ScriptCall[Any]]:
    k, a, v = PreprintKeys("v"), AttendeeKeys("v"), EncodedKeys(Keys("v"))
    return {
        "preprint_run": specs.RUN.call(k, "r", "family", 200, "[]", "desk", "{}"),
        "preprint_box": specs.BOX.call(k, a, "r", 1, "A", "B", [("c1", "1", "{}"), ("c2", "1", "{}")], v.events, 100),
        "preprint_listed": specs.LISTED.call(k, "r"),
        "preprint_unbox": specs.UNBOX.call(k, a, "r", 1, ["c1"]),
        "preprint_rm": specs.RM.call(k, "r"),
        "preprint_done": specs.DONE.call(k, a, "r", 1, ["c1"], v.events, 100),
        "preprint_state": specs.STATE.call(k, "r", ["planned"], "printing", "pool"),
        "preprint_void_layout": specs.VOID_LAYOUT.call(k, a, v, "r", "default", 2, [("c1", "J1")]),
        "preprint_handover": specs.HANDOVER.call(k, a, v, "c1", "r", "J1", "desk-1", 100, "hall-a"),
        "preprint_undrawn": specs.UNDRAWN.call(k, a, "r", "c1", "no font"),
        "preprint_at_door": specs.AT_DOOR.call(k, a, v, "c1", "r", "J1"),
    }


def _header(source: str, field: str) -> list[str]:
    (line,) = [line for line in source.splitlines() if line.startswith(f"-- {field} ")]
    return line.split()[2:]


def test_every_script_has_a_spec_and_its_header_matches_what_the_spec_sends() -> None:
    files = {p.name.removesuffix(".lua") for p in resources.files("preprint").iterdir() if p.name.endswith(".lua")}
    assert files == {spec.name for spec in specs.SPECS} == set(_calls())
    assert files <= set(default_library().scripts)
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
