"""How strings travel to and from Redis.

Job ids are handled as ``str`` but travel as bytes with ``surrogateescape``, so even a non-UTF-8 id pushed into the
pool by hand round-trips exactly and can be dead-lettered instead of wedging the agent on a decode error.
"""

from __future__ import annotations


def enc(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def dec(raw: bytes | str | int | None) -> str:
    if raw is None:
        return ""
    if isinstance(raw, bytes):
        return raw.decode("utf-8", "surrogateescape")
    return str(raw)
