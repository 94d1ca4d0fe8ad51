"""Staff operations from the CLI: ``reprint`` (print a badge again on purpose) and ``cancel`` (withdraw a queued job).

The same protocol steps the intake service's staff routes run (protocol/reprint.lua, cancel.lua).
"""

from __future__ import annotations

import click

from cli.commands.ops import operator
from cli.main import Target, fail, fleet_options, run_async
from protocol.replies import Cancelled, Reprinted
from protocol.staff import TokenCancel, cancel_message, cancel_token_jobs, reprint_message
from protocol.store import Store

REPRINT_CAP = 2  # reprints a job may have before --force is needed (the intake's ``limits.reprint_cap``)


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
