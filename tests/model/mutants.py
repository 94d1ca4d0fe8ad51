"""Deliberate protocol mutations for ``scripts/verify --mutants``: each breaks one rule in a copy of the scripts.

A mutant is one textual change to one ``.lua`` file: ``find`` must occur exactly once (verify stops and says so when
a script changed under it), and the model must fail on the result.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str
    find: str
    replace: str
    breaks: str


MUTANTS = (
    Mutant(
        "begin-without-fence",
        "begin.lua",
        "if not redis.call('LPOS', KEYS[1], id) then\n  return {'not_owner'}\nend",
        "",
        "begin prints a job its printer no longer holds",
    ),
    Mutant(
        "confirm-without-nx",
        "confirm.lua",
        "redis.call('SET', KEYS[3], me, 'NX')",
        "redis.call('SET', KEYS[3], me)",
        "a second confirmed copy is not told apart from the first",
    ),
    Mutant(
        "reclaim-without-flag",
        "reclaim.lua",
        "redis.call('HSET', KEYS[10], 'maybe_printed', 1, 'maybe_printed_where', prior)",
        "",
        "a job reclaimed mid-print is not flagged maybe printed",
    ),
    Mutant(
        "take-ignores-drain",
        "take.lua",
        "if redis.call('GET', KEYS[4]) == 'drain' then",
        "if false then",
        "a drained printer takes new work",
    ),
    Mutant(
        "release-unknown-unflagged",
        "release.lua",
        "redis.call('HSET', KEYS[2], 'maybe_printed', 1, 'maybe_printed_where', where)",
        "",
        "an unknown outcome is released without saying where",
    ),
    Mutant(
        "confirm-keeps-pool-copy",
        "confirm.lua",
        "  redis.call('LREM', KEYS[5], 0, id)\n",
        "",
        "a reclaimed job confirmed late stays in the pool too",
    ),
    Mutant(
        "reprint-keeps-done",
        "reprint.lua",
        "redis.call('DEL', KEYS[2])",
        "",
        "a reprint leaves the completion gate of the last round",
    ),
    Mutant(
        "reprint-keeps-stale-copy",
        "reprint.lua",
        "for i = 7, #KEYS do\n  redis.call('LREM', KEYS[i], 0, id)\nend\n",
        "",
        "a reprint leaves a printed job's stale id in a peer's in-flight list",
    ),
    Mutant(
        "enqueue-unindexed",
        "prelude.lua",
        "redis.call('ZADD', pinned, now, pinned_member(printer, id))",
        "",
        "a pinned job is missing from the pinned index",
    ),
    Mutant(
        "zone-hand-on-unindexed",
        "prelude.lua",
        "    redis.call('ZADD', index, since, pinned_member(to, id))\n",
        "",
        "a zone's badge handed on to a printer of its zone is missing from the pinned index",
    ),
    Mutant(
        "confirm-uncounted",
        "confirm.lua",
        "redis.call('HINCRBY', KEYS[6], 'printed', 1)",
        "",
        "a printed badge is not counted in the stats",
    ),
    Mutant(
        "release-keeps-inflight",
        "release.lua",
        "redis.call('LREM', KEYS[1], 0, id)\nif redis.call('EXISTS', KEYS[3]) == 1 then",
        "if redis.call('EXISTS', KEYS[3]) == 1 then",
        "a released job stays in the printer's in-flight list too",
    ),
    Mutant(
        "group-back-held-last",
        "group_back.lua",
        "redis.call('RPUSH', KEYS[3], held)",
        "redis.call('LPUSH', KEYS[3], held)",
        "a box handed on puts its badge in hand last, out of order",
    ),
    Mutant(
        "group-back-without-flag",
        "group_back.lua",
        "redis.call('HSET', job, 'maybe_printed', 1, 'maybe_printed_where', prior)",
        "",
        "a box handed on mid-print does not flag its badge in hand",
    ),
    Mutant(
        "take-box-behind-box",
        "take.lua",
        "if KEYS[6] and not held then",
        "if KEYS[6] then",
        "a box's badge waits at the printer behind another of the box",
    ),
)
