"""Recovery: settle whatever this printer's in-flight list holds, from the journal, before taking anything new.

Run by the pull loop at start, after any Redis error, after the Sentinel master moved, after peers declared this agent
dead, and at shutdown. For each held job the journal says what happened to it here: printed (confirm it), maybe sent
(clear the printer's buffer and release it as maybe printed, staff told where), or never sent (print it now; at
shutdown or while the printer is not ready, release it as unsent). It counts what it did (``Recovered``); the pull
loop keeps the counts.

A held job with no journal record was never sent by this process: every record it wrote is in memory. The first run
settles what an earlier process left, whose records may be gone: the unsynced tail after a reboot, or the whole file
(a new or wiped disk, a journal kept in memory, a disk that refused records; agent/journal.py). There Redis tells
(``Store.begun_here``): begin comes before the journal's ``sending`` and the first byte, so a job whose record says
this printer began it may be at the printer or on paper, and one never begun here was not sent. The one begun job
that is not on paper, an agent stopped between begin and ``sending``, is then flagged too: staff look for a badge
that is not there, rather than a second copy going out unflagged.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from agent.journal import Journal
from agent.printer import Printer
from core.logs import kv
from protocol.replies import Source
from protocol.store import Store

log = logging.getLogger("agent")

RECONFIRM_AFTER_FAILOVER = 100  # recent prints confirmed again after the master moved (~ a few seconds of printing)


@dataclass
class Recovered:
    """What one recovery did with the jobs it found held."""

    confirmed: int = 0  # printed before the interruption: confirmed now
    maybe_printed: int = 0  # released as maybe printed (staff told where)
    unsent: int = 0  # released, never sent (stopping, or the printer not ready)
    resumed: int = 0  # never sent: handed to the pull loop to print now


class Recovery:
    def __init__(self, store: Store, journal: Journal, printer: Printer, me: str, location: str, max_attempts: int):
        self.store = store
        self.journal = journal
        self.printer = printer
        self.me = me
        self.location = location
        self.max_attempts = max_attempts
        # True until a run settles what an earlier process left in our in-flight list (see the module doc).
        self.first_run = True

    async def run(
        self,
        resume: Callable[[str], Awaitable[None]],
        done: Recovered,
        *,
        stopping: bool,
        printer_ready: Callable[[], bool],
        drained: Callable[[], bool],
        master_moved: bool,
    ) -> Recovered:
        """Settle our in-flight list; ``resume(job_id)`` prints a held job that was never sent.

        What it did is counted into ``done`` as it goes (and returned): a Redis error part-way through leaves the
        caller the counts up to it.
        """
        store, journal, me, location = self.store, self.journal, self.me, self.location
        # Whose word a print the journal recorded is on: this agent drives one printer, so its driver says (an IPP
        # driver reads it from the printer when it opens). confirm.lua writes it only on a print's first confirm.
        by = self.printer.driver.confirmed_by
        for job_id in await store.inflight(me):
            entry = journal.lookup(job_id)
            if entry is not None and entry.stage == "printed":
                kind, _ = await store.confirm(me, location, job_id, entry.epoch, confirmed_by=by)
                await journal.append(job_id, entry.epoch, "closed")
                done.confirmed += 1
                log.warning("confirmed a badge printed before the interruption", extra=kv(job=job_id, confirm=kind))
            elif (entry is not None and entry.stage in ("sending", "unknown")) or (
                entry is None and await self._unrecorded(job_id)
            ):
                if entry is not None:
                    why = "interrupted while printing"
                elif journal.after_reboot:
                    why = "the agent's computer restarted while it held this badge"
                else:
                    why = "begun here, and no journal record of it (the journal was lost, or the agent stopped)"
                if entry is not None and entry.stage == "sending":
                    await journal.append(job_id, entry.epoch, "unknown")  # flagged again after a failover (below)
                await self.printer.clear_buffer()
                await store.release(me, location, job_id, "unknown", why, self.max_attempts)
                if entry is not None:
                    await journal.append(job_id, entry.epoch, "closed")
                done.maybe_printed += 1
                log.warning("released a badge that may have printed", extra=kv(job=job_id, because=why))
            elif stopping or not printer_ready() or await self._drained(drained):
                why = "agent stopped before sending" if stopping else "printer not ready"
                if not stopping and printer_ready():
                    why = "drained by an operator"
                await store.release(me, location, job_id, "unsent", why, self.max_attempts)
                done.unsent += 1
            else:
                log.info("resuming a job found in in-flight", extra=kv(job=job_id))
                done.resumed += 1
                await resume(job_id)
        # Journal entries for jobs no longer in our in-flight list were settled elsewhere (reclaimed by a peer).
        held = set(await store.inflight(me))
        for open_entry in journal.open_entries():
            if open_entry.job_id not in held and open_entry.stage == "printed":
                await store.confirm(me, location, open_entry.job_id, open_entry.epoch, confirmed_by=by)
            if open_entry.job_id not in held:
                await journal.append(open_entry.job_id, open_entry.epoch, "closed")
        if (master_moved or self.first_run) and not stopping:
            # A failover can lose release's maybe-printed flag (docs/redis.md): a peer's copy of the job would then
            # come out unflagged. Flagging our recent unknown outcomes again is a no-op where Redis kept the flag. An
            # earlier process may have seen the master move and stopped before this: the first run flags them too.
            for job_id, epoch in journal.recent_unknown(RECONFIRM_AFTER_FAILOVER):
                await store.reflag(me, location, job_id, epoch)
        first_run = self.first_run
        if first_run:
            # What in-flight held from an earlier process (across a reboot) is settled; trust the journal from now.
            self.first_run = False
            journal.earlier_work_settled()
        if (master_moved or first_run) and not stopping:
            # A failover can lose a confirm together with the take before it (docs/redis.md): the job is back in the
            # pool of the new master and a peer would print it again, unflagged. Confirming our recent prints again
            # is a no-op where Redis kept them; otherwise it settles the job, or flags the peer's copy as a duplicate.
            # As for the flags above, an earlier process may have stopped before it saw the master move.
            for job_id, epoch in journal.recent_prints(RECONFIRM_AFTER_FAILOVER):
                await store.confirm(me, location, job_id, epoch, confirmed_by=by)
        return done

    async def _unrecorded(self, job_id: str) -> bool:
        """True when a held job without a journal record may have been sent by an earlier process (module doc).

        After a reboot every such job counts: the journal's tail may be gone, and a "sending" record younger than the
        last sync with it. Otherwise Redis's record of the job decides: begun here and not settled since.
        """
        if not self.first_run:
            return False
        return self.journal.after_reboot or await self.store.begun_here(self.me, job_id)

    async def _drained(self, drained: Callable[[], bool]) -> bool:
        """True when an operator drained this printer: a held job never sent goes back rather than being begun.

        The job may have reached in-flight after the drain (a blocking pop whose reply was lost with the connection):
        ``take`` reads the order (and otherwise only answers with the job held), since the heartbeat may not know yet.
        """
        if drained():
            return True
        taken = await self.store.take(self.me)
        return taken is not None and taken.source is Source.DRAINED
