"""Staff's steps in words: what a reprint's or a cancel's reply tells staff, and cancelling every job of a token.

Shared by the command line (cli/commands/staff.py) and the intake's staff routes (intake/app.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from protocol.codec import dec, enc
from protocol.replies import CancelKind, Cancelled, Reprinted, ReprintKind
from protocol.store import Store


def reprint_message(job_id: str, reply: Reprinted, cap: int) -> tuple[bool, str]:
    """(ok, what to tell staff) for a reprint's reply; shared by the CLI and the intake service."""
    kind, detail = reply
    if kind is ReprintKind.REPRINT:
        return True, f"{job_id}: reprint {detail} queued at the front of the pool"
    if kind is ReprintKind.NO_JOB:
        return False, f"no job {job_id!r}"
    if kind is ReprintKind.CAP:
        return False, f"{job_id} was reprinted {detail} time(s) already (cap {cap}); force to print it again anyway"
    return False, f"{job_id} is {detail}: only a printed or dead job can be reprinted"


def cancel_message(job_id: str, reply: Cancelled) -> tuple[bool, str]:
    kind, detail = reply
    if kind is CancelKind.CANCELLED:
        return True, f"{job_id}: cancelled"
    if kind is CancelKind.NO_JOB:
        return False, f"no job {job_id!r}"
    if detail == "taken":
        return False, f"{job_id} was just taken by a printer: it cannot be cancelled any more"
    return False, f"{job_id} is {detail}: only a queued job can be cancelled"


@dataclass
class TokenCancel:
    """What cancelling every queued job of one intake token did."""

    cancelled: list[str] = field(default_factory=list)
    #: Jobs that were not queued any more: (job id, its state or "taken").
    refused: list[tuple[str, str]] = field(default_factory=list)


async def cancel_token_jobs(store: Store, token: str, by: str) -> TokenCancel:
    """Cancel every queued job the intake token ``token`` created (its set ``Keys.owned``), one cancel step each.

    Jobs that were printing or final are reported and left; every job that is no longer outstanding leaves the set.
    """
    key = enc(store.keys.owned(token))
    done = TokenCancel()
    for job_id in sorted(dec(m) for m in await store.redis.smembers(key)):
        reply = await store.cancel(job_id, by)
        if reply.kind is CancelKind.CANCELLED:
            done.cancelled.append(job_id)
        elif reply.kind is not CancelKind.NO_JOB:
            done.refused.append((job_id, reply.detail))
        if reply.kind is not CancelKind.REFUSED or reply.detail not in ("taken", "printing", "changing"):
            await store.redis.srem(key, enc(job_id))
    return done
