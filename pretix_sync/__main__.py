"""``python -m pretix_sync --pretix URL --event ORG/EV --token-file F --checkin-list ID [--follow]``: the sync."""

from cli.commands.pretix_read import sync

sync()
