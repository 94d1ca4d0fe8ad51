"""Recovery: settle whatever this printer's in-flight list holds, from the journal, before taking anything new.

Run at start, after any Redis error, after the Sentinel master moved, after peers declared this agent dead, and at
shutdown. For each held job the journal says what happened to it here: printed (confirm it), maybe sent (clear the
printer's buffer and release it as maybe printed, staff told where), or never sent (release it, or print it now).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from agent.logs import kv
from agent.printer import clear_buffer
from agent.protocol.replies import Source

if TYPE_CHECKING:
    from agent.pull import PullLoop

log = logging.getLogger("agent")

RECONFIRM_AFTER_FAILOVER = 100  # recent prints confirmed again after the master moved (~ a few seconds of printing)


async def _drained(pull: PullLoop) -> bool:
    """True when an operator drained this printer: a held job never sent goes back rather than being begun.

    The job may have reached in-flight after the drain (a blocking pop whose reply was lost with the connection):
    ``take`` reads the order (and otherwise only answers with the job held), since the heartbeat may not know yet.
    """
    if pull.agent.drained:
        return True
    taken = await pull.store.take(pull.me)
    return taken is not None and taken.source is Source.DRAINED


async def recover(pull: PullLoop, *, stopping: bool, master_moved: bool) -> None:
    agent, store, journal = pull.agent, pull.store, pull.journal
    me, location, max_attempts = pull.me, pull.location, pull.max_attempts
    for job_id in await store.inflight(me):
        entry = journal.lookup(job_id)
        if entry is not None and entry.stage == "printed":
            kind, _ = await store.confirm(me, location, job_id, entry.epoch)
            await journal.append(job_id, entry.epoch, "closed")
            pull.printed += 1
            log.warning("confirmed a badge printed before the interruption", extra=kv(job=job_id, confirm=kind))
        elif (entry is not None and entry.stage == "sending") or (entry is None and journal.after_reboot):
            # No record after a reboot is no proof that nothing was sent: the machine went down since the journal
            # was last written, and a "sending" record younger than the last sync may have gone with it.
            why = "interrupted while printing" if entry else "the agent's computer restarted while it held this badge"
            await clear_buffer(agent.driver, agent.config.printer.driver.io_timeout)
            await store.release(me, location, job_id, "unknown", why, max_attempts)
            if entry is not None:
                await journal.append(job_id, entry.epoch, "closed")
            log.warning("released a badge that may have printed", extra=kv(job=job_id, because=why))
        elif stopping or not agent.device.ready.is_set() or await _drained(pull):
            why = "agent stopped before sending" if stopping else "printer not ready"
            if not stopping and agent.device.ready.is_set():
                why = "drained by an operator"
            await store.release(me, location, job_id, "unsent", why, max_attempts)
        else:
            log.info("resuming a job found in in-flight", extra=kv(job=job_id))
            await pull.handle(job_id, may_take_next=False)
    # Journal entries for jobs no longer in our in-flight list were settled elsewhere (reclaimed by a peer).
    held = set(await store.inflight(me))
    for open_entry in journal.open_entries():
        if open_entry.job_id not in held and open_entry.stage == "printed":
            await store.confirm(me, location, open_entry.job_id, open_entry.epoch)
        if open_entry.job_id not in held:
            await journal.append(open_entry.job_id, open_entry.epoch, "closed")
    journal.after_reboot = False  # what in-flight held across the reboot is settled; trust it from now
    if master_moved and not stopping:
        # A failover can lose a confirm together with the take before it (docs/redis.md): the job is back in the
        # pool of the new master and a peer would print it again, unflagged. Confirming our recent prints again is
        # a no-op where Redis kept them; otherwise it settles the job, or flags the peer's copy as a duplicate.
        for job_id, epoch in journal.recent_prints(RECONFIRM_AFTER_FAILOVER):
            await store.confirm(me, location, job_id, epoch)
