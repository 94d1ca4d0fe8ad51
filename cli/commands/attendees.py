"""``badge-agent attendees``: the attendee list's commands (cli/commands/attendee_list.py), with ``sync`` (from
pretix) beside them (cli/commands/pretix_sync.py)."""

from cli.commands.attendee_list import attendees
from cli.commands.pretix_sync import sync

attendees.add_command(sync)

__all__ = ["attendees"]
