"""The event day's own keys, under the venue's hash tag (protocol/keys.py names ``minutes``, which ``confirm``
writes)."""

from __future__ import annotations

from protocol.keys import Keys


def rolls(venue: str) -> str:
    """Hash: per printer, its last roll change as JSON (labels on the new roll, the printer's prints ever then)."""
    return Keys(venue).prefix + "rolls"


def faults(venue: str) -> str:
    """Hash: per printer in a fault a person must clear, the server time (ms) a reader first saw it there."""
    return Keys(venue).prefix + "faults"
