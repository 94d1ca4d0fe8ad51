"""pretix's settings as the test server runs them: pretix's own, with SQLite set up as a busy server needs it.

Loaded by pretix's interpreter (``DJANGO_SETTINGS_MODULE``; this folder is on its path), never by the tests'.
pretix.cfg has no options for SQLite's connection, so they are set here:

* ``transaction_mode`` IMMEDIATE: a transaction takes the write lock when it begins, so two requests writing at
  once wait for each other (up to ``timeout`` seconds) instead of one failing with "database is locked" when its
  read turns into a write. Only the transactions pretix opens (its writes) begin so: the API's listings run outside
  one and never wait for the lock.
* ``synchronous=NORMAL``: in WAL mode (the database file is switched to it when the server is made), commits do not
  wait for the disk; a test database lost in a power cut does not matter.
"""

from pretix.settings import *  # noqa: F403
from pretix.settings import DATABASES

DATABASES["default"]["OPTIONS"].update(
    {"transaction_mode": "IMMEDIATE", "timeout": 30, "init_command": "PRAGMA synchronous=NORMAL"}
)
