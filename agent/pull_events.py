"""What the pull loop reports as it goes, and who listens: the agent's metrics (agent/metrics.py) and its log.

The loop calls one method of its sink per thing that happened to a badge; it neither counts nor logs itself. A
listener overrides the methods it cares about (each is a no-op here); ``Fanout`` hands every report to each of its
listeners in turn. None of them changes anything the next badge depends on.
"""

from __future__ import annotations

import logging

from core.logs import kv
from drivers.base import PrintResult
from protocol.replies import BeginKind, Begun, ConfirmKind, ReleaseKind
from protocol.specs import ReleaseOutcome

log = logging.getLogger("agent")


class PullEvents:
    def skipped(self, job_id: str, begun: Begun) -> None:
        """``begin`` said not to print this job (done, not ours, dead, dropped)."""

    def confirmed_again(self, job_id: str, confirm: ConfirmKind) -> None:
        """The job came back after Redis lost our confirm: confirmed again, not reprinted."""

    def dead_lettered(self, job_id: str, reason: str) -> None:
        """The job cannot be read or drawn: sent to the DLQ at once."""

    def unsent(self, job_id: str, why: str, released: ReleaseKind) -> None:
        """Released before its first byte (stopping, the lease ran out, or the badge before it did not print)."""

    def printed(self, job_id: str, attempt: int, confirm: ConfirmKind, maybe_where: str, seconds: float) -> None:
        """The printer proved the badge and Redis recorded it."""

    def not_printed(
        self, job_id: str, outcome: ReleaseOutcome, result: PrintResult, released: ReleaseKind, seconds: float
    ) -> None:
        """Sent (or tried) but not proved printed: handed back as ``outcome``."""

    def stole(self, job_id: str) -> None:
        """Idle, took a pinned job its printer left waiting."""

    def drawn_ahead(self, used: bool) -> None:
        """A badge drawn while the previous one printed was used, or wasted (another job came next)."""


class Fanout(PullEvents):
    """Every report to each listener, in the order given."""

    def __init__(self, *listeners: PullEvents) -> None:
        self.listeners = listeners

    def skipped(self, job_id: str, begun: Begun) -> None:
        for listener in self.listeners:
            listener.skipped(job_id, begun)

    def confirmed_again(self, job_id: str, confirm: ConfirmKind) -> None:
        for listener in self.listeners:
            listener.confirmed_again(job_id, confirm)

    def dead_lettered(self, job_id: str, reason: str) -> None:
        for listener in self.listeners:
            listener.dead_lettered(job_id, reason)

    def unsent(self, job_id: str, why: str, released: ReleaseKind) -> None:
        for listener in self.listeners:
            listener.unsent(job_id, why, released)

    def printed(self, job_id: str, attempt: int, confirm: ConfirmKind, maybe_where: str, seconds: float) -> None:
        for listener in self.listeners:
            listener.printed(job_id, attempt, confirm, maybe_where, seconds)

    def not_printed(
        self, job_id: str, outcome: ReleaseOutcome, result: PrintResult, released: ReleaseKind, seconds: float
    ) -> None:
        for listener in self.listeners:
            listener.not_printed(job_id, outcome, result, released, seconds)

    def stole(self, job_id: str) -> None:
        for listener in self.listeners:
            listener.stole(job_id)

    def drawn_ahead(self, used: bool) -> None:
        for listener in self.listeners:
            listener.drawn_ahead(used)


class LogEvents(PullEvents):
    """The agent's log lines about badges."""

    def skipped(self, job_id: str, begun: Begun) -> None:
        # dead, dropped: the record or the list contradicted the protocol (begin.lua): staff must look.
        (log.warning if begun.kind in (BeginKind.DEAD, BeginKind.DROPPED) else log.info)(
            "not printing", extra=kv(job=job_id, because=begun.kind, detail=begun.detail)
        )

    def confirmed_again(self, job_id: str, confirm: ConfirmKind) -> None:
        log.warning(
            "job came back after Redis lost its confirm; confirmed again, not reprinted",
            extra=kv(job=job_id, confirm=confirm),
        )

    def dead_lettered(self, job_id: str, reason: str) -> None:
        log.error("job dead-lettered", extra=kv(job=job_id, reason=reason))

    def printed(self, job_id: str, attempt: int, confirm: ConfirmKind, maybe_where: str, seconds: float) -> None:
        log.info("printed", extra=kv(job=job_id, attempt=attempt, confirm=confirm, maybe_also_at=maybe_where))

    def not_printed(
        self, job_id: str, outcome: ReleaseOutcome, result: PrintResult, released: ReleaseKind, seconds: float
    ) -> None:
        log.warning("badge not confirmed; released", extra=kv(job=job_id, outcome=result.outcome, reason=result.reason))

    def stole(self, job_id: str) -> None:
        log.info("took a pinned job its printer left waiting", extra=kv(job=job_id))
