"""The edge daemon, one per badge printer (``badge-agent run``), and the project's version.

``runtime`` builds the agent's parts and runs their tasks; ``pull`` is the loop that takes, begins, prints and
confirms one badge at a time (with ``gate``, ``draw_ahead``, ``printer``, ``pull_events`` and ``recovery``);
``journal`` is the local record that lets a restart confirm instead of reprinting; ``heartbeat`` and ``sweep`` keep
its lease and reclaim dead peers; ``device`` watches the printer's health; ``http_app``, ``metrics``, ``liveness`` and
``notify`` answer /healthz, /metrics and systemd. It reaches Redis only through the venue protocol (protocol/) and
the printer only through a driver (drivers/); the commands that start it live in cli/.
"""

__version__ = "0.1.0"
