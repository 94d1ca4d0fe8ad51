"""``python -m pretix_sync --pretix URL --event ORG/EV --token-file F --checkin-list ID [--follow]``: read a pretix
check-in list as attendee records, written as JSON lines, touching no Redis (cli/commands/pretix_read.py); writing
them into the venue's list is ``badge-agent attendees sync``."""

from cli.commands.pretix_read import sync

sync()
