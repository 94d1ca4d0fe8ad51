"""``board``: serve the venue's live fleet board (one page, pushed updates) for the check-in team's phones."""

from __future__ import annotations

import contextlib

import click

from cli.main import Target, fail, fleet_options, run_async

#: Not the intake's 8080: the board and the intake may run on one Pi.
DEFAULT_LISTEN = "127.0.0.1:8090"


@click.command()
@fleet_options
@click.option(
    "--listen",
    default=DEFAULT_LISTEN,
    show_default=True,
    help="host:port to serve on; 0.0.0.0:8090 lets phones on the venue network open it (port 0 = any free port).",
)
@click.option("--interval", default=0.5, show_default=True, help="How often Redis is read, seconds.")
def board(target: Target, listen: str, interval: float) -> None:
    """A live page of every printer, the pool, the DLQ, recent events and badges that may exist twice."""
    from board.server import serve_board
    from core.settings import split_host_port

    try:
        host, port = split_host_port(listen)
    except ValueError:
        fail(f"--listen: expected host:port, got {listen!r}")
        return

    async def serve() -> None:
        redis = target.client()
        try:
            await serve_board(redis, target.venue, host, port, interval)
        finally:
            await redis.aclose()

    with contextlib.suppress(KeyboardInterrupt):
        run_async(serve())
