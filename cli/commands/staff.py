"""Staff operations from the CLI: ``reprint`` (print a badge again on purpose) and ``cancel`` (withdraw a queued job).

The same protocol steps the intake service's staff routes run (protocol/reprint.lua, cancel.lua).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import click

from cli.commands.ops import operator
from cli.main import Target, fail, fleet_options, run_async
from protocol.codec import dec, enc
from protocol.replies import CancelKind, Cancelled, Reprinted, ReprintKind
from protocol.store import Store

REPRINT_CAP = 2  # reprints a job may have before --force is needed (the intake's ``limits.reprint_cap``)


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


@click.command()
@fleet_options
@click.argument("job_id")
@click.option("--reason", required=True, help="Why (recorded on the job and in the event).")
@click.option("--force", is_flag=True, help=f"Reprint even past the cap ({REPRINT_CAP} per job).")
def reprint(target: Target, job_id: str, reason: str, force: bool) -> None:
    """Print JOB_ID's badge again on purpose (a printed or dead job); never counted as a duplicate."""

    async def go() -> Reprinted:
        redis = target.client()
        try:
            return await Store(redis, target.venue).reprint(job_id, reason, operator(), REPRINT_CAP, force)
        finally:
            await redis.aclose()

    ok, message = reprint_message(job_id, run_async(go()), REPRINT_CAP)
    if not ok:
        fail(message, 1)
    click.echo(message)


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


@click.command()
@fleet_options
@click.argument("job_id", required=False)
@click.option("--token", "token", metavar="NAME", help="Cancel every queued job the intake token NAME created.")
def cancel(target: Target, job_id: str | None, token: str | None) -> None:
    """Withdraw JOB_ID while it is still queued (state becomes cancelled); refused once a printer has it.

    With --token NAME instead: every queued job that intake token created, at once.
    """
    if (job_id is None) == (token is None):
        fail("give a JOB_ID or --token NAME (not both)")
        return
    if token is not None:
        cancel_token(target, token)
        return
    job: str = job_id or ""

    async def go() -> Cancelled:
        redis = target.client()
        try:
            return await Store(redis, target.venue).cancel(job, operator())
        finally:
            await redis.aclose()

    ok, message = cancel_message(job, run_async(go()))
    if not ok:
        fail(message, 1)
    click.echo(message)


def cancel_token(target: Target, token: str) -> None:
    async def go() -> TokenCancel:
        redis = target.client()
        try:
            return await cancel_token_jobs(Store(redis, target.venue), token, operator())
        finally:
            await redis.aclose()

    done = run_async(go())
    for job_id, state in done.refused:
        click.echo(f"{job_id}: left alone, it is {state}")
    click.echo(f"token {token!r}: {len(done.cancelled)} queued job(s) cancelled, {len(done.refused)} left alone")
