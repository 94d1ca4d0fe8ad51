"""``python -m pretix_sync --pretix URL --event ORG/EV --token-file F --checkin-list ID [--follow]``: the sync."""

from pretix_sync.cli import sync

sync()
