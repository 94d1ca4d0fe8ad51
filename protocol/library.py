"""The Redis Functions library: every Lua script of the registered packages, one function each, loaded once.

On Redis >= 7 clients call the scripts with ``FCALL <library>_<script>``; no user needs ``EVAL`` (with which any
credential could run a script that writes once and loops forever: Redis then answers BUSY to everyone and only
``SHUTDOWN NOSAVE`` stops it). Loading a library takes ``FUNCTION LOAD``, an admin's command: ``badge-agent
functions load`` runs it, and a client whose user may load (a Redis without ACL users: the demo, the tests) loads
it by itself on its first "function not found". Redis keeps functions in its RDB and AOF and replicates them.

The library's name carries its version, a hash of everything in it (``badge_<12 hex>``): any change to a script
is a new library whose functions have new names, so an agent never calls a function of another version, and an
older agent keeps its own library while a newer one is loaded next to it.

The protocol's own scripts come first; a feature adds its own by naming its package in the entry-point group
``badge_agent.scripts`` (pyproject.toml), so the protocol names no feature: every ``*.lua`` file in such a package
is a script (its spec, a ``specs.Spec`` subclass, names it), and its ``prelude.lua``, if any, adds helpers every
script may call. ``build`` makes a library from any directories of .lua files (a test's modified copy, say).

A script that only reads says so in a header line, ``-- flags: no-writes``: Redis then runs it on a replica and
while it is out of memory (``maxmemory``), and refuses any write it tries. A step a printer (or the delivery of its
prints) cannot do without says ``-- flags: allow-oom``: it still runs when the venue's Redis is over ``maxmemory``,
so a full Redis refuses new work from desks and by hand while the printers finish theirs (docs/redis.md, "Memory").
Every other script is registered without flags (Redis's default: it may write, and is refused over maxmemory).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from importlib.metadata import entry_points
from pathlib import Path

#: The package of the protocol's own scripts, always first in the library.
PROTOCOL_PACKAGE = "protocol"
#: The entry-point group in which features name the packages of their scripts.
ENTRY_POINT_GROUP = "badge_agent.scripts"

PRELUDE = "prelude.lua"
#: The function flags a script may ask for in its header (``-- flags: no-writes``).
FLAGS = frozenset({"no-writes", "allow-oom"})

_FLAGS_LINE = re.compile(r"^-- flags: *(.*)$", re.MULTILINE)

_HELPER = re.compile(r"^local function (\w+)\(", re.MULTILINE)


class LibraryError(ValueError):
    """The .lua files cannot make one library (two scripts or helpers of one name, a name Redis refuses)."""


@dataclass(frozen=True)
class Library:
    """One version of the library: its name, its ``FUNCTION LOAD`` text, and each script as plain Lua."""

    name: str
    code: str
    #: script name -> the script with the helpers it calls in front: what Redis 6.2 runs with EVAL, and what
    #: ``badge-agent acl`` reads the commands of one function from
    sources: Mapping[str, str]
    #: script name -> the function flags its header asks for (``no-writes`` for a script that only reads)
    flags: Mapping[str, frozenset[str]]

    def function(self, script: str) -> str:
        """The function name of one script in this library."""
        return f"{self.name}_{script}"

    @property
    def version_function(self) -> str:
        """A read-only function answering the library's name: the probe that tells whether it is loaded."""
        return self.function("version")

    @property
    def scripts(self) -> tuple[str, ...]:
        return tuple(self.sources)


def helpers(prelude: str) -> dict[str, str]:
    """The functions of a prelude by name, each with the comment above it (blocks apart by a blank line)."""
    found: dict[str, str] = {}
    for block in prelude.split("\n\n"):
        match = _HELPER.search(block)
        if match is not None:
            found[match.group(1)] = block.strip("\n") + "\n"
    return found


def _with_helpers(text: str, shared: Mapping[str, str]) -> str:
    """A script with the helpers it calls, directly or through another helper, in front (in prelude order)."""
    used: set[str] = set()
    pending = [text]
    while pending:
        body = pending.pop()
        for name, helper in shared.items():
            if name not in used and re.search(rf"\b{name}\(", body):
                used.add(name)
                pending.append(helper)
    return "".join(helper for name, helper in shared.items() if name in used) + text


def script_flags(name: str, text: str) -> frozenset[str]:
    """The flags a script's header asks for; LibraryError for one Redis does not know here."""
    found: set[str] = set()
    for line in _FLAGS_LINE.findall(text):
        found.update(flag for flag in re.split(r"[\s,]+", line) if flag)
    unknown = found - FLAGS
    if unknown:
        known = ", ".join(sorted(FLAGS))
        raise LibraryError(f"{name}.lua: unknown function flag(s) {', '.join(sorted(unknown))} (known: {known})")
    return frozenset(found)


def _register(lib: str, name: str, text: str, flags: frozenset[str]) -> str:
    if not flags:
        return f"\nredis.register_function('{lib}_{name}', function(KEYS, ARGV)\n{text}end)\n"
    listed = ", ".join(f"'{flag}'" for flag in sorted(flags))
    return (
        f"\nredis.register_function{{function_name='{lib}_{name}', callback=function(KEYS, ARGV)\n{text}end,"
        f" flags={{{listed}}}}}\n"
    )


def build(directories: Iterable[Traversable | Path]) -> Library:
    """The library made of every ``*.lua`` file in these directories (each one's ``prelude.lua`` adds helpers)."""
    shared: dict[str, str] = {}
    scripts: dict[str, str] = {}
    for directory in directories:
        for entry in sorted(directory.iterdir(), key=lambda e: e.name):
            if not entry.name.endswith(".lua"):
                continue
            text = entry.read_text(encoding="utf-8")
            if entry.name == PRELUDE:
                for name, helper in helpers(text).items():
                    if name in shared:
                        raise LibraryError(f"{directory}: helper {name} is defined twice")
                    shared[name] = helper
                continue
            name = entry.name.removesuffix(".lua")
            if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or name == "version":
                raise LibraryError(f"{directory}/{entry.name}: a script's name is lowercase letters, digits and _")
            if name in scripts:
                raise LibraryError(f"{directory}/{entry.name}: a script of this name is in the library already")
            scripts[name] = text if text.endswith("\n") else text + "\n"
    sources = {name: _with_helpers(text, shared) for name, text in scripts.items()}
    flags = {name: script_flags(name, text) for name, text in scripts.items()}
    body = "".join(shared.values()) + "".join(
        _register("@LIB@", name, text, flags[name]) for name, text in scripts.items()
    )
    name = "badge_" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:12]
    code = (
        f"#!lua name={name}\n"
        "-- The badge-agent venue protocol (protocol/library.py): one function per script.\n"
        + body.replace("@LIB@", name)
        + f"\nredis.register_function{{function_name='{name}_version', callback=function() return '{name}' end,"
        " flags={'no-writes'}}\n"
    )
    return Library(name, code, sources, flags)


def script_packages() -> tuple[str, ...]:
    """The packages whose scripts make the library: the protocol's, then each feature's (by entry-point name)."""
    features = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
    return (PROTOCOL_PACKAGE, *(e.value for e in features))


@functools.cache
def default_library() -> Library:
    """The library of the packages in ``script_packages()``, as installed."""
    return build(resources.files(package) for package in script_packages())
