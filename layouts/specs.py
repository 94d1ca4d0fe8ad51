"""One spec per Lua script of the badge layouts (``layout_*.lua``, functions of the venue's library, as
protocol/specs.py does for the protocol's): the only place each script's KEYS and ARGV are put in order.

The three scripts change the venue's layouts: ``badge-agent acl`` grants them to no agent and no role, so only a
Redis admin's ``badge-agent layout set``, ``layout rm`` and ``layout rules`` may call them.
"""

from __future__ import annotations

from typing import Any

from layouts.keys import LayoutKeys
from protocol.codec import dec, enc
from protocol.specs import ScriptCall, Spec


class LayoutSet(Spec[tuple[int, int]]):
    """(the layout's new version, the venue's layouts version)."""

    name = "layout_set"

    def call(
        self, k: LayoutKeys, name: str, by: str, maxlen: int, variants: list[tuple[str, str]]
    ) -> ScriptCall[tuple[int, int]]:
        """``variants``: (stock, the stored document) of each variant, in the order of their keys."""
        keys = [enc(k.layouts), enc(k.layouts_version), enc(k.events), *(enc(k.layout(name, s)) for s, _ in variants)]
        args: list[bytes | int] = [enc(name), enc(by), maxlen, enc(k.layouts_changed)]
        for stock, document in variants:
            args += [enc(stock), enc(document)]
        return (self, keys, args)

    def parse(self, reply: Any) -> tuple[int, int]:
        return int(reply[0]), int(reply[1])


class LayoutRm(Spec[tuple[bool, list[str]]]):
    """(removed, the rules removed with it)."""

    name = "layout_rm"

    def call(
        self, k: LayoutKeys, name: str, by: str, maxlen: int, stocks: tuple[str, ...]
    ) -> ScriptCall[tuple[bool, list[str]]]:
        keys = [enc(k.layouts), enc(k.layouts_version), enc(k.events), enc(k.layout_rules)]
        keys += [enc(k.layout(name, s)) for s in stocks]
        return (self, keys, [enc(name), enc(by), maxlen, enc(k.layouts_changed)])

    def parse(self, reply: Any) -> tuple[bool, list[str]]:
        return bool(int(reply[0])), [dec(rule) for rule in reply[1]]


class LayoutRule(Spec[int]):
    """1 when the rules changed, 0 when not, -1 when the layout named is not set."""

    name = "layout_rule"

    def call(self, k: LayoutKeys, rule: str, name: str, by: str, maxlen: int) -> ScriptCall[int]:
        keys = [enc(k.layout_rules), enc(k.layouts_version), enc(k.events), enc(k.layouts)]
        return (self, keys, [enc(rule), enc(name), enc(by), maxlen, enc(k.layouts_changed)])

    def parse(self, reply: Any) -> int:
        return int(reply)


SET = LayoutSet()
RM = LayoutRm()
RULE = LayoutRule()
SPECS: tuple[Spec[Any], ...] = (SET, RM, RULE)
#: The functions only an admin calls (``badge-agent acl`` leaves them out of every user it makes).
ADMIN_ONLY: tuple[str, ...] = tuple(spec.name for spec in SPECS)
