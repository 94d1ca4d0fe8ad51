"""Staff actions by hand (docs/venue.md): drain a printer, reclaim a dead one's work, look at and requeue the DLQ."""

from __future__ import annotations

import getpass
import socket

import click
from redis.exceptions import ResponseError

from cli.main import Target, fail, fleet_options, run_async
from core.logs import shown
from protocol.codec import dec, enc
from protocol.replies import Reclaimed, ReclaimKind, RequeueKind
from protocol.store import Store


def operator() -> str:
    """Who did it, for the audit log."""
    try:
        return f"{getpass.getuser()}@{socket.gethostname()}"
    except (OSError, KeyError):
        return "operator"


@click.command()
@fleet_options
@click.argument("printer")
@click.option("--resume", is_flag=True, help="Put a drained printer back in service.")
def drain(target: Target, printer: str, resume: bool) -> None:
    """Take PRINTER out of service: it takes no more work and its pinned jobs go to the front of the pool (a zone's
    badge to another printer of its zone that can print).

    The badge it is printing finishes (or is released with its true outcome). Safe to run twice.
    """

    async def go() -> int:
        redis = target.client()
        try:
            store = Store(redis, target.venue, zone_dead_after_ms=int(target.dead_after * 1000))
            if printer not in await store.printers():
                fail(f"no printer {printer!r} has ever run in venue {target.venue}", 1)
            return await store.drain(printer, "resume" if resume else "drain", operator())
        finally:
            await redis.aclose()

    moved = run_async(go())
    if resume:
        click.echo(f"{printer}: back in service")
    else:
        click.echo(f"{printer}: drained; {moved} pinned job(s) handed on (to their zone's printers, else the pool)")


@click.command()
@fleet_options
@click.argument("printer")
@click.option("--force", is_flag=True, help="Reclaim even though its agent is still beating.")
def reclaim(target: Target, printer: str, force: bool) -> None:
    """Hand a dead printer's held and pinned jobs to its peers (they do this by themselves after 3 missed beats).

    Refuses while the printer's agent is still beating, unless --force. Safe to run twice.
    """

    async def go() -> tuple[Reclaimed, float | None]:
        redis = target.client()
        try:
            dead_ms = int(target.dead_after * 1000)
            store = Store(redis, target.venue, zone_dead_after_ms=dead_ms)
            if printer not in await store.printers():
                fail(f"no printer {printer!r} has ever run in venue {target.venue}", 1)
            score = await redis.zscore(enc(store.keys.hb), enc(printer))
            age = None if score is None else (await store.server_ms() - float(score)) / 1000
            result = await store.reclaim(printer, operator(), None if force else dead_ms)
            if result.kind is ReclaimKind.GONE:
                # Not beating at all (stopped, or reclaimed before): whatever it still holds can safely move.
                result = await store.reclaim(printer, operator(), None)
            return result, age
        finally:
            await redis.aclose()

    result, age = run_async(go())
    if result.kind is ReclaimKind.ALIVE:
        fail(f"{printer} is still beating (last beat {age or 0:.1f} s ago): it is alive; use drain, or --force", 1)
    in_hand = shown(result.held) if result.held else "none"
    click.echo(
        f"{printer}: reclaimed; badge in hand: {in_hand}; {result.pinned} pinned job(s) handed on; "
        f"{result.to_zone} job(s) to a printer of their zone, the rest to the pool"
    )


@click.group()
def dlq() -> None:
    """Jobs that cannot be printed (the dead-letter queue)."""


@dlq.command("list")
@fleet_options
def dlq_list(target: Target) -> None:
    """Each dead job with the reason."""

    async def go() -> list[tuple[str, str]]:
        redis = target.client()
        try:
            store = Store(redis, target.venue)
            out = []
            for job_id in await store.dlq():
                try:
                    error = dec(await redis.hget(enc(store.keys.job(job_id)), "error"))
                except ResponseError:  # the record is not a hash: its dead event says so (badge-agent events)
                    error = "its job record is not a hash (written by hand or by a tool): see its dead event"
                out.append((job_id, error))
            return out
        finally:
            await redis.aclose()

    rows = run_async(go())
    for job_id, error in rows:
        click.echo(f"{shown(job_id):<24} {shown(error)}")
    click.echo(f"{len(rows)} job(s) in the DLQ")


@dlq.command("requeue")
@fleet_options
@click.argument("job_ids", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Requeue every job in the DLQ.")
def dlq_requeue(target: Target, job_ids: tuple[str, ...], everything: bool) -> None:
    """Send dead jobs back to the front of the pool (fix their cause first)."""
    if not job_ids and not everything:
        fail("name the job id(s) to requeue, or --all")

    async def go() -> list[tuple[str, RequeueKind]]:
        redis = target.client()
        try:
            store = Store(redis, target.venue)
            ids = await store.dlq() if everything else list(job_ids)
            return [(job_id, await store.requeue(job_id, operator())) for job_id in ids]
        finally:
            await redis.aclose()

    results = run_async(go())
    for job_id, result in results:
        click.echo(f"{shown(job_id)}: {result.replace('_', ' ')}")
    if any(r is not RequeueKind.REQUEUED for _, r in results):
        raise SystemExit(1)
