"""``badge-agent attendees``: the attendee list's commands live with the list (attendees/cli.py)."""

from attendees.cli import attendees

__all__ = ["attendees"]
