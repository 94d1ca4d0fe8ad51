"""``badge-agent attendees``: the attendee list's commands live with the list (attendees/cli.py); ``sync`` (from
pretix) with the pretix sync (pretix_sync/command.py)."""

from attendees.cli import attendees
from pretix_sync.command import sync

attendees.add_command(sync)

__all__ = ["attendees"]
