"""The ``badge-agent`` command line, the top layer: every command, and what only commands need.

``main`` is the click group and its shared options (``-c``, ``--redis``, ``--venue``) and exit codes, with ``run``
and ``check-config``; ``commands/`` one module per area, imported only when its command runs (docs/cli.md);
``registration_files`` reads attendee exports (CSV, JSON lines, XLSX) for ``enqueue``, ``preview`` and ``attendees
import``; ``redis_server`` starts the private Redis of the demo and the tests; ``data/`` holds the demo's attendees.
"""
