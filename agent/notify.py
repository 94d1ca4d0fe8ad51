"""systemd's notify protocol (``Type=notify``): READY, STATUS, WATCHDOG, STOPPING over ``$NOTIFY_SOCKET``.

Hand-written rather than a dependency: the protocol is one datagram of ``KEY=value`` lines to a unix socket
(sd_notify(3)), and the PyPI ``sdnotify`` package is unmaintained since 2017 and sends with a blocking socket.
Outside systemd (no ``$NOTIFY_SOCKET``) everything here is a no-op.

The watchdog is fed only while the agent's loops really progress (``agent.liveness.stale_loops``): a pull loop stuck
on a hung driver stops the pings and systemd restarts the agent. A process whose event loop is blocked stops them
too, because the pings come from a task on that same loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable

from agent.gate import sleep_unless
from core.logs import kv
from protocol.state import Snapshot

log = logging.getLogger("agent.notify")

#: How long start-up may take beyond systemd's TimeoutStartSec each time we say we are still alive but not ready
#: (waiting for Redis at boot is normal at a venue: the Redis host may boot after the Pis).
EXTEND_START_USEC = 30_000_000


class Notifier:
    """Sends sd_notify datagrams. ``enabled`` is False outside systemd."""

    def __init__(self, environ: dict[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        path = env.get("NOTIFY_SOCKET", "")
        # "@name" is a socket in the abstract namespace (sd_notify(3)).
        self.address = "\0" + path[1:] if path.startswith("@") else path
        self.enabled = bool(path)
        self.watchdog_sec: float | None = None
        usec, pid = env.get("WATCHDOG_USEC", ""), env.get("WATCHDOG_PID", "")
        # WATCHDOG_PID names the process that must ping; a child that inherited the environment must not.
        if usec.isdigit() and int(usec) > 0 and (not pid or pid == str(os.getpid())):
            self.watchdog_sec = int(usec) / 1_000_000
        self._sock: socket.socket | None = None
        self._failing = False

    def send(self, **fields: str) -> bool:
        """Send ``KEY=value`` lines (``send(READY="1", STATUS="...")``). True when the datagram went out."""
        if not self.enabled:
            return False
        if self._sock is None:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            # Never block the event loop on a full socket queue: a lost notification is retried next tick.
            self._sock.setblocking(False)
        text = "\n".join(f"{key}={value}" for key, value in fields.items())
        try:
            self._sock.sendto(text.encode("utf-8", "replace"), self.address)
        except OSError as exc:
            if not self._failing:  # once per run of failures: the journal must not fill with the same line
                log.warning("sd_notify failed", extra=kv(error=exc))
            self._failing = True
            return False
        self._failing = False
        return True

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def status_line(snap: Snapshot) -> str:
    """One line for ``systemctl status``: state, why, and the count so far."""
    from agent.liveness import problems

    line = f"{snap.state}; printed {snap.printed}"
    if snap.printing:
        line += f"; printing {snap.printing}"
    reasons = problems(snap)
    if reasons:
        line += "; " + "; ".join(reasons)
    return line


async def supervise(snapshot: Callable[[], Snapshot], stopping: asyncio.Event, notifier: Notifier) -> None:
    """The agent's systemd task: READY after the first acknowledged heartbeat, STATUS on change, WATCHDOG while alive.

    Runs until the agent's shutdown cancels it; says STOPPING as soon as ``stopping`` is set.
    """
    from agent.liveness import stale_loops

    tick = 1.0 if notifier.watchdog_sec is None else min(1.0, notifier.watchdog_sec / 3)
    sent_once: set[str] = set()
    last_status = ""
    was_stale: set[str] = set()
    try:
        while True:
            fields: dict[str, str] = {}
            snap = snapshot()
            if snap.stopping:
                if "stopping" not in sent_once:
                    sent_once.add("stopping")
                    fields.update(STOPPING="1", STATUS="stopping: finishing the badge in progress")
            else:
                if "ready" not in sent_once and snap.beating_since is not None:
                    sent_once.add("ready")
                    fields["READY"] = "1"
                    log.info("ready", extra=kv(printer=snap.printer))
                status = status_line(snap)
                if status != last_status:
                    fields["STATUS"] = status
                    last_status = status
            stale = stale_loops(snap)
            if stale.keys() != was_stale:
                if stale:
                    log.error("loops stalled; not feeding the watchdog", extra=kv(loops=",".join(sorted(stale))))
                else:
                    log.warning("loops alive; feeding the watchdog")
                was_stale = set(stale)
            if not stale:
                # Fed while stopping too: the badge in progress may take its whole grace period.
                if notifier.watchdog_sec is not None:
                    fields["WATCHDOG"] = "1"
                if "ready" not in sent_once:
                    # Alive but not ready yet (Redis not reached): tell systemd not to give up on start-up.
                    fields["EXTEND_TIMEOUT_USEC"] = str(EXTEND_START_USEC)
            if fields:
                notifier.send(**fields)
            if stopping.is_set():
                await asyncio.sleep(tick)
            else:
                # Wake at once when a stop is asked: STOPPING must go out before shutdown cancels this task.
                await sleep_unless(stopping, tick)
    finally:
        notifier.close()
